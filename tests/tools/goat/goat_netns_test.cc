// GOAT on servers, proven on one machine (root): `swemu-goat publish` for the testbed (workers on
// s1 and s2, the PS on s3), then `swemu --topology goat.topo --backend netns` with `swemu-goat
// worker` and `swemu-goat ps` as run commands. Each host is a network namespace on a veth pair to
// a real-time swemu on net_af_packet, so every packet crosses a kernel network stack as between
// servers: every round's sums exact at every worker, the switches aggregated (the PS received
// their aggregates), and nothing left behind; over kernel UDP sockets, and with the PS and two
// workers on DPDK ports (--port).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <regex>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kGoat = SWEMU_BINARY_DIR "/tools/swemu-goat";

// Every worker of DIR/run reached round `last_round` with every sum exact and none wrong, and
// the PS received switch aggregates.
void ExpectExactRoundsAndSwitchAggregates(const std::string& dir, int workers, int last_round) {
  const std::string counted = std::to_string(workers) + " workers counted.*every sum exact";
  for (int w = 1; w <= workers; ++w) {
    const std::string log =
        ReadText(dir + "run/w" + std::to_string(w) + "-run" + std::to_string(w) + ".log");
    EXPECT_NE(log.find("round " + std::to_string(last_round) + ": "), std::string::npos) << log;
    EXPECT_EQ(std::regex_search(log, std::regex(counted)), true) << log;
    EXPECT_EQ(log.find("WRONG"), std::string::npos) << log;
  }
  const std::string ps = ReadText(dir + "run/ps-run0.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ps, m, std::regex("\\(([0-9]+) switch aggregates"))) << ps;
  EXPECT_GT(std::stoi(m[1].str()), 0) << ps;
}

// Publishes the testbed with 2 workers per switch at 1 Gbit/s into DIR/pub and runs its PS and
// 4 workers (3 rounds each) in namespaces into DIR/run; `extra` gives a host's added options.
RunResult PublishAndRunFourWorkers(const std::string& dir,
                                   const std::function<std::string(const std::string&)>& extra) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunResult pub =
      RunCommandIn(dir, kGoat + " publish --per-switch 2 --link-rate 1G --out-dir " + dir + "pub");
  if (pub.status != 0) return pub;
  const std::string job = dir + "pub/goat.job";
  std::ofstream topo(dir + "pub/netns.topo");
  topo << "[topology]\ninclude = goat.topo\n"
       << "run = ps swemu-goat ps --job " << job << " --idle-exit 2s" << extra("ps") << "\n";
  for (const char* w : {"w1", "w2", "w3", "w4"}) {
    topo << "run = " << w << " sleep 1; swemu-goat worker --job " << job << " --name " << w
         << " --rounds 3 --timeout 10s" << extra(w) << "\n";
  }
  topo.close();
  return RunCommandIn(dir, kSwemuBinary + " --topology " + dir + "pub/netns.topo" +
                               " --backend netns --run-for 50s --out-dir " + dir + "run");
}

TEST(GoatNetns, WorkersAndThePsInNamespacesThroughThreeSwitches) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDirFor("goat_netns_");
  RunResult run = PublishAndRunFourWorkers(dir, [](const std::string&) { return ""; });
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  ExpectExactRoundsAndSwitchAggregates(dir, 4, 2);
  const std::string ps = ReadText(dir + "run/ps-run0.log");
  EXPECT_NE(ps.find("516 fragment-rounds completed"), std::string::npos) << ps;  // 172 x 3
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns")) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name != "swemu-ps" && name != "swemu-sw-s1" && name != "swemu-w1") << name;
  }
}

// Kernel bypass on the servers: the PS and w2 (on s1) and w3 (on s2) on a DPDK port
// (net_af_packet on their eth0, whole frames with the job file's MACs), w1 and w4 on kernel UDP
// sockets; the same exact sums and switch aggregates.
TEST(GoatNetns, ThePsAndWorkersOnDpdkPortsBesideKernelSockets) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDirFor("goat_netns_dpdk_");
  RunResult run = PublishAndRunFourWorkers(dir, [](const std::string& host) {
    return host == "ps" || host == "w2" || host == "w3" ? " --port net_af_packet0,iface=eth0" : "";
  });
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  ExpectExactRoundsAndSwitchAggregates(dir, 4, 2);
  const std::string ps = ReadText(dir + "run/ps-run0.log");
  EXPECT_NE(ps.find("516 fragment-rounds completed"), std::string::npos) << ps;  // 172 x 3
  EXPECT_NE(ps.find("over DPDK port net_af_packet0,iface=eth0"), std::string::npos) << ps;
  for (int w = 1; w <= 4; ++w) {
    const std::string log =
        ReadText(dir + "run/w" + std::to_string(w) + "-run" + std::to_string(w) + ".log");
    const bool dpdk = w == 2 || w == 3;
    EXPECT_NE(log.find(dpdk ? "over DPDK port net_af_packet0" : "over kernel UDP sockets"),
              std::string::npos)
        << log;
  }
}

// The bundled file as docs/cli.md runs it, from the repository's top: configs/goat_testbed's 8
// workers and PS in namespaces, 10 rounds each, every sum exact, the switches aggregating
// (without retransmissions 1,610 switch aggregates, as swemu-goat demo's run of the same job).
TEST(GoatNetns, TheBundledTestbedJobRunsWithOneCommand) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDirFor("goat_netns_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunResult run = RunCommandIn(dir, "cd " SWEMU_SOURCE_DIR " && " + kSwemuBinary +
                                        " --topology configs/goat_netns.topo --backend netns"
                                        " --run-for 60s --out-dir " +
                                        dir + "run");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  ExpectExactRoundsAndSwitchAggregates(dir, 8, 9);
  const std::string ps = ReadText(dir + "run/ps-run0.log");
  EXPECT_NE(ps.find("1720 fragment-rounds completed"), std::string::npos) << ps;  // 172 x 10
}

}  // namespace
}  // namespace swemu::testing
