// swemu in real time with per-port effects and recording, run as a subprocess on net_null and
// net_pcap vdevs (no NIC, no hugepages, one lcore): shaping to 1 Gbps, seeded loss, added
// delay, set_port_loss/set_port_delay, and --pcap-dir.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <chrono>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::ReadText;
using testing::RunResult;

std::string TestDir() { return testing::TestDirFor("swemu_effects_test_"); }
std::string EalArgs() { return testing::TestEalArgs(); }
RunResult RunSwemu(const std::string& args) { return testing::RunSwemuIn(TestDir(), args); }

// `wire` patches port 0 <-> port 1; net_null0 is an endless source of 1000-byte frames.
std::string NullConfig(const std::string& port1_keys) {
  const std::string path = TestDir() + "null.ini";
  std::ofstream(path) << "[switch]\nports = 2\nprogram = wire\nseed = 7\n[dpdk]\nmbufs = 4095\n"
                         "[port.0]\ndevargs = net_null0,size=1000\nrate = 0\n"
                         "[port.1]\ndevargs = net_null1\n"
                      << port1_keys;
  return path;
}

// A number after `label` in the summary's port row of net_null1 / the drops line.
uint64_t Field(const std::string& text, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(pattern))) return UINT64_MAX;
  return std::stoull(match[1]);
}

// net_null0 floods port 0; everything goes to port 1, a net_ring that nobody drains, so it soon
// refuses frames and the TM queue of port 1 (256 packets) fills: dir/loop.ini.
void WriteRefusingRingConfig(const std::string& dir) {
  std::ofstream(dir + "loop.cli") << "table_add dmac forward 00:00:00:00:00:00 => 1\n";
  std::ofstream(dir + "loop.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = loop.cli\n"
                                     "[tm]\nport_rate = 0\nqueue_depth = 256\n"
                                     "[dpdk]\nmbufs = 8191\n"
                                     "[port.0]\ndevargs = net_null0\n"
                                     "[port.1]\ndevargs = net_ring0\n";
}

class RealtimeEffectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
  }
};

// The TM serializes (frame + 24 bytes of preamble, IFG and FCS) at the port rate, so 1000-byte
// frames at 1 Gbps leave at 1e9 / (1024 * 8) = 122070 frames/s, 0.977 Gbps of frame bytes.
TEST_F(RealtimeEffectsTest, ShapedPortSendsAtOneGbps) {
  RunResult run = RunSwemu("--config " + NullConfig("rate = 1G\n") +
                           " --run-for 2250ms --stats-interval 250ms" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  // Per stats interval: what the source offered (port 0 rx) and what the shaped port sent
  // (port 1 tx), as line rates: frame + 24 bytes, as the TM shapes (1000-byte frames).
  std::regex line(R"(port 0 rx [0-9.]+ Mpps ([0-9.]+) Gbps.*port 1 rx [0-9.]+ Mpps [0-9.]+ Gbps )"
                  R"(tx [0-9.]+ Mpps ([0-9.]+) Gbps)");
  std::vector<std::pair<double, double>> intervals;
  for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), line);
       it != std::sregex_iterator(); ++it) {
    intervals.emplace_back(std::stod((*it)[1]) * 1024 / 1000, std::stod((*it)[2]) * 1024 / 1000);
  }
  ASSERT_GE(intervals.size(), 6u) << run.out;
  // The shaper is judged only while the source offers more than it lets through: on a loaded
  // machine (the sanitizer build, a fuzzer on the other core) the lcore may not even reach that.
  double sum = 0;
  int judged = 0;
  for (std::size_t i = 1; i < intervals.size(); ++i) {  // the first holds the start-up transient
    EXPECT_LE(intervals[i].second, 1.05) << run.out;    // never faster than the link
    if (intervals[i].first >= 1.2) {
      sum += intervals[i].second;
      ++judged;
    }
  }
  if (judged < 3) GTEST_SKIP() << "the lcore offered under 1.2 Gbps: too slow to test the shaper";
  const double line_rate = sum / judged;
  // The sanitised Debug build's lcore, sharing 2 cores with another test, can fall behind the
  // link (0.94 measured once): there the shaper is held to the upper bound alone.
  if (testing::kSanitized) {
    EXPECT_LE(line_rate, 1.05) << run.out;
  } else {
    EXPECT_NEAR(line_rate, 1.0, 0.05) << run.out;
  }
  std::cout << "[ measured ] shaped egress " << line_rate << " Gbps on the line\n";
}

