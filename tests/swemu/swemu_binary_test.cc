// Runs the built swemu binary as users do: exit status, the one-line errors, output files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

const std::string kSwemu = SWEMU_BINARY_DIR "/swemu/swemu";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const std::string kPcaps = SWEMU_SOURCE_DIR "/configs/pcap/";

using testing::ReadText;
using testing::RunCommandIn;
using testing::RunResult;

// The current test's own directory, emptied when the test starts (see SwemuBinaryTest).
std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir() + "swemu_binary_test_" + info->name() + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

class SwemuBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::remove_all(TestDir()); }
};

RunResult RunSwemu(const std::string& args) {
  const std::string dir = TestDir() + "run/";
  std::filesystem::create_directories(dir);
  return RunCommandIn(dir, kSwemu + " " + args);
}

std::string LeafInputs() {
  std::string args;
  for (int h = 0; h < 4; ++h) {
    args += " --in " + std::to_string(h) + "=" + kPcaps + "h" + std::to_string(h) + "_to_all.pcap";
  }
  return args;
}

std::string FabricInputs() {
  return " --in leaf1:0=" + kPcaps + "h0_to_all.pcap --in leaf1:1=" + kPcaps +
         "h1_to_all.pcap --in leaf2:0=" + kPcaps + "h2_to_all.pcap --in leaf2:1=" + kPcaps +
         "h3_to_all.pcap";
}

uint64_t Records(const std::string& path) {
  Result<uint64_t> count = CountPcapRecords(path);
  EXPECT_TRUE(count.ok()) << count.message();
  return count.ok() ? *count : 0;
}

TEST_F(SwemuBinaryTest, VersionAndHelp) {
  RunResult version = RunSwemu("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("swemu ", 0), 0u) << version.out;
  RunResult help = RunSwemu("--help");
  EXPECT_EQ(help.status, 0);
  for (const char* option : {"--config", "--topology", "--offline", "--in", "--out-dir", "--seed",
                             "--show-resources", "--quiet"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
  }
}

// Every tool's --help ends with examples a user can run: swemu's, every swemu-* target of tools/
// (SWEMU_TOOLS, from tests/CMakeLists.txt, so a new tool is checked without a line here), and
// the subcommands below.
TEST_F(SwemuBinaryTest, EveryToolsHelpShowsExamples) {
  const std::string tools = SWEMU_BINARY_DIR "/tools/";
  std::vector<std::string> commands = {kSwemu + " --help"};
  std::stringstream tool_list(SWEMU_TOOLS);
  for (std::string tool; std::getline(tool_list, tool, ',');) {
    commands.push_back(tools + tool + " --help");
  }
  // The derived list is not empty by mistake: the tools every build has are in it.
  for (const char* tool : {"swemu-gen", "swemu-cli", "swemu-analyze", "swemu-atp"}) {
    EXPECT_NE(std::string(SWEMU_TOOLS).find(tool), std::string::npos) << tool;
  }
  for (const char* subcommand :
       {"swemu-atp demo", "swemu-atp sim", "swemu-atp publish", "swemu-atp worker",
        "swemu-atp ps", "swemu-goat plan", "swemu-goat sim",
        "swemu-goat publish", "swemu-goat demo", "swemu-plink probe", "swemu-plink experiment",
        "swemu-plink demo", "swemu-plink publish", "swemu-plink node"}) {
    commands.push_back(tools + subcommand + " --help");
  }
  for (const std::string& command : commands) {
    const std::string dir = TestDir() + "help/";
    std::filesystem::create_directories(dir);
    RunResult run = RunCommandIn(dir, command);
    EXPECT_EQ(run.status, 0) << command << run.err;
    EXPECT_NE(run.out.find("example"), std::string::npos) << command << "\n" << run.out;
  }
}

TEST_F(SwemuBinaryTest, WithoutOfflineRealTimeNeedsDpdkPorts) {
  RunResult run = RunSwemu("--config " + kConfigs + "leaf.ini");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "swemu: " + kConfigs +
                         "leaf.ini: no [port.N] devargs: real time needs at least one DPDK port (or add "
                         "--offline to run it in virtual time on pcaps)\n");
}

TEST_F(SwemuBinaryTest, ShowResourcesPrintsTheReport) {
  RunResult run = RunSwemu("--config " + kConfigs + "leaf.ini --show-resources");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("ipv4_lpm"), std::string::npos) << run.out;
}

