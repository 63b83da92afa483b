// swemu-plink demo as users run it, in real time: three switches (a spine and two racks) in one
// swemu process with the hosts over virtio_user, a topology file's switches (--topology), and the
// kernel-UDP fallback on loopback. Every host's result must be the exact sum, the probes must all
// be answered, and the payload bytes across racks must be Table 1's. Times are printed, never
// compared with a bound: on a busy 2-core machine (or under AddressSanitizer) a reduction takes
// several times what it takes on an idle one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <vector>

#include "swemu/switch_config.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";

std::string Dir() {
  const std::string dir = TestDirFor("plink_demo_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The switch file at `path` reads back, and starts each listed port at its rate; `linked` is a
// port that has its own [port.N] rate (a link's end).
void ExpectPortRates(const std::string& path, const std::map<PortId, uint64_t>& rates,
                     PortId linked) {
  Result<LoadedSwitchConfig> ini = LoadSwitchConfig(path);
  ASSERT_TRUE(ini.ok()) << ini.message();
  for (const auto& [port, bps] : rates) {
    EXPECT_EQ(ini->config.tm.PortRateBps(port), bps) << path << " port " << port;
  }
  const std::vector<PortRate>& own = ini->config.tm.port_rates;
  EXPECT_TRUE(std::any_of(own.begin(), own.end(), [&](const PortRate& r) {
    return r.port == linked;
  })) << path << " port " << linked;
}

struct Row {
  bool found = false;
  double ms = 0;
  uint64_t retransmissions = 0, cross = 0, total = 0;
};

Row Reduction(const std::string& out, const std::string& name) {
  std::smatch m;
  const std::regex re(name +
                      " +([0-9.]+) ms +([0-9]+) retransmissions +([0-9]+) bytes across racks "
                      "\\(([0-9]+) in all\\)\n");
  Row row;
  if (!std::regex_search(out, m, re)) return row;
  row.found = true;
  row.ms = std::stod(m[1].str());
  row.retransmissions = std::stoull(m[2].str());
  row.cross = std::stoull(m[3].str());
  row.total = std::stoull(m[4].str());
  return row;
}

// The counts every run must show, whatever the machine: 2 racks (C) of 4 hosts (N), a buffer S of
// 256 KB (256000 B): 2LHA over the racks moves 2(C-1)S across racks, FA 2N(C-1)S, both
// 2(NC-1)S in all; every pair of the 8 hosts answered; exact sums.
void ExpectTableOne(const RunResult& run) {
  const std::string& out = run.out;
  EXPECT_NE(out.find("7 rounds of disjoint pairs, 16 probes per pair, 28 of 28 pairs answered"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("every host's result equals the exact sum in all three reductions"),
            std::string::npos)
      << out;
  const uint64_t s = 256000;
  const Row fa = Reduction(out, "flat aggregation");
  const Row racks = Reduction(out, "2LHA, the racks");
  const Row groups = Reduction(out, "2LHA, ProbeEmbed groups");
  ASSERT_TRUE(fa.found && racks.found && groups.found) << out;
  EXPECT_EQ(racks.cross, 2 * (2 - 1) * s) << out;
  EXPECT_EQ(fa.cross, 2 * 4 * (2 - 1) * s) << out;
  EXPECT_EQ(racks.total, 2 * (4 * 2 - 1) * s) << out;
  EXPECT_EQ(fa.total, racks.total) << out;
  EXPECT_EQ(groups.total, racks.total) << out;
  EXPECT_GT(racks.ms, 0) << out;
}

TEST(PlinkDemo, RacksOfSwemuProcessesReduceExactlyWithTableOnesTraffic) {
  if (geteuid() != 0) GTEST_SKIP() << "DPDK's vhost-user and virtio_user ports need root here";
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kPlink + " demo --buffer 256KB --out-dir " + dir + "demo");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("8 hosts in 2 racks of 4 under one spine (3 switches in one swemu "
                         "process"),
            std::string::npos)
      << run.out;
  ExpectTableOne(run);
  EXPECT_NE(run.out.find("PAIA: raw probes "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("groups: 3 (k = round(sqrt(n)))"), std::string::npos) << run.out;
  // What the switches ran: the rack's hosts down, the others up its uplink; shaped from their
  // creation by their files, not by commands.
  const std::string cli = ReadText(dir + "demo/rack0.cli");
  EXPECT_NE(cli.find("table_add dmac forward 02:00:00:00:03:05 => 4"), std::string::npos) << cli;
  EXPECT_EQ(cli.find("set_port_rate"), std::string::npos) << cli;
  ExpectPortRates(dir + "demo/rack0.ini", {{0, 100'000'000}, {4, 100'000'000}}, 4);
  ExpectPortRates(dir + "demo/spine.ini", {{0, 100'000'000}, {1, 100'000'000}}, 1);
  // Rack 1's uplink is end 1 of the spine's second ring link, in the one swemu process.
  EXPECT_NE(ReadText(dir + "demo/rack1.ini").find("devargs = swemu_link:l1:1"), std::string::npos);
  EXPECT_NE(ReadText(dir + "demo/spine.ini").find("devargs = swemu_link:l1:0"), std::string::npos);
  // The uplinks keep their delay (20 us each way, on both ring ends), so the probes see the
  // racks: a round trip across racks is farther than one in a rack.
  EXPECT_NE(ReadText(dir + "demo/rack1.ini").find("devargs = swemu_link:l1:1\ndelay = 20us"),
            std::string::npos);
  EXPECT_NE(ReadText(dir + "demo/spine.ini").find("devargs = swemu_link:l1:0\ndelay = 20us"),
            std::string::npos);
  std::smatch rtt;
  ASSERT_TRUE(std::regex_search(run.out, rtt,
                                std::regex(R"(median: (\d+) us in a rack, (\d+) us across racks)")))
      << run.out;
  EXPECT_GT(std::stoi(rtt[2]), std::stoi(rtt[1]) + 40) << run.out;  // 80 us of delay, less noise
  // The process watched: the contention line covers its lcore too.
  EXPECT_NE(run.out.find("; swemu's lcore: "), std::string::npos) << run.out;
  // Every switch stopped cleanly, its counters in the process's log.
  const std::string log = ReadText(dir + "demo/swemu.log");
  for (const char* sw : {"spine", "rack0", "rack1"}) {
    EXPECT_NE(log.find("switch " + std::string(sw)), std::string::npos) << sw << ": " << log;
  }
}

// Another system's topology file (configs/leaf_spine.topo: two leaves of two hosts under a
// spine): every switch of the file in one swemu process, a host's rack its leaf, Table 1's bytes
// for N = 2 hosts in C = 2 racks, exact sums.
TEST(PlinkDemo, RunsOnATopologyFilesSwitches) {
  if (geteuid() != 0) GTEST_SKIP() << "DPDK's vhost-user and virtio_user ports need root here";
  const std::string dir = Dir();
  RunResult run =
      RunCommandIn(dir, kPlink + " demo --buffer 256KB --out-dir " + dir +
                            "demo --topology " SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("4 hosts in 2 racks of "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(3 switches in one swemu process, l2l3)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("6 of 6 pairs answered"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("every host's result equals the exact sum in all three reductions"),
            std::string::npos)
      << run.out;
  const uint64_t s = 256000;
  const Row fa = Reduction(run.out, "flat aggregation");
  const Row racks = Reduction(run.out, "2LHA, the racks");
  ASSERT_TRUE(fa.found && racks.found) << run.out;
  EXPECT_EQ(racks.cross, 2 * (2 - 1) * s) << run.out;
  EXPECT_EQ(fa.cross, 2 * 2 * (2 - 1) * s) << run.out;
  EXPECT_EQ(racks.total, 2 * (2 * 2 - 1) * s) << run.out;
  // The leaves' entries from the file's links: its own hosts down, the others to the spine.
  const std::string cli = ReadText(dir + "demo/leaf1.cli");
  EXPECT_NE(cli.find("table_add dmac forward 02:00:00:00:03:01 => 1"), std::string::npos) << cli;
  EXPECT_NE(cli.find("table_add dmac forward 02:00:00:00:03:03 => 2"), std::string::npos) << cli;
  EXPECT_EQ(cli.find("set_port_rate"), std::string::npos) << cli;
  ExpectPortRates(dir + "demo/leaf1.ini", {{0, 10'000'000'000}, {2, 10'000'000'000}}, 2);
}

TEST(PlinkDemo, KernelUdpOnLoopbackReducesExactlyAndSaysLocalityIsFlat) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kPlink + " demo --transport kernel-udp --buffer 256KB");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("over kernel UDP on loopback"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("locality is flat here"), std::string::npos) << run.out;
  ExpectTableOne(run);
}

// A run that cannot finish in --timeout ends with one line naming what was left, exit 1, and
// leaves no switch running.
TEST(PlinkDemo, ATimeoutEndsWithOneLineNamingWhatIsLeft) {
  if (geteuid() != 0) GTEST_SKIP() << "DPDK's vhost-user and virtio_user ports need root here";
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kPlink + " demo --timeout 1ms --out-dir " + dir + "demo");
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("probes: not done within --timeout 1ms: round 1 of 7, h0 h1 h2 h3 "
                         "still probing"),
            std::string::npos)
      << run.err;
  for (const char* sw : {"spine", "rack0", "rack1"}) {
    EXPECT_NE(ReadText(dir + "demo/swemu.log").find("switch " + std::string(sw)), std::string::npos)
        << sw << " did not stop with its summary";
  }
  RunResult kernel = RunCommandIn(dir, kPlink + " demo --transport kernel-udp --timeout 1ms");
  EXPECT_EQ(kernel.status, 1) << kernel.out << kernel.err;
  EXPECT_EQ(std::count(kernel.err.begin(), kernel.err.end(), '\n'), 1) << kernel.err;
}

