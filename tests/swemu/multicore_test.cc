// swemu in real time on two lcores ([dpdk] workers = 2, EAL -l 0,1) on net_pcap ports: each
// lcore owns one port; frames cross lcores at RX (shard key) and at egress (port owner).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::Frames;
using testing::ReadFrames;
using testing::WritePcap;

using testing::RunResult;
const MacAddr kMacA = MacAddr::FromU64(0x000000000001);
const MacAddr kMacB = MacAddr::FromU64(0x000000000002);
const MacAddr kMacUnknown = MacAddr::FromU64(0x0000000000ee);
constexpr int kFlows = 8;

std::string TestDir() { return testing::TestDirFor("swemu_multicore_test_"); }
std::string EalArgs(const std::string& lcores) {
  return " -- --no-huge -m 128 --no-pci -l " + lcores + " --file-prefix " +
         testing::DpdkFilePrefix();
}
RunResult RunSwemu(const std::string& args) { return testing::RunSwemuIn(TestDir(), args); }

// Flow = UDP source port; id orders the frames within the flow.
std::vector<uint8_t> Frame(const MacAddr& dst, const MacAddr& src, uint16_t flow, uint16_t id) {
  return FrameBuilder()
      .Eth(dst, src)
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(static_cast<uint16_t>(1000 + flow), 2000)
      .Payload(40)
      .Build();
}

// The UDP source port at offset 14 + 20: the flow.
std::map<int, Frames> ByFlow(const Frames& frames) {
  std::map<int, Frames> flows;
  for (const auto& frame : frames) flows[frame[34] << 8 | frame[35]].push_back(frame);
  return flows;
}

std::string WriteConfig(const std::string& workers) {
  const std::string dir = TestDir();
  std::ofstream(dir + "fwd.cli") << "table_add dmac forward 00:00:00:00:00:02 => 1\n"
                                    "table_add dmac forward 00:00:00:00:00:01 => 0\n";
  std::ofstream(dir + "mc.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = fwd.cli\n"
                                   "[dpdk]\nmbufs = 4095\nworkers = "
                                << workers << "\n[port.0]\ndevargs = net_pcap0,rx_pcap=" << dir
                                << "in0.pcap,tx_pcap=" << dir
                                << "out0.pcap\n[port.1]\ndevargs = net_pcap1,rx_pcap=" << dir
                                << "in1.pcap,tx_pcap=" << dir << "out1.pcap\n";
  return dir + "mc.ini";
}

std::size_t OurLines(const std::string& err) {
  std::istringstream lines(err);
  std::size_t ours = 0;
  for (std::string line; std::getline(lines, line);) ours += line.rfind("swemu: ", 0) == 0;
  return ours;
}

class MulticoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
    Frames in0;
    Frames in1;
    for (uint16_t i = 0; i < 200; ++i) {
      in0.push_back(Frame(kMacB, kMacA, i % kFlows, i));
      to_port1_.push_back(in0.back());
      if (i % 50 == 7) in0.push_back(Frame(kMacUnknown, kMacA, i % kFlows, i));  // table_miss
    }
    for (uint16_t i = 0; i < 100; ++i) {
      in1.push_back(Frame(kMacA, kMacB, i % kFlows, i));
      to_port0_.push_back(in1.back());
    }
    WritePcap(TestDir() + "in0.pcap", in0);
    WritePcap(TestDir() + "in1.pcap", in1);
  }

  Frames to_port0_;
  Frames to_port1_;
};

TEST_F(MulticoreTest, TwoLcoresForwardEveryFrameInFlowOrderWithoutLeak) {
  RunResult run = RunSwemu("--config " + WriteConfig("2") + " --run-for 2s" + EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  const Frames out0 = ReadFrames(TestDir() + "out0.pcap");
  const Frames out1 = ReadFrames(TestDir() + "out1.pcap");
  EXPECT_EQ(ByFlow(out1), ByFlow(to_port1_));  // every frame, each flow in its order
  EXPECT_EQ(ByFlow(out0), ByFlow(to_port0_));
  EXPECT_EQ(out1.size(), to_port1_.size());
  EXPECT_EQ(out0.size(), to_port0_.size());
  EXPECT_NE(run.out.find("real time, 2 lcores)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("drops: table_miss 4\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

// Lines run on replica 0, then on replica 1; a refused line changes neither.
TEST_F(MulticoreTest, ControlCommandsReachEveryLcore) {
  const std::string dir = TestDir();
  const std::string sock = dir + "live.sock";
  const std::string start = "(" + testing::kSwemuBinary + " --control-socket " + sock +
                            " --config " + WriteConfig("2") + " --run-for 2s" + EalArgs("0,1") +
                            " >" + dir + "stdout 2>" + dir + "stderr </dev/null; echo $? >" + dir +
                            "status) &";
  ASSERT_EQ(std::system(start.c_str()), 0);
  struct stat st = {};
  for (int i = 0; i < 250 && lstat(sock.c_str(), &st) != 0; ++i) usleep(20000);
  ASSERT_TRUE(S_ISSOCK(st.st_mode)) << testing::ReadText(dir + "stderr");
  auto cli = [&](const std::string& command) {
    const std::string line = SWEMU_BINARY_DIR "/tools/swemu-cli --socket " + sock + " '" + command +
                             "' >" + dir + "cli.out 2>&1";
    int raw = std::system(line.c_str());
    return std::make_pair(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1,
                          testing::ReadText(dir + "cli.out"));
  };
  auto added = cli("table_add dmac forward 00:00:00:00:00:99 => 1");
  EXPECT_EQ(added.first, 0) << added.second;
  EXPECT_EQ(added.second, "Entry has been added with handle 2\n");
  auto bad = cli("table_add dmac fly 1 => 1");
  EXPECT_EQ(bad.first, 1) << bad.second;
  // The refused line used no handle; had replica 1 refused a line, the answer would be an
  // error naming "lcore 1".
  auto next = cli("table_add dmac forward 00:00:00:00:00:98 => 0");
  EXPECT_EQ(next.first, 0) << next.second;
  EXPECT_EQ(next.second, "Entry has been added with handle 3\n");
  for (int i = 0; i < 250 && !std::filesystem::exists(dir + "status"); ++i) usleep(20000);
  usleep(20000);
  EXPECT_EQ(testing::ReadText(dir + "status"), "0\n") << testing::ReadText(dir + "stderr");
  std::error_code ignored;
  std::filesystem::remove_all("/var/run/dpdk/" + testing::DpdkFilePrefix(), ignored);
}

TEST_F(MulticoreTest, WorkersBeyondTheEalLcoresExitTwoWithOneLine) {
  RunResult run = RunSwemu("--config " + WriteConfig("2") + " --run-for 1s" + EalArgs("0"));
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("dpdk.workers: 2 needs 2 EAL lcores"), std::string::npos) << run.err;
  EXPECT_EQ(OurLines(run.err), 1u) << run.err;  // EAL itself may print its own lines
  EXPECT_FALSE(std::filesystem::exists(TestDir() + "out0.pcap"));
}

TEST_F(MulticoreTest, WorkersMustBeAtLeastOne) {
  RunResult run = RunSwemu("--config " + WriteConfig("0") + " --run-for 1s" + EalArgs("0,1"));
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("dpdk.workers"), std::string::npos) << run.err;
  EXPECT_EQ(OurLines(run.err), 1u) << run.err;
}

}  // namespace
}  // namespace swemu