// Every bundled switch config loads, its startup script runs and its program fits.
TEST_F(SwemuBinaryTest, EveryBundledConfigLoads) {
  for (const char* config :
       {"leaf.ini", "tor.ini", "ring.ini", "ring_l2l3.ini", "ci_vhost.ini", "pcap_rt.ini",
        "leaf_spine/leaf1.ini", "leaf_spine/spine.ini", "atp_rack.ini", "pcn.ini", "dlcp.ini",
        "dlcp_netns.ini"}) {
    RunResult run = RunSwemu("--config " + kConfigs + config + " --show-resources");
    EXPECT_EQ(run.status, 0) << config << ": " << run.err;
    EXPECT_NE(run.out.find(": fits"), std::string::npos) << config << ": " << run.out;
  }
}

TEST_F(SwemuBinaryTest, SingleSwitchWritesEveryPortAndCounters) {
  const std::string out = TestDir() + "out";
  RunResult run =
      RunSwemu("--config " + kConfigs + "leaf.ini --offline" + LeafInputs() + " --out-dir " + out);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  uint64_t in = 0, delivered = 0;
  for (int p = 0; p < 4; ++p) {
    in += Records(kPcaps + "h" + std::to_string(p) + "_to_all.pcap");
    delivered += Records(out + "/port" + std::to_string(p) + ".pcap");
  }
  EXPECT_GT(in, 0u);
  EXPECT_EQ(delivered, in);  // the bundled traffic is all routable and fits the queues
  const std::string json = ReadText(out + "/counters.json");
  for (const char* key : {"\"switches\"", "\"leaf\"", "\"engine\"", "\"ports\"", "\"drops\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  EXPECT_NE(run.out.find("switch leaf"), std::string::npos) << run.out;
}

// The project's main job: traffic between the leaves crosses the spine.
TEST_F(SwemuBinaryTest, LeafSpineForwardsAcrossTheSpineDeterministically) {
  const std::string dir = TestDir();
  std::string outputs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = dir + "out" + std::to_string(i);
    RunResult run = RunSwemu("--topology " + kConfigs + "leaf_spine.topo --offline" +
                             FabricInputs() + " --out-dir " + out + (i == 1 ? " --quiet" : ""));
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out.empty(), i == 1) << run.out;
    for (const char* file : {"leaf1-port0.pcap", "leaf1-port1.pcap", "leaf2-port0.pcap",
                             "leaf2-port1.pcap", "counters.json"}) {
      outputs[i] += ReadText(out + "/" + file);
    }
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  const std::string out = dir + "out0";
  Result<std::vector<PcapRecord>> at_h2 = ReadPcapFile(out + "/leaf2-port0.pcap");
  ASSERT_TRUE(at_h2.ok()) << at_h2.message();
  int from_leaf1 = 0;
  for (const PcapRecord& r : *at_h2) {
    // IPv4 source 10.0.1.x at bytes 26..29, routed frames come from leaf2's gateway MAC.
    if (r.bytes.size() > 30 && r.bytes[26] == 10 && r.bytes[27] == 0 && r.bytes[28] == 1) {
      ++from_leaf1;
      EXPECT_EQ(r.bytes[11], 0xfe);
    }
  }
  EXPECT_GT(from_leaf1, 0);
  const std::string json = ReadText(out + "/counters.json");
  for (const char* key : {"\"leaf1\"", "\"leaf2\"", "\"spine\"", "\"links\"", "\"engine\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

// --partitions N runs the switches in N partitions at once: every file is the same for every N,
// the telemetry sampled every microsecond too.
TEST_F(SwemuBinaryTest, LeafSpineInPartitionsWritesTheSameFilesForEveryCount) {
  const std::string dir = TestDir();
  std::string outputs[3];
  for (int n = 1; n <= 3; ++n) {
    const std::string out = dir + "p" + std::to_string(n);
    RunResult run = RunSwemu("--topology " + kConfigs + "leaf_spine.topo --offline" +
                             FabricInputs() + " --out-dir " + out + " --quiet --partitions " +
                             std::to_string(n) + " --telemetry " + out +
                             "/telemetry.csv --telemetry-period 1us");
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.err, "");
    for (const char* file : {"leaf1-port0.pcap", "leaf1-port1.pcap", "leaf2-port0.pcap",
                             "leaf2-port1.pcap", "counters.json", "telemetry.csv"}) {
      const std::string text = ReadText(out + "/" + file);
      EXPECT_GT(text.size(), 100u) << file;
      outputs[n - 1] += text;
    }
  }
  EXPECT_TRUE(outputs[1] == outputs[0]) << "2 partitions differ from 1";
  EXPECT_TRUE(outputs[2] == outputs[0]) << "3 partitions differ from 1";
}

struct BadRun {
  std::string args;
  std::string expected;  // somewhere in the one stderr line
};

void ExpectOneLineError(const BadRun& bad, const std::string& out_dir) {
  RunResult run = RunSwemu(bad.args);
  EXPECT_EQ(run.status, 2) << bad.args;
  EXPECT_EQ(run.err.rfind("swemu: ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find(bad.expected), std::string::npos) << bad.args << "\n" << run.err;
  EXPECT_EQ(run.out, "") << bad.args;
  EXPECT_FALSE(std::filesystem::exists(out_dir)) << bad.args;
}

// A topology may give each switch its partition (switch = NAME FILE partition=K): the same files
// as the automatic choice; a link without delay between two of them is refused by name.
TEST_F(SwemuBinaryTest, ATopologyGivesItsOwnPartitions) {
  const std::string dir = TestDir();
  const std::string ls = kConfigs + "leaf_spine/";
  auto topo = [&](const std::string& name, const std::string& spine_delay, bool every) {
    std::ofstream(dir + name) << "[topology]\nswitch = leaf1 " << ls << "leaf1.ini partition=1\n"
                              << "switch = leaf2 " << ls << "leaf2.ini partition=1\n"
                              << "switch = spine " << ls << "spine.ini"
                              << (every ? " partition=0" : "") << "\n"
                              << "link = leaf1:2 spine:0 rate=10G delay=" << spine_delay << "\n"
                              << "link = leaf2:2 spine:1 rate=10G delay=1us\n"
                              << "host = leaf1:0 delay=100ns\nhost = leaf1:1 delay=100ns\n"
                              << "host = leaf2:0 delay=100ns\nhost = leaf2:1 delay=100ns\n";
  };
  topo("given.topo", "1us", true);
  std::string outputs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string out = dir + "out" + std::to_string(i);
    RunResult run = RunSwemu("--topology " + (i == 0 ? dir + "given.topo" : kConfigs + "leaf_spine.topo") +
                             " --offline --quiet --partitions 2" + FabricInputs() + " --out-dir " + out);
    ASSERT_EQ(run.status, 0) << run.err;
    for (const char* file : {"leaf1-port0.pcap", "leaf2-port1.pcap", "counters.json"}) {
      outputs[i] += ReadText(out + "/" + file);
    }
  }
  EXPECT_TRUE(outputs[0] == outputs[1]);
  topo("zero.topo", "0", true);
  topo("some.topo", "1us", false);
  const std::string out = dir + "never";
  for (const BadRun& bad : std::vector<BadRun>{
           {"--topology " + dir + "zero.topo --offline --partitions 2 --out-dir " + out,
            "link leaf1:2 spine:0: 0 ns of delay between partitions 1 and 0"},
           {"--topology " + dir + "some.topo --offline --partitions 2 --out-dir " + out,
            "gives a partition to 2 of its 3 switches"},
           {"--topology " + dir + "given.topo --offline --partitions 1 --out-dir " + out,
            "puts switch leaf1 in partition 1 (0 to 0)"}}) {
    ExpectOneLineError(bad, out);
  }
}

TEST_F(SwemuBinaryTest, BadCommandLinesGiveOneLineAndStatus2) {
  const std::string out = TestDir() + "never";
  const std::string leaf = "--config " + kConfigs + "leaf.ini --offline --out-dir " + out;
  const std::string fabric =
      "--topology " + kConfigs + "leaf_spine.topo --offline --out-dir " + out;
  const std::string h0 = kPcaps + "h0_to_all.pcap";
  for (const BadRun& bad : std::vector<BadRun>{
           {"--bogus", "bogus"},
           {"--offline --out-dir " + out, "--config or --topology"},
           {leaf + " --topology x.topo", "give only one"},
           {"--config /nonexistent/x.ini --offline --out-dir " + out, "/nonexistent/x.ini"},
           {"--config " + kConfigs + "leaf.ini --offline", "--out-dir: required"},
           {leaf + " --seed minus1", "--seed"},
           {leaf + " --in 4=" + h0, "--in 4=" + h0 + ": port 4 out of range"},
           {leaf + " --in x=" + h0, "--in x=" + h0},
           {leaf + " --in 0=" + h0 + " --in 0=" + h0, "already has an input"},
           {leaf + " --in other:0=" + h0, "unknown switch other"},
           {leaf + " --in 0=/nonexistent/in.pcap", "/nonexistent/in.pcap"},
           {fabric + " --in 0=" + h0, "name the switch"},
           {fabric + " --in spine:2=" + h0, "spine:2 is not a host port"},
           {fabric + " --partitions 0", "--partitions: "},
           {fabric + " --partitions x", "--partitions: "},
           {fabric + " --partitions 4", "--partitions 4 partitions for 3 switches"},
           {leaf + " --partitions 2", "--partitions 2 partitions for 1 switch:"},
           {"--topology " + kConfigs + "leaf_spine.topo --partitions 2 --backend netns",
            "--partitions: only with --offline"},
       }) {
    ExpectOneLineError(bad, out);
  }
}

TEST_F(SwemuBinaryTest, BadFilesGiveOneLineAndStatus2BeforeAnyOutput) {
  const std::string dir = TestDir();
  const std::string out = dir + "never";
  std::ofstream(dir + "bad.cli") << "table_add dmac forward 00:00:00:00:00:01 => 0\n"
                                 << "table_add dmac nonsense 1 => 2\n";
  std::ofstream(dir + "bad_cli.ini") << "[switch]\ncli = bad.cli\n";
  std::ofstream(dir + "too_big.ini") << "[budget]\ntables = 1\n";
  std::ofstream(dir + "no_program.ini") << "[switch]\nprogram = nope\n";
  std::ofstream(dir + "bad_value.ini") << "[tm]\nport_rate = quick\n";
  std::ofstream(dir + "bad.topo") << "[topology]\nswitch = a " << kConfigs << "leaf.ini\n"
                                  << "link = a:2 b:0\n";
  std::ofstream(dir + "dot_cli.ini") << "[switch]\ncli = .\n";
  std::ofstream(dir + "dir_switch.topo") << "[topology]\nswitch = a " << dir << "\n";
  const std::string truncated = dir + "truncated.pcap";
  std::string bytes = ReadText(kPcaps + "h0_to_all.pcap");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  auto with = [&](const std::string& ini) {
    return "--config " + dir + ini + " --offline --out-dir " + out;
  };
  for (const BadRun& bad : std::vector<BadRun>{
           {with("bad_cli.ini"), dir + "bad.cli:2: table_add: "},
           {with("too_big.ini"), "tables"},
           {with("no_program.ini"), "nope"},
           {with("bad_value.ini"), "tm.port_rate: \"quick\""},
           {"--topology " + dir + "bad.topo --offline --out-dir " + out, "unknown switch b"},
           {"--config " + kConfigs + "leaf.ini --offline --in 0=" + truncated + " --out-dir " + out,
            truncated},
           // A directory or an endless device is no config, script or topology (they were
           // once read as empty files).
           {"--config " + dir + " --offline --out-dir " + out, "config is a directory"},
           {"--config /dev/zero --offline --out-dir " + out, "/dev/zero: config is a device"},
           {with("dot_cli.ini"), "startup script is a directory"},
           {"--topology " + dir + " --offline --out-dir " + out, "topology is a directory"},
           {"--topology " + dir + "dir_switch.topo --offline --out-dir " + out,
            "config is a directory"},
       }) {
    ExpectOneLineError(bad, out);
  }
}

// Two switches that forward a MAC to each other: the frames circulate for ever. The run ends
// at its event limit (the default, or --max-events), says so, and writes nothing.
TEST_F(SwemuBinaryTest, AForwardingLoopEndsAtTheRunsLimitWithOneLineAndNoOutput) {
  const std::string dir = TestDir();
  std::ofstream(dir + "a.ini") << "[switch]\nname = a\nports = 2\nprogram = l2l3\ncli = a.cli\n";
  std::ofstream(dir + "b.ini") << "[switch]\nname = b\nports = 2\nprogram = l2l3\ncli = b.cli\n";
  std::ofstream(dir + "a.cli") << "table_add dmac forward 00:00:00:00:00:02 => 1\n";
  std::ofstream(dir + "b.cli") << "table_add dmac forward 00:00:00:00:00:02 => 0\n";
  std::ofstream(dir + "loop.topo") << "[topology]\nswitch = a a.ini\nswitch = b b.ini\n"
                                   << "link = a:1 b:0 rate=10G delay=1us\nhost = a:0\n";
  const std::string in = dir + "in.pcap";
  {
    // Ten frames to 00:00:00:00:00:02, 1 us apart.
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(in);
    ASSERT_TRUE(writer.ok()) << writer.message();
    std::vector<uint8_t> frame(64, 0);
    frame[5] = 0x02;
    frame[11] = 0x01;
    frame[12] = 0x88;  // not IP: bridged on its MAC alone
    frame[13] = 0xB5;
    for (int i = 0; i < 10; ++i) (*writer)->Write(1'000'000'000 + i * 1000, frame.data(), 64);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const std::string out = dir + "out";
  const std::string args =
      "--topology " + dir + "loop.topo --offline --in a:0=" + in + " --out-dir " + out;
  std::vector<BadRun> runs = {{args + " --max-events 5000", "stopped after 5000 events"},
                              {args + " --max-virtual-time 1ms", "of virtual time, the run's limit"}};
  // The default limit takes 2-3 minutes in the sanitised Debug build (a second here): that build
  // checks the same path through --max-events, the normal build checks the default.
  if (!testing::kSanitized) runs.push_back({args, "events, the run's limit"});
  // In two partitions (one switch each) the limits are looked at between windows.
  runs.push_back({args + " --partitions 2 --max-events 5000", "events, the run's limit"});
  runs.push_back({args + " --partitions 2 --max-virtual-time 1ms", "the run's limit"});
  for (const BadRun& bad : runs) ExpectOneLineError(bad, out);
}

// A run that fails half-way (here at its event limit) leaves an earlier run's outputs as they
// were: it writes aside and moves its files into place only when it succeeded.
TEST_F(SwemuBinaryTest, AFailingRunLeavesTheEarlierRunsOutputsIntact) {
  const std::string out = TestDir() + "out";
  const std::string args =
      "--config " + kConfigs + "leaf.ini --offline" + LeafInputs() + " --out-dir " + out;
  ASSERT_EQ(RunSwemu(args).status, 0);
  std::vector<std::pair<std::string, std::string>> before;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    before.emplace_back(entry.path().string(), ReadText(entry.path().string()));
  }
  ASSERT_EQ(before.size(), 5u);  // four ports and counters.json
  const RunResult failed = RunSwemu(args + " --max-events 100");
  EXPECT_EQ(failed.status, 2);
  EXPECT_NE(failed.err.find("no output was written"), std::string::npos) << failed.err;
  std::size_t after = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    ++after;
    const std::string path = entry.path().string();
    bool found = false;
    for (const auto& [p, text] : before) {
      if (p == path) {
        found = true;
        EXPECT_EQ(ReadText(path), text) << path;
      }
    }
    EXPECT_TRUE(found) << "left behind: " << path;
  }
  EXPECT_EQ(after, before.size());
}

// Input times from 2^31 s on come out where they went in, not wrapped; a time so late that
// the output cannot hold it is an error, not a frame delivered to no one.
TEST_F(SwemuBinaryTest, LatePcapTimesAreKeptOrRefusedNeverWrapped) {
  const std::string dir = TestDir();
  Result<std::vector<PcapRecord>> h0 = ReadPcapFile(kPcaps + "h0_to_all.pcap");
  ASSERT_TRUE(h0.ok() && !h0->empty());
  const auto write_at = [&](const std::string& path, TimeNs t) {
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    (*writer)->Write(t, (*h0)[0].bytes.data(), static_cast<uint32_t>((*h0)[0].bytes.size()));
    ASSERT_TRUE((*writer)->Close().ok());
  };
  write_at(dir + "late.pcap", 3'000'000'000'000'000'000ull);
  write_at(dir + "last.pcap", PcapWriter::kPcapLastNs);
  const RunResult run = RunSwemu("--config " + kConfigs + "leaf.ini --offline --in 0=" + dir +
                                 "late.pcap --out-dir " + dir + "out -q");
  ASSERT_EQ(run.status, 0) << run.err;
  uint64_t frames = 0;
  for (int port = 0; port < 4; ++port) {
    Result<std::vector<PcapRecord>> got =
        ReadPcapFile(dir + "out/port" + std::to_string(port) + ".pcap");
    ASSERT_TRUE(got.ok()) << got.message();
    for (const PcapRecord& r : *got) {
      ++frames;
      EXPECT_GE(r.ts_ns, 3'000'000'000'000'000'000ull);
      EXPECT_LT(r.ts_ns, 3'000'000'001'000'000'000ull);
    }
  }
  EXPECT_GT(frames, 0u);
  ExpectOneLineError({"--config " + kConfigs + "leaf.ini --offline --in 0=" + dir +
                          "last.pcap --out-dir " + dir + "never",
                      "never/port1.pcap: record 1 is at 4294967296 s, past the last time a pcap "
                      "file can hold"},  // the file asked for, not where it was staged
                     dir + "never");
}

}  // namespace
}  // namespace swemu
