// The guide's example program (flow_ecn, configs/flow_ecn.ini) run as users run it, through the
// swemu binary on the bundled pcaps of h0..h3: offline on one switch, in virtual time through
// configs/flow_ecn.topo, and in real time on net_pcap ports, on one lcore and on two. Every run
// must forward every frame, and each flow's first `threshold` (8) packets must leave as they came
// (ECT(0)) and the rest CE-marked, whichever lcore counted them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::Frames;
using testing::ReadFrames;
using testing::RunResult;

const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const std::string kPcaps = SWEMU_SOURCE_DIR "/configs/pcap/";
constexpr std::size_t kThreshold = 8;  // configs/flow_ecn.ini's [program] threshold

std::string TestDir() { return testing::TestDirFor("swemu_flow_ecn_run_test_"); }

class FlowEcnRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
  }
};

std::string HostPcap(int h) { return kPcaps + "h" + std::to_string(h) + "_to_all.pcap"; }

// A flow: IPv4 source and destination and the UDP ports (bytes 26..37; routing keeps them).
std::string FlowOf(const std::vector<uint8_t>& frame) {
  return std::string(frame.begin() + 26, frame.begin() + 38);
}

// Each flow's ECN codepoints in the order its frames appear in `pcaps`.
std::map<std::string, std::vector<uint8_t>> EcnByFlow(const std::vector<std::string>& pcaps) {
  std::map<std::string, std::vector<uint8_t>> flows;
  for (const std::string& pcap : pcaps) {
    for (const auto& frame : ReadFrames(pcap)) flows[FlowOf(frame)].push_back(frame[15] & 3);
  }
  return flows;
}

// What flow_ecn must send for the bundled inputs: per flow, kThreshold ECT(0) then CE.
std::map<std::string, std::vector<uint8_t>> Expected() {
  std::map<std::string, std::vector<uint8_t>> flows =
      EcnByFlow({HostPcap(0), HostPcap(1), HostPcap(2), HostPcap(3)});
  for (auto& [flow, ecn] : flows) {
    for (std::size_t i = 0; i < ecn.size(); ++i) {
      EXPECT_EQ(ecn[i], 2) << "the bundled pcaps send ECT(0)";
      ecn[i] = i < kThreshold ? 2 : 3;
    }
  }
  return flows;
}

void ExpectMarkedPerFlow(const std::string& out_prefix) {
  std::vector<std::string> outs;
  for (int p = 0; p < 4; ++p) outs.push_back(out_prefix + std::to_string(p) + ".pcap");
  const auto expected = Expected();
  std::size_t marked = 0;
  for (const auto& [flow, ecn] : expected) marked += ecn.size() > kThreshold ? ecn.size() - kThreshold : 0;
  EXPECT_GT(marked, 0u);
  EXPECT_EQ(EcnByFlow(outs), expected);
}

TEST_F(FlowEcnRunTest, OfflineOnOneSwitch) {
  std::string ins;
  for (int h = 0; h < 4; ++h) ins += " --in " + std::to_string(h) + "=" + HostPcap(h);
  RunResult run = testing::RunSwemuIn(TestDir(), "--config " + kConfigs + "flow_ecn.ini --offline" +
                                                     ins + " --out-dir " + TestDir() + "out");
  ASSERT_EQ(run.status, 0) << run.err;
  ExpectMarkedPerFlow(TestDir() + "out/port");
}

TEST_F(FlowEcnRunTest, InVirtualTimeThroughATopology) {
  std::string ins;
  for (int h = 0; h < 4; ++h) ins += " --in edge:" + std::to_string(h) + "=" + HostPcap(h);
  RunResult run = testing::RunSwemuIn(TestDir(), "--topology " + kConfigs +
                                                     "flow_ecn.topo --offline" + ins +
                                                     " --out-dir " + TestDir() + "out");
  ASSERT_EQ(run.status, 0) << run.err;
  ExpectMarkedPerFlow(TestDir() + "out/edge-port");
}

// configs/flow_ecn.ini up to its [eal] section, with the ports on the bundled pcaps (absolute
// paths) writing into the test's directory, on `workers` lcores.
std::string RealTimeConfig(int workers) {
  std::ifstream in(kConfigs + "flow_ecn.ini");
  std::string ini;
  for (std::string line; std::getline(in, line) && line != "[eal]";) {
    ini += (line == "cli = leaf.cli" ? "cli = " + kConfigs + "leaf.cli" : line) + "\n";
  }
  ini += "[dpdk]\nmbufs = 4095\nworkers = " + std::to_string(workers) + "\n";
  for (int p = 0; p < 4; ++p) {
    ini += "[port." + std::to_string(p) + "]\ndevargs = net_pcap" + std::to_string(p) +
           ",rx_pcap=" + HostPcap(p) + ",tx_pcap=" + TestDir() + "rt-port" + std::to_string(p) +
           ".pcap\n";
  }
  const std::string path = TestDir() + "flow_ecn_rt.ini";
  std::ofstream(path) << ini;
  return path;
}

std::string EalArgs(const std::string& lcores) {
  return " -- --no-huge -m 256 --no-pci -l " + lcores + " --file-prefix " +
         testing::DpdkFilePrefix();
}

TEST_F(FlowEcnRunTest, InRealTimeOnPcapPorts) {
  RunResult run = testing::RunSwemuIn(
      TestDir(), "--config " + RealTimeConfig(1) + " --run-for 2s" + EalArgs("0"));
  ASSERT_EQ(run.status, 0) << run.err;
  ExpectMarkedPerFlow(TestDir() + "rt-port");
}

// Two lcores: each flow's cell has one owner (the shard key), so the counts are the same.
TEST_F(FlowEcnRunTest, InRealTimeOnTwoLcores) {
  RunResult run = testing::RunSwemuIn(
      TestDir(), "--config " + RealTimeConfig(2) + " --run-for 2s" + EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  ExpectMarkedPerFlow(TestDir() + "rt-port");
}

}  // namespace
}  // namespace swemu