TEST_F(RealtimeEffectsTest, LossInjectedIsTheConfiguredFraction) {
  RunResult run =
      RunSwemu("--config " + NullConfig("rate = 0\nloss = 10%\n") + " --run-for 1s" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  const uint64_t sent = Field(run.out, R"(net_null1 +\d+ +\d+ +(\d+))");
  const uint64_t lost = Field(run.out, R"(loss_injected (\d+))");
  ASSERT_NE(sent, UINT64_MAX) << run.out;
  ASSERT_NE(lost, UINT64_MAX) << run.out;
  // The tolerance follows the sample: 4 standard deviations of a binomial fraction, so a slow
  // (sanitizer) build that forwards fewer frames is judged as strictly, not more loosely.
  const double n = double(sent + lost);
  ASSERT_GT(n, 5000) << run.out;
  const double tolerance = std::max(0.003, 4 * std::sqrt(0.1 * 0.9 / n));
  EXPECT_NEAR(double(lost) / n, 0.1, tolerance) << run.out;
}

std::vector<uint8_t> Frame(uint16_t id) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(2), MacAddr::FromU64(1))
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(40 + id)
      .Build();
}

std::vector<std::vector<uint8_t>> WriteInput(const std::string& path, int n) {
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < n; ++i) frames.push_back(Frame(static_cast<uint16_t>(i)));
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  EXPECT_TRUE(writer.ok()) << writer.message();
  TimeNs ts = 1000;
  for (const auto& frame : frames) (*writer)->Write(ts += 1000, frame.data(), frame.size());
  EXPECT_TRUE((*writer)->Close().ok());
  return frames;
}

std::vector<PcapRecord> Records(const std::string& path) {
  Result<std::vector<PcapRecord>> records = ReadPcapFile(path);
  EXPECT_TRUE(records.ok()) << records.message();
  return records.ok() ? *records : std::vector<PcapRecord>{};
}

// net_pcap port 0 reads in0.pcap; both ports write what they send.
std::string PcapConfig(const std::string& port1_keys, const std::string& cli = "") {
  const std::string dir = TestDir();
  if (!cli.empty()) std::ofstream(dir + "start.cli") << cli;
  std::ofstream(dir + "pcap.ini") << "[switch]\nports = 2\nprogram = wire\n"
                                  << (cli.empty() ? "" : "cli = start.cli\n")
                                  << "[dpdk]\nmbufs = 4095\n[port.0]\ndevargs = net_pcap0,rx_pcap="
                                  << dir << "in0.pcap,tx_pcap=" << dir
                                  << "out0.pcap\n[port.1]\ndevargs = net_pcap1,tx_pcap=" << dir
                                  << "out1.pcap\n"
                                  << port1_keys;
  return dir + "pcap.ini";
}

