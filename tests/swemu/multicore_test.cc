// swemu in real time on two lcores ([dpdk] workers = 2, EAL -l 0,1) on net_pcap ports: each
// lcore owns one port; frames cross lcores at RX (shard key) and at egress (port owner).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

// `extra_ini` goes at the end (whole sections).
std::string WriteConfig(const std::string& workers, const std::string& extra_cli = "",
                        const std::string& extra_ini = "") {
  const std::string dir = TestDir();
  std::ofstream(dir + "fwd.cli") << "table_add dmac forward 00:00:00:00:00:02 => 1\n"
                                    "table_add dmac forward 00:00:00:00:00:01 => 0\n"
                                 << extra_cli;
  std::ofstream(dir + "mc.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = fwd.cli\n"
                                   "[dpdk]\nmbufs = 4095\nworkers = "
                                << workers << "\n[port.0]\ndevargs = net_pcap0,rx_pcap=" << dir
                                << "in0.pcap,tx_pcap=" << dir
                                << "out0.pcap\n[port.1]\ndevargs = net_pcap1,rx_pcap=" << dir
                                << "in1.pcap,tx_pcap=" << dir << "out1.pcap\n"
                                << extra_ini;
  return dir + "mc.ini";
}

// swemu in the background with a control socket, and swemu-cli lines to it.
class LiveSwemu {
 public:
  explicit LiveSwemu(const std::string& args) : dir_(TestDir()), sock_(dir_ + "live.sock") {
    const std::string start = "(" + testing::kSwemuBinary + " --control-socket " + sock_ + " " +
                              args + " >" + dir_ + "stdout 2>" + dir_ +
                              "stderr </dev/null; echo $? >" + dir_ + "status) &";
    EXPECT_EQ(std::system(start.c_str()), 0);
    struct stat st = {};
    for (int i = 0; i < 250 && lstat(sock_.c_str(), &st) != 0; ++i) usleep(20000);
    EXPECT_TRUE(S_ISSOCK(st.st_mode)) << testing::ReadText(dir_ + "stderr");
  }
  // Exit status and output of one line.
  std::pair<int, std::string> Cli(const std::string& command) const {
    const std::string line = SWEMU_BINARY_DIR "/tools/swemu-cli --socket " + sock_ + " '" +
                             command + "' >" + dir_ + "cli.out 2>&1";
    int raw = std::system(line.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, testing::ReadText(dir_ + "cli.out")};
  }
  // Asks `command` until it answers `expected` (the frames still crossing), at most 5 s.
  std::string CliUntil(const std::string& command, const std::string& expected) const {
    std::string answer;
    for (int i = 0; i < 100 && (answer = Cli(command).second) != expected; ++i) usleep(50000);
    return answer;
  }
  // Waits for the exit; its status line ("0\n").
  std::string Wait() const {
    for (int i = 0; i < 300 && !std::filesystem::exists(dir_ + "status"); ++i) usleep(20000);
    usleep(20000);
    std::error_code ignored;
    std::filesystem::remove_all("/var/run/dpdk/" + testing::DpdkFilePrefix(), ignored);
    return testing::ReadText(dir_ + "status");
  }
  std::string out() const { return testing::ReadText(dir_ + "stdout"); }
  std::string err() const { return testing::ReadText(dir_ + "stderr"); }

 private:
  std::string dir_;
  std::string sock_;
};

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

// Unshaped ports: a run whose ingress ran on the lcore that owns its egress port cuts through
// there; one for a peer's port crosses to that lcore's TM as before. Every frame still arrives,
// each flow in order.
TEST_F(MulticoreTest, UnshapedPortsCutThroughOnTheirOwnersLcore) {
  RunResult run = RunSwemu("--config " + WriteConfig("2", "", "[tm]\nport_rate = 0\n") +
                           " --run-for 2s" + EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  const Frames out0 = ReadFrames(TestDir() + "out0.pcap");
  const Frames out1 = ReadFrames(TestDir() + "out1.pcap");
  EXPECT_EQ(ByFlow(out1), ByFlow(to_port1_));
  EXPECT_EQ(ByFlow(out0), ByFlow(to_port0_));
  const std::size_t at = run.out.find("cut through ");
  ASSERT_NE(at, std::string::npos) << run.out;
  const unsigned long cut = std::stoul(run.out.substr(at + 12));
  EXPECT_GT(cut, 0u) << run.out;
  EXPECT_LT(cut, to_port0_.size() + to_port1_.size()) << run.out;  // some crossed lcores
  EXPECT_NE(run.out.find("drops: table_miss 4\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

// Lines run on replica 0, then on replica 1; a refused line changes neither.
TEST_F(MulticoreTest, ControlCommandsReachEveryLcore) {
  LiveSwemu swemu("--config " + WriteConfig("2") + " --run-for 2s" + EalArgs("0,1"));
  auto added = swemu.Cli("table_add dmac forward 00:00:00:00:00:99 => 1");
  EXPECT_EQ(added.first, 0) << added.second;
  EXPECT_EQ(added.second, "Entry has been added with handle 2\n");
  auto bad = swemu.Cli("table_add dmac fly 1 => 1");
  EXPECT_EQ(bad.first, 1) << bad.second;
  // The refused line used no handle; had replica 1 refused a line, the answer would be an
  // error naming "lcore 1".
  auto next = swemu.Cli("table_add dmac forward 00:00:00:00:00:98 => 0");
  EXPECT_EQ(next.first, 0) << next.second;
  EXPECT_EQ(next.second, "Entry has been added with handle 3\n");
  EXPECT_EQ(swemu.Wait(), "0\n") << swemu.err();
}

// Port 0's 204 frames ran ingress on both lcores (8 flows); port 1 is transmitted by lcore 1:
// the answers count them all.
TEST_F(MulticoreTest, ControlAnswersCountTheWholeSwitch) {
  LiveSwemu swemu("--config " + WriteConfig("2") + " --run-for 3s" + EalArgs("0,1"));
  const std::size_t size = to_port1_.front().size();  // every frame
  const std::string tx1 = "port_tx[1]= (" + std::to_string(200 * size) + " bytes, 200 packets)\n";
  EXPECT_EQ(swemu.CliUntil("counter_read port_tx 1", tx1), tx1);
  EXPECT_EQ(swemu.Cli("counter_read port_rx 0").second,
            "port_rx[0]= (" + std::to_string(204 * size) + " bytes, 204 packets)\n");
  EXPECT_EQ(swemu.Cli("show drops").second, "  table_miss 4\n");
  const std::string ports = swemu.Cli("show ports").second;
  char row[2][160];
  std::snprintf(row[0], sizeof(row[0]), "%4u %12zu %12zu %12u %12zu", 0u, std::size_t{204},
                204 * size, 100u, 100 * size);
  std::snprintf(row[1], sizeof(row[1]), "%4u %12zu %12zu %12u %12zu", 1u, std::size_t{100},
                100 * size, 200u, 200 * size);
  EXPECT_NE(ports.find(row[0]), std::string::npos) << ports;
  EXPECT_NE(ports.find(row[1]), std::string::npos) << ports;
  const std::string counters = swemu.Cli("show counters").second;
  EXPECT_NE(counters.find("\"table_miss\": 4"), std::string::npos) << counters;
  EXPECT_NE(counters.find("\"ingress_packets\": 304"), std::string::npos) << counters;
  const std::string runtime = swemu.Cli("show runtime").second;
  EXPECT_NE(runtime.find("lcore 1:\nruntime:"), std::string::npos) << runtime;
  EXPECT_EQ(swemu.Wait(), "0\n") << swemu.err();
}

TEST_F(MulticoreTest, StatsLinesShowEveryLcoresPorts) {
  RunResult run = RunSwemu("--config " + WriteConfig("2") + " --run-for 1s --stats-interval 0.25" +
                           EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = run.out.find("stats: port 0 rx ", at)) != std::string::npos;
       ++at) {
    const std::string line = run.out.substr(at, run.out.find('\n', at) - at);
    EXPECT_NE(line.find("; port 1 rx "), std::string::npos) << line;
    ++lines;
  }
  EXPECT_GE(lines, 2u) << run.out;
  // Over the run the lines add up to what went through (rates x intervals are not exact; the
  // last line shows the drops so far, summed over the lcores).
  EXPECT_NE(run.out.find("drops table_miss 4\n"), std::string::npos) << run.out;
}

// --telemetry with two lcores: each lcore snapshots its own queues through its mailbox; the rows
// are the whole switch's (both ports' queues, whichever lcore owns them).
TEST_F(MulticoreTest, TelemetryHasTheQueuesOfEveryLcore) {
  RunResult run = RunSwemu("--config " + WriteConfig("2") + " --run-for 1s --telemetry " +
                           TestDir() + "t.csv --telemetry-period 100ms" + EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string telemetry = testing::ReadText(TestDir() + "t.csv");
  // Both ports enqueued frames (200 to port 1, 100 to port 0), so both appear, from the
  // samples after the traffic passed on.
  EXPECT_NE(telemetry.find(",0,0,0,0,0,0\n"), std::string::npos) << telemetry;
  EXPECT_NE(telemetry.find(",1,0,0,0,0,0\n"), std::string::npos) << telemetry;
}

// A group of both ports: each copy leaves through its port's owner.
TEST_F(MulticoreTest, MulticastReachesPortsOfBothLcores) {
  const MacAddr group = MacAddr::FromU64(0x77);
  Frames in0;
  for (uint16_t i = 0; i < 50; ++i) in0.push_back(Frame(group, kMacA, i % kFlows, i));
  WritePcap(TestDir() + "in0.pcap", in0);  // in1.pcap: unicast to port 0, as in SetUp
  RunResult run = RunSwemu("--config " +
                           WriteConfig("2",
                                       "table_add dmac multicast 00:00:00:00:00:77 => 1\n"
                                       "mc_mgrp_create 1\nmc_node_create 0 0 1\n"
                                       "mc_node_associate 1 0\n") +
                           " --run-for 2s" + EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  Frames copies0;
  for (const auto& frame : ReadFrames(TestDir() + "out0.pcap")) {
    if (frame[5] == 0x77) copies0.push_back(frame);
  }
  EXPECT_EQ(ByFlow(copies0), ByFlow(in0));
  EXPECT_EQ(ByFlow(ReadFrames(TestDir() + "out1.pcap")), ByFlow(in0));
  EXPECT_NE(run.out.find("drops: none"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

// Each lcore records its ports into its own ring; one writer writes the files.
TEST_F(MulticoreTest, PcapDirRecordsEveryPortInOrder) {
  const std::string pcaps = TestDir() + "rec";
  RunResult run = RunSwemu("--config " + WriteConfig("2") + " --run-for 2s --pcap-dir " + pcaps +
                           EalArgs("0,1"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(ReadFrames(pcaps + "/port0-rx.pcap"), ReadFrames(TestDir() + "in0.pcap"));
  EXPECT_EQ(ReadFrames(pcaps + "/port1-rx.pcap"), ReadFrames(TestDir() + "in1.pcap"));
  EXPECT_EQ(ReadFrames(pcaps + "/port1-tx.pcap"), ReadFrames(TestDir() + "out1.pcap"));
  EXPECT_EQ(ReadFrames(pcaps + "/port0-tx.pcap"), ReadFrames(TestDir() + "out0.pcap"));
  EXPECT_EQ(ByFlow(ReadFrames(pcaps + "/port1-tx.pcap")), ByFlow(to_port1_));
  EXPECT_NE(run.out.find("pcap: recorded 604 frames in " + pcaps + ", pcap_dropped 0"),
            std::string::npos)
      << run.out;
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