TEST(PlinkDemo, BadOptionsEndWithOneLineBeforeAnythingIsWritten) {
  const std::string dir = Dir();
  for (const std::string& args :
       {std::string("--racks 0"), std::string("--racks 9"), std::string("--per-rack 17"),
        std::string("--racks 1 --per-rack 1"), std::string("--racks 8 --per-rack 8"),
        std::string("--buffer 3"), std::string("--buffer 1GB"), std::string("--chunk 0"),
        std::string("--chunk 6"), std::string("--chunk 4 --buffer 1MB"),
        std::string("--host-rate 0"), std::string("--uplink-rate fast"),
        std::string("--transport rdma"), std::string("--timeout 0"), std::string("--seed x"),
        std::string("--swemu " + dir + "nothing"), std::string("--bogus"), std::string("stray")}) {
    RunResult run = RunCommandIn(dir, kPlink + " demo --out-dir " + dir + "out " + args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "out")) << args;
  }
  // A topology PLink cannot run, or a shape option beside one.
  std::ofstream(dir + "s.ini") << "[switch]\nname = s\nports = 4\nprogram = l2l3\n";
  std::ofstream(dir + "one.topo") << "[topology]\nswitch = a s.ini\nhost = a:0 name=x\n";
  std::ofstream(dir + "apart.topo") << "[topology]\nswitch = a s.ini\nswitch = b s.ini\n"
                                       "host = a:0 name=x\nhost = b:0 name=y\n";
  std::ofstream(dir + "port.topo") << "[topology]\nswitch = a s.ini\nhost = a:0 name=x\n"
                                      "host = a:7 name=y\n";
  const std::pair<std::string, std::string> topologies[] = {
      {"one.topo", "PLink needs at least two hosts, not 1"},
      {"port.topo", "host y: a has 4 ports, no port 7"},
      {"apart.topo", "hosts x and y cannot reach each other (no links from a to b)"},
      {"none.topo", "--topology " + dir + "none.topo: cannot open topology"},
      {"apart.topo --racks 2",
       "--racks: not with --topology (a topology replaces the shape options)\n"},
      {"apart.topo --per-rack 2", "--per-rack: not with --topology"},
      {"apart.topo --host-rate 1G", "--host-rate: not with --topology"},
      {"apart.topo --uplink-rate 1G", "--uplink-rate: not with --topology"}};
  for (const auto& [args, says] : topologies) {
    RunResult run =
        RunCommandIn(dir, kPlink + " demo --out-dir " + dir + "out --topology " + dir + args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_NE(run.err.find(says), std::string::npos) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "out")) << args;
  }
  RunResult run =
      RunCommandIn(dir, kPlink + " demo --out-dir " + dir + "x/" + std::string(120, 'd'));
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("too long for Unix socket paths"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace swemu::testing