// Shaped (the default 10G) and unshaped, where the frames cut through the TM into the delay line.
TEST_F(RealtimeEffectsTest, DelayedFramesAllArriveInOrderAndLate) {
  const auto frames = WriteInput(TestDir() + "in0.pcap", 200);
  for (const bool shaped : {true, false}) {
    SCOPED_TRACE(shaped ? "shaped" : "unshaped");
    std::filesystem::remove_all(TestDir() + "rec");
    RunResult run =
        RunSwemu("--config " + PcapConfig(shaped ? "delay = 5ms\n" : "rate = 0\ndelay = 5ms\n") +
                 " --run-for 1s --pcap-dir " + TestDir() + "rec --pcap-snaplen 2048" + EalArgs());
    ASSERT_EQ(run.status, 0) << run.err;
    std::vector<std::vector<uint8_t>> out;
    for (const PcapRecord& r : Records(TestDir() + "out1.pcap")) out.push_back(r.bytes);
    EXPECT_EQ(out, frames);
    EXPECT_NE(run.out.find("drops: none\n"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("port 1: loss 0, delay 5ms"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(shaped ? "cut through 0, " : "cut through 200, "), std::string::npos)
        << run.out;
    // The recordings' timestamps: each frame left port 1 at least 5 ms after port 0 received it.
    const std::vector<PcapRecord> rx = Records(TestDir() + "rec/port0-rx.pcap");
    const std::vector<PcapRecord> tx = Records(TestDir() + "rec/port1-tx.pcap");
    ASSERT_EQ(rx.size(), frames.size());
    ASSERT_EQ(tx.size(), frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(tx[i].bytes, frames[i]);
      EXPECT_GE(tx[i].ts_ns, rx[i].ts_ns + 5'000'000) << "frame " << i;
    }
  }
}

// A device that refuses frames: port 1 is a net_ring, whose TX loops back to its own RX, and
// l2l3 sends every (all-zero) frame to port 1, from net_null0 and from the ring itself. Twice
// what the ring drains arrives for it, so the ring fills and refuses. Refused frames wait in the
// port's backlog; meanwhile new runs stop cutting through and the TM queue builds until it drops
// (tm_queue_full); the device never drops one (tx_queue_full), and no mbuf leaks.
TEST_F(RealtimeEffectsTest, ADeviceThatRefusesFramesBuildsTheTmQueue) {
  const std::string dir = TestDir();
  WriteRefusingRingConfig(dir);
  RunResult run = RunSwemu("--config " + dir + "loop.ini --run-for 1s" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  const uint64_t queue_full = Field(run.out, R"(tm_queue_full (\d+))");
  ASSERT_NE(queue_full, UINT64_MAX) << run.out;
  EXPECT_GT(queue_full, 0u) << run.out;
  EXPECT_EQ(run.out.find("tx_queue_full"), std::string::npos) << run.out;
  const uint64_t cut = Field(run.out, R"(cut through (\d+))");
  ASSERT_NE(cut, UINT64_MAX) << run.out;
  EXPECT_GT(cut, 0u) << run.out;  // before the ring filled
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

// "Cpus_allowed_list" of each thread of `pid`, by the thread's name.
std::map<std::string, std::string> ThreadCpus(pid_t pid) {
  std::map<std::string, std::string> cpus;
  std::error_code ignored;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ignored)) {
    std::string name = ReadText(task.path().string() + "/comm");
    if (!name.empty() && name.back() == '\n') name.pop_back();
    std::istringstream status(ReadText(task.path().string() + "/status"));
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) cpus[name] = line.substr(line.find(':') + 2);
    }
  }
  return cpus;
}

