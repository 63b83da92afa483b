// swemu in real time, run as a subprocess on DPDK's net_pcap vdev ports (no NIC, no hugepages,
// one lcore): frames in from a pcap, through l2l3, out to pcaps; set-up errors; options.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

using testing::ReadText;
using testing::RunResult;
const std::string kSwemu = testing::kSwemuBinary;
const MacAddr kMacA = MacAddr::FromU64(0x000000000001);
const MacAddr kMacB = MacAddr::FromU64(0x000000000002);
const MacAddr kMacUnknown = MacAddr::FromU64(0x0000000000ee);

std::string TestDir() { return testing::TestDirFor("swemu_realtime_test_"); }
std::string FilePrefix() { return testing::DpdkFilePrefix(); }
std::string EalArgs() { return testing::TestEalArgs(); }
RunResult RunSwemu(const std::string& args) { return testing::RunSwemuIn(TestDir(), args); }

std::vector<uint8_t> Frame(const MacAddr& dst, const MacAddr& src, uint16_t id) {
  return FrameBuilder()
      .Eth(dst, src)
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(40 + id)
      .Build();
}

// Two net_pcap ports; the startup script sends kMacB to port 1 and kMacA to port 0. `extra`
// goes after [dpdk] mbufs (more [dpdk] keys, then other sections).
std::string WriteConfig(const std::string& port1_devargs, const std::string& extra = "") {
  const std::string dir = TestDir();
  std::ofstream(dir + "fwd.cli") << "show runtime\n"  // registered by the real-time layer
                                    "table_add dmac forward 00:00:00:00:00:02 => 1\n"
                                    "table_add dmac forward 00:00:00:00:00:01 => 0\n";
  std::ofstream(dir + "rt.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = fwd.cli\n"
                                   "[dpdk]\nmbufs = 4095\n"
                                << extra << "[port.0]\ndevargs = net_pcap0,rx_pcap=" << dir
                                << "in0.pcap,tx_pcap=" << dir
                                << "out0.pcap\n"
                                   "[port.1]\ndevargs = "
                                << port1_devargs << "\n";
  return dir + "rt.ini";
}

class RealtimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
    // A 3000-byte frame does not fit one mbuf's 2048-byte data room: net_pcap chains two.
    std::vector<uint8_t> jumbo = Frame(kMacB, kMacA, 10);
    jumbo.resize(3000);
    in0_ = {Frame(kMacB, kMacA, 1),
            Frame(kMacB, kMacA, 2),
            Frame(kMacUnknown, kMacA, 3),
            Frame(kMacB, kMacA, 4),
            jumbo,
            Frame(kMacUnknown, kMacA, 5),
            Frame(kMacB, kMacA, 6)};
    in1_ = {Frame(kMacA, kMacB, 7), Frame(kMacA, kMacB, 8), Frame(kMacA, kMacB, 9)};
    WritePcap(TestDir() + "in0.pcap", in0_);
    WritePcap(TestDir() + "in1.pcap", in1_);
  }
  std::string PcapPort1() const {
    return "net_pcap1,rx_pcap=" + TestDir() + "in1.pcap,tx_pcap=" + TestDir() + "out1.pcap";
  }

  std::vector<std::vector<uint8_t>> in0_;
  std::vector<std::vector<uint8_t>> in1_;

  // What a run forwarded: the frames in each out pcap, and the summary's counters.
  void ExpectForwarded(const RunResult& run) const;
};

TEST_F(RealtimeTest, PcapPortsForwardExactlyTheExpectedFrames) {
  RunResult run = RunSwemu("--config " + WriteConfig(PcapPort1()) + " --run-for 2s" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  ExpectForwarded(run);
  // Ports shaped to the default 10G: every frame waits for its turn in the TM.
  EXPECT_NE(run.out.find("queued 0, cut through 0, multicast copies 0\n"), std::string::npos)
      << run.out;
}

// Unshaped ports are idle whenever a burst arrives: every forwarded frame cuts through the TM,
// unless [dpdk] cut_through is off; the frames and counters are the same either way.
TEST_F(RealtimeTest, UnshapedPortsCutThroughUnlessTurnedOff) {
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "cut_through on" : "cut_through off");
    std::filesystem::remove(TestDir() + "out0.pcap");
    std::filesystem::remove(TestDir() + "out1.pcap");
    const std::string extra =
        std::string("cut_through = ") + (on ? "on" : "off") + "\n[tm]\nport_rate = 0\n";
    RunResult run =
        RunSwemu("--config " + WriteConfig(PcapPort1(), extra) + " --run-for 2s" + EalArgs());
    ASSERT_EQ(run.status, 0) << run.err;
    ExpectForwarded(run);
    EXPECT_NE(run.out.find(on ? "queued 0, cut through 7, " : "queued 0, cut through 0, "),
              std::string::npos)
        << run.out;
  }
}