// At 1 ms the samples came about every 4 ms: the sampler thread, made by the main lcore,
// inherited its one CPU and waited for the busy loop's time slice. It now runs on the CPUs no
// lcore uses, as the control server does (checked on the running swemu's threads). How often
// it samples there depends on what else runs on them: the run keeps the period or says so.
TEST_F(RealtimeEffectsTest, TelemetryRunsOffTheLcoresCpuAndSaysWhenItFallsShort) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs a CPU besides the lcore's";
  const std::string dir = TestDir();
  WriteRefusingRingConfig(dir);
  const std::string command = "exec " + testing::kSwemuBinary + " --control-socket " + dir +
                              "ctl.sock --config " + dir + "loop.ini --run-for 2s --busy-poll " +
                              "--telemetry " + dir + "t.csv --telemetry-period 1ms" + EalArgs() +
                              " >" + dir + "out 2>" + dir + "err";
  const pid_t swemu = fork();
  ASSERT_GE(swemu, 0);
  if (swemu == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::map<std::string, std::string> cpus;
  for (int i = 0; i < 150 && (!cpus.count("swemu-telemetry") || !cpus.count("swemu-control"));
       ++i) {
    usleep(10'000);
    cpus = ThreadCpus(swemu);
  }
  int status = 0;
  ASSERT_EQ(waitpid(swemu, &status, 0), swemu);
  std::filesystem::remove_all("/var/run/dpdk/" + testing::DpdkFilePrefix());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadText(dir + "err");
  ASSERT_TRUE(cpus.count("swemu-telemetry") && cpus.count("swemu-control"))
      << "threads seen: " << cpus.size();
  // TestEalArgs() runs the one lcore on CPU 0 (-l 0); other threads may be named "swemu" too
  // (under ASan its own), so the lcore's CPU is taken from the arguments, not a thread's name.
  ASSERT_NE(EalArgs().find(" -l 0 "), std::string::npos) << EalArgs();
  EXPECT_NE(cpus["swemu-telemetry"], "0") << "on the lcore's CPU";
  EXPECT_NE(cpus["swemu-control"], "0") << "on the lcore's CPU";
  std::istringstream lines(ReadText(dir + "t.csv"));
  std::string line;
  std::getline(lines, line);  // header
  uint64_t rows = 0;
  while (std::getline(lines, line)) ++rows;
  const bool said = ReadText(dir + "err").find("swemu: telemetry: one sample every") !=
                    std::string::npos;
  EXPECT_TRUE(rows >= 1000 || said) << rows << " rows in 2 s at 1 ms, and no line saying so";
}

// --telemetry in real time: the queue that a refusing device builds shows in the samples, taken
// off the fast path about every period, stamped with the wall clock.
TEST_F(RealtimeEffectsTest, TelemetrySamplesTheQueueADeviceBuilds) {
  const std::string dir = TestDir();
  WriteRefusingRingConfig(dir);
  const auto before = std::chrono::system_clock::now().time_since_epoch();
  RunResult run = RunSwemu("--config " + dir + "loop.ini --run-for 1s --telemetry " + dir +
                           "t.csv --telemetry-period 10ms" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  std::istringstream lines(ReadText(dir + "t.csv"));
  std::string line;
  std::getline(lines, line);
  ASSERT_EQ(line, "time_ns,switch,port,queue,depth_packets,depth_bytes,marked_total,dropped_total");
  uint64_t rows = 0, full = 0, first_ts = 0, last_ts = 0, dropped = 0;
  const uint64_t start_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(before).count());
  while (std::getline(lines, line)) {
    uint64_t ts = 0, port = 0, queue = 0, depth = 0, bytes = 0, marked = 0;
    char sw[32] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "%lu,%31[^,],%lu,%lu,%lu,%lu,%lu,%lu", &ts, sw, &port,
                          &queue, &depth, &bytes, &marked, &dropped), 8) << line;
    EXPECT_GE(ts, start_ns);
    EXPECT_GE(ts, last_ts);
    if (rows == 0) first_ts = ts;
    last_ts = ts;
    EXPECT_EQ(port, 1u) << line;
    full += depth >= 192;  // whole bursts are refused near the 256-packet limit
    ++rows;
  }
  // One sample about every 10 ms (a busy 2-core machine makes some late, never early).
  ASSERT_GE(rows, 30u);
  const double mean_gap_ms = static_cast<double>(last_ts - first_ts) / 1e6 / static_cast<double>(rows - 1);
  EXPECT_GE(mean_gap_ms, 9.0);
  EXPECT_LE(mean_gap_ms, 25.0);
  EXPECT_GT(full, 0u) << "the ring stops taking frames, so the queue fills to its depth";
  EXPECT_GT(dropped, 0u);
}