void RealtimeTest::ExpectForwarded(const RunResult& run) const {
  std::vector<std::vector<uint8_t>> to_port1 = {in0_[0], in0_[1], in0_[3], in0_[6]};
  EXPECT_EQ(ReadFrames(TestDir() + "out1.pcap"), to_port1);
  EXPECT_EQ(ReadFrames(TestDir() + "out0.pcap"), in1_);
  // Per-port summary: port 0 received 7 and sent 3, port 1 received 3 and sent 4.
  std::istringstream lines(run.out);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) {
    if (line.find("net_pcap") != std::string::npos) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), 2u) << run.out;
  auto fields = [](const std::string& row) {
    std::istringstream in(row);
    return std::vector<std::string>(std::istream_iterator<std::string>(in), {});
  };
  EXPECT_EQ(fields(rows[0])[2], "7") << rows[0];
  EXPECT_EQ(fields(rows[0])[4], "3") << rows[0];
  EXPECT_EQ(fields(rows[1])[2], "3") << rows[1];
  EXPECT_EQ(fields(rows[1])[4], "4") << rows[1];
  EXPECT_NE(run.out.find("drops: table_miss 2, multi_segment_frame 1\n"), std::string::npos)
      << run.out;
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

TEST_F(RealtimeTest, BadDevargsExitTwoWithOneLine) {
  RunResult run = RunSwemu("--config " + WriteConfig("net_foo0") + " --run-for 1s" + EalArgs());
  EXPECT_EQ(run.status, 2);
  // EAL logs its own complaint; swemu's line is the only one.
  EXPECT_EQ(run.err, "swemu: port 1: devargs net_foo0: no such driver\n");
  EXPECT_FALSE(std::filesystem::exists(TestDir() + "out0.pcap"));
}

// A driver that refuses its device logs several lines (its own, EAL's "cannot attach"), and
// EAL's start-up prints notices: a set-up that fails is still one line, carrying the driver's
// reason, and nothing on stdout.
TEST_F(RealtimeTest, ADriverThatRefusesItsDeviceGivesOneLineWithItsReason) {
  RunResult run = RunSwemu("--config " + WriteConfig("net_af_packet9,iface=swemu-noif") +
                           " --run-for 1s" + EalArgs());
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err.rfind("swemu: port 1: devargs net_af_packet9,iface=swemu-noif: probe "
                          "failed: the driver refused the device (",
                          0),
            0u)
      << run.err;
  EXPECT_NE(run.err.find("No such device)\n"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.out, "") << run.out;
}

TEST_F(RealtimeTest, BadEalArgumentExitsTwo) {
  RunResult run = RunSwemu("--config " + WriteConfig(PcapPort1()) + EalArgs() + " --bogus");
  EXPECT_EQ(run.status, 2);
  // One line naming the argument, not EAL's usage text.
  EXPECT_EQ(run.err.rfind("swemu: EAL: unrecognized option '--bogus'", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.out, "") << run.out;
}

TEST_F(RealtimeTest, BusyPollAndStatsIntervalAreAccepted) {
  RunResult run = RunSwemu("--config " + WriteConfig(PcapPort1()) +
                           " --busy-poll --run-for 1s --stats-interval 0.3" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(ReadFrames(TestDir() + "out0.pcap"), in1_);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = run.out.find("stats: port 0 rx ", at)) != std::string::npos;
       ++at) {
    ++lines;
  }
  EXPECT_GE(lines, 2u) << run.out;
  EXPECT_LE(lines, 4u) << run.out;
}