TEST_F(RealtimeEffectsTest, PcapDirRecordsChosenPortsSnapped) {
  const auto frames = WriteInput(TestDir() + "in0.pcap", 20);
  RunResult run = RunSwemu("--config " + PcapConfig("") + " --run-for 1s --pcap-dir " + TestDir() +
                           "rec --pcap-ports 0 --pcap-snaplen 64" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::vector<PcapRecord> rx = Records(TestDir() + "rec/port0-rx.pcap");
  ASSERT_EQ(rx.size(), frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(rx[i].orig_len, frames[i].size());
    EXPECT_EQ(rx[i].bytes, std::vector<uint8_t>(frames[i].begin(), frames[i].begin() + 64));
  }
  EXPECT_TRUE(Records(TestDir() + "rec/port0-tx.pcap").empty());  // port 0 sent nothing
  EXPECT_FALSE(std::filesystem::exists(TestDir() + "rec/port1-tx.pcap"));
  EXPECT_NE(run.out.find("pcap: recorded 20 frames in " + TestDir() + "rec, pcap_dropped 0"),
            std::string::npos)
      << run.out;
}

// --pcap-max-bytes: the files together stay within the cap (two 24-byte file headers, then 16 +
// 64 bytes per snapped record: 7 records fit in 608 bytes), and stderr says once that recording
// stopped.
TEST_F(RealtimeEffectsTest, PcapMaxBytesStopsRecordingAtTheCap) {
  WriteInput(TestDir() + "in0.pcap", 20);
  RunResult run = RunSwemu("--config " + PcapConfig("") + " --run-for 1s --pcap-dir " + TestDir() +
                           "rec --pcap-ports 0 --pcap-snaplen 64 --pcap-max-bytes 608" +
                           EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(Records(TestDir() + "rec/port0-rx.pcap").size(), 7u);
  EXPECT_EQ(std::filesystem::file_size(TestDir() + "rec/port0-rx.pcap") +
                std::filesystem::file_size(TestDir() + "rec/port0-tx.pcap"),
            608u);
  EXPECT_NE(run.out.find(", pcap_dropped 0, past --pcap-max-bytes 13\n"), std::string::npos)
      << run.out;
  const std::string stopped = "rec reached --pcap-max-bytes (608 B); recording stopped\n";
  ASSERT_NE(run.err.find(stopped), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(stopped), run.err.rfind(stopped)) << "said once: " << run.err;
}

TEST_F(RealtimeEffectsTest, StartupScriptSetsLossAndDelay) {
  WriteInput(TestDir() + "in0.pcap", 10);
  RunResult run =
      RunSwemu("--config " + PcapConfig("", "set_port_delay all 1ms\nset_port_loss 1 1\n") +
               " --run-for 1s" + EalArgs());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Records(TestDir() + "out1.pcap").empty());
  EXPECT_NE(run.out.find("drops: loss_injected 10\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("port 1: loss 1, delay 1ms"), std::string::npos) << run.out;
}

TEST_F(RealtimeEffectsTest, BadSetPortLossStopsStartup) {
  WriteInput(TestDir() + "in0.pcap", 1);
  RunResult run =
      RunSwemu("--config " + PcapConfig("", "set_port_loss 1 2\n") + " --run-for 1s" + EalArgs());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("set_port_loss"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("probability "), std::string::npos) << run.err;
}

TEST_F(RealtimeEffectsTest, PcapPortsWithoutDevargsIsAnError) {
  WriteInput(TestDir() + "in0.pcap", 1);
  RunResult run = RunSwemu("--config " + PcapConfig("") + " --run-for 1s --pcap-dir " + TestDir() +
                           "rec --pcap-ports 1,3" + EalArgs());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("swemu: --pcap-ports: port 3 has no [port.N] devargs"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace swemu