// --stats-stages: after each stats line, the per-stage cycles of the sampled loops, named as
// the resource report names the stages (here l2l3 on two net_null ports: endless all-zero
// frames, bridged by their destination MAC, which misses the dmac table).
TEST_F(RealtimeTest, StatsStagesPrintsCyclesPerStage) {
  const std::string dir = TestDir();
  std::ofstream(dir + "null.ini")
      << "[switch]\nports = 2\nprogram = l2l3\n[tm]\nport_rate = 0\n"
         "[dpdk]\nmbufs = 4095\n"
         "[port.0]\ndevargs = net_null0\n[port.1]\ndevargs = net_null1\n";
  RunResult run = RunSwemu("--config " + dir +
                           "null.ini --run-for 1.5s --stats-interval 0.5 "
                           "--stats-stages" +
                           EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string& out = run.out;
  const std::size_t first = out.find("  per stage, over the sampled loops: ");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find(" packets in, ", first), std::string::npos) << out;
  for (const char* row :
       {"  parser ", "    ingress stage 0: table dmac, table router_mac, table qos",
        "  ingress program logic", "  tm enqueue", "  deparser"}) {
    EXPECT_NE(out.find(row, first), std::string::npos) << row << "\n" << out;
  }
  // Packets were sampled: the line's count is not 0.
  EXPECT_EQ(out.find("sampled loops: 0 packets"), std::string::npos) << out;
  RunResult alone =
      RunSwemu("--config " + dir + "null.ini --run-for 1s --stats-stages" + EalArgs());
  EXPECT_EQ(alone.status, 2);
  EXPECT_EQ(alone.err, "swemu: --stats-stages: only with --stats-interval\n");
}

// swemu-cli against a running switch: a table entry added and dumped while the lcore runs,
// a bad command refused, the socket's mode 0600.
TEST_F(RealtimeTest, ControlSocketChangesTablesLive) {
  const std::string dir = TestDir();
  const std::string sock = dir + "live.sock";
  const std::string start = "(" + kSwemu + " --control-socket " + sock + " --config " +
                            WriteConfig(PcapPort1()) + " --run-for 3s" + EalArgs() + " >" + dir +
                            "stdout 2>" + dir + "stderr </dev/null; echo $? >" + dir + "status) &";
  ASSERT_EQ(std::system(start.c_str()), 0);
  struct stat st = {};
  for (int i = 0; i < 250 && lstat(sock.c_str(), &st) != 0; ++i) usleep(20000);
  ASSERT_TRUE(S_ISSOCK(st.st_mode)) << ReadText(dir + "stderr");
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto cli = [&](const std::string& command) {
    const std::string line = SWEMU_BINARY_DIR "/tools/swemu-cli --socket " + sock + " '" + command +
                             "' >" + dir + "cli.out 2>&1";
    int raw = std::system(line.c_str());
    return std::make_pair(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ReadText(dir + "cli.out"));
  };
  auto added = cli("table_add dmac forward 00:00:00:00:00:99 => 1");
  EXPECT_EQ(added.first, 0) << added.second;
  EXPECT_EQ(added.second, "Entry has been added with handle 2\n");
  auto dump = cli("table_dump dmac");
  EXPECT_NE(dump.second.find("00:00:00:00:00:99"), std::string::npos) << dump.second;
  auto bad = cli("table_add dmac fly 1 => 1");
  EXPECT_EQ(bad.first, 1) << bad.second;
  EXPECT_EQ(cli("table_dump dmac").second, dump.second);  // the bad command changed nothing
  // After counter_reset the shutdown summary still adds up: its drops count from the start,
  // as the device's rx/tx do (it once mixed the two: frames went unaccounted).
  EXPECT_EQ(cli("counter_reset").first, 0);
  for (int i = 0; i < 500 && !std::filesystem::exists(dir + "status"); ++i) usleep(20000);
  usleep(20000);
  EXPECT_EQ(ReadText(dir + "status"), "0\n") << ReadText(dir + "stderr");
  const std::string summary = ReadText(dir + "stdout");
  EXPECT_NE(summary.find("drops: table_miss 2, multi_segment_frame 1\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("counter_reset ran 1 times"), std::string::npos) << summary;
  EXPECT_FALSE(std::filesystem::exists(sock));  // removed at shutdown
  std::error_code ignored;
  std::filesystem::remove_all("/var/run/dpdk/" + FilePrefix(), ignored);
}

// --control-tcp 0 lets the kernel choose the port: swemu says which, or nobody could connect.
TEST_F(RealtimeTest, ControlTcpPortZeroSaysWhichPortItBound) {
  RunResult run = RunSwemu("--config " + WriteConfig(PcapPort1()) +
                           " --control-tcp 0 --run-for 1s" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string prefix = "control: listening on tcp 127.0.0.1:";
  const std::size_t at = run.out.find(prefix);
  ASSERT_NE(at, std::string::npos) << run.out;
  const int port = std::atoi(run.out.c_str() + at + prefix.size());
  EXPECT_GT(port, 0) << run.out;
}

TEST_F(RealtimeTest, RunForMustBeADuration) {
  RunResult run = RunSwemu("--config " + WriteConfig(PcapPort1()) + " --run-for soon");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err.rfind("swemu: --run-for: ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

}  // namespace
}  // namespace swemu
