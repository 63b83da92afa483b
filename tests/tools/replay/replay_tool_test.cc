// swemu-replay as users run it (tcpreplay's options over DPDK vdevs and kernel interfaces), and
// --fixlen on both swemu --offline and swemu-replay. Timing bounds are loose: the tests share a
// 2-core machine with builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::DpdkFilePrefix;
using testing::ReadText;
using testing::RunCommandIn;
using testing::RunResult;

const std::string kReplay = SWEMU_BINARY_DIR "/tools/swemu-replay";
const std::string kConfigs = SWEMU_SOURCE_DIR "/configs/";
const MacAddr kH0 = MacAddr::FromU64(0x000000000101);  // configs/leaf.cli: port 0
const MacAddr kH1 = MacAddr::FromU64(0x000000000102);  // port 1
constexpr uint32_t kIp = 14;

std::vector<uint8_t> UdpFrame(uint16_t id, std::size_t payload) {
  return FrameBuilder()
      .Eth(kH1, kH0)
      .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(payload)
      .Build();
}

std::vector<uint8_t> TcpFrame(uint16_t id, std::size_t payload) {
  return FrameBuilder()
      .Eth(kH1, kH0)
      .Ipv4(MakeIpv4Addr(10, 0, 1, 1), MakeIpv4Addr(10, 0, 1, 2))
      .Identification(id)
      .Tcp(80, 9000, kTcpAck, 1, 1)
      .Payload(payload)
      .Build();
}

// `count` frames of `bytes` bytes, `gap_ns` apart; `snap` > 0 cuts each record to that length.
void WriteTrace(const std::string& path, int count, std::size_t bytes, TimeNs gap_ns,
                uint32_t snap = 0, bool tcp_too = false) {
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.message();
  for (int i = 0; i < count; ++i) {
    const auto id = static_cast<uint16_t>(i + 1);
    const std::vector<uint8_t> frame =
        tcp_too && i % 2 == 1 ? TcpFrame(id, bytes - 54) : UdpFrame(id, bytes - 42);
    const auto len = static_cast<uint32_t>(frame.size());
    const uint32_t caplen = snap == 0 ? len : std::min(snap, len);
    (*writer)->Write(1'000'000'000 + gap_ns * static_cast<TimeNs>(i), frame.data(), caplen, len);
  }
  ASSERT_TRUE((*writer)->Close().ok());
}

// The number just after `key` in `text` (NaN when the key is missing).
double NumberAfter(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + key.size(), nullptr);
}

class ReplayToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestDirFor("swemu_replay_tool_");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all("/var/run/dpdk/" + DpdkFilePrefix(), ignored);
    std::filesystem::remove_all(dir_, ignored);
  }

  // swemu-replay with `args` on a DPDK vdev (EAL on core 0, no hugepages); *seconds: wall time.
  RunResult Replay(const std::string& args, double* seconds = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    RunResult run = RunCommandIn(dir_, kReplay + " " + args + " -- --no-huge -m 128 --no-pci -l 0" +
                                           " --file-prefix " + DpdkFilePrefix());
    if (seconds != nullptr) {
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return run;
  }

  // Replays `args` into a net_pcap port whose transmit side is written to DIR/tx.pcap.
  RunResult ReplayToPcap(const std::string& args) {
    return Replay("--port net_pcap0,tx_pcap=" + dir_ + "tx.pcap --wait 0 " + args);
  }

  std::string dir_;
};

TEST_F(ReplayToolTest, BadOptionsAreOneLineAndExitTwo) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--port net_null0 --iface lo", "--port and --iface: give only one of them"},
      {"--port net_null0 --pps 0", "--pps: \"0\" is not a number in (0, 1e+09]"},
      {"--port net_null0 --pps fast", "--pps: \"fast\" is not a number in (0, 1e+09]"},
      {"--port net_null0 --mbps -5", "--mbps: \"-5\" is not a number in (0, 1e+07]"},
      {"--port net_null0 --pps 10 --multiplier 2",
       "--multiplier: scales the pcap's timing; not with --topspeed, --pps or --mbps"},
      {"--port net_null0 --multiplier 0", "--multiplier: \"0\" is not a number in (0, 1e+06]"},
      {"--port net_null0 --topspeed --mbps 10",
       "--topspeed, --pps, --mbps and --timing exclude each other"},
      {"--port net_null0 --loop many", "--loop: "},
      {"--port net_null0 --duration 0", "--duration: 0 is not in (0, 1000000]"},
      {"--port net_null0 --duration 3fortnights", "--duration: "},
      {"--port net_null0 --fixlen del", "--fixlen: \"del\" is not pad, trunc or none"},
      {"--port net_null0 --frobnicate", "unrecognised option '--frobnicate'"},
      {"--port net_null0 stray", "too many positional options"},
      {"--iface swemu-none0", "--iface swemu-none0: no such interface"},
  };
  for (const auto& [args, message] : cases) {
    RunResult run = RunCommandIn(dir_, kReplay + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_EQ(run.err.rfind("swemu-replay: ", 0), 0u) << args << ": " << run.err;
    EXPECT_NE(run.err.find(message), std::string::npos) << args << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
  }
  RunResult eal = RunCommandIn(dir_, kReplay + " --iface lo -- -l 0");
  EXPECT_EQ(eal.status, 2);
  EXPECT_EQ(eal.err,
            "swemu-replay: --iface: runs without EAL; EAL arguments (after --) need "
            "--port\n");
}

// A missing input is refused before the capture file exists (and, on a DPDK port, before EAL).
TEST_F(ReplayToolTest, UnreadableInputTouchesNoOutput) {
  const std::string args = " --in " + dir_ + "missing.pcap --out " + dir_ + "out.pcap";
  for (const RunResult& run :
       {Replay("--port net_null0" + args), RunCommandIn(dir_, kReplay + " --iface lo" + args)}) {
    EXPECT_EQ(run.status, 2) << run.err;
    EXPECT_EQ(run.err.rfind("swemu-replay: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find("missing.pcap"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "out.pcap")) << run.err;
  }
}

TEST_F(ReplayToolTest, LoopSendsEveryPassStreamedOrPreloaded) {
  WriteTrace(dir_ + "in.pcap", 3, 100, 1000);
  for (const std::string preload : {"", " --preload"}) {
    RunResult run = ReplayToPcap("--in " + dir_ + "in.pcap --loop 4 --topspeed" + preload);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "sent 12, received 0\n") << preload;
    EXPECT_NE(run.err.find("sent 12 packets, 1200 bytes in "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("requested top speed"), std::string::npos) << run.err;
    EXPECT_EQ(testing::ReadFrames(dir_ + "tx.pcap").size(), 12u) << preload;
  }
}

TEST_F(ReplayToolTest, DurationStopsSending) {
  WriteTrace(dir_ + "in.pcap", 2, 100, 1000);
  double seconds = 0;
  // --loop 0 would send for ever: --duration ends it after 300 frames due 1 ms apart.
  RunResult paced = Replay("--port net_null0 --wait 0 --in " + dir_ +
                               "in.pcap --loop 0 --pps 1000 --duration "
                               "0.3",
                           &seconds);
  ASSERT_EQ(paced.status, 0) << paced.err;
  const double sent = NumberAfter(paced.out, "sent ");
  EXPECT_GE(sent, 280) << paced.out;
  EXPECT_LE(sent, 300) << paced.out;
  EXPECT_LT(seconds, 10);
  RunResult top = Replay(
      "--port net_null0 --wait 0 --in " + dir_ + "in.pcap --loop 0 --topspeed --duration 200ms",
      &seconds);
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_GT(NumberAfter(top.out, "sent "), 1000) << top.out;
  EXPECT_LT(seconds, 10);
}

TEST_F(ReplayToolTest, PpsPacesAgainstDeadlines) {
  WriteTrace(dir_ + "in.pcap", 20, 128, 1000);
  double seconds = 0;
  RunResult run =
      Replay("--port net_null0 --wait 0 --in " + dir_ + "in.pcap --loop 10 --pps 200", &seconds);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("sent 200, received ", 0), 0u) << run.out;
  EXPECT_GE(seconds, 0.99);  // the 200th frame is due 995 ms after the first
  EXPECT_LT(seconds, 10);
  EXPECT_NE(run.err.find("rate: requested 200.0 pps, 0.205 Mbps; achieved "), std::string::npos)
      << run.err;
  const double achieved = NumberAfter(run.err, "; achieved ");
  EXPECT_NEAR(achieved, 200, 10) << run.err;
  EXPECT_NE(run.err.find("gap error (|sent gap - intended gap|) over 199 gaps: p50 "),
            std::string::npos)
      << run.err;
  // Paced against deadlines: the median frame leaves within 1 ms of its deadline even on a busy
  // machine. (Not the gaps: one late frame makes two gap errors, and under AddressSanitizer with
  // the suite running beside it the median gap error reached 1.7 ms while the median lateness
  // stayed under 1 us.)
  EXPECT_NE(run.err.find("late (sent - deadline): p50 "), std::string::npos) << run.err;
  EXPECT_LT(NumberAfter(run.err, "deadline): p50 "), 1000) << run.err;
}

TEST_F(ReplayToolTest, MbpsMultiplierAndTheCapturedTiming) {
  // 125-byte frames: 1000 bits each.
  WriteTrace(dir_ + "in.pcap", 51, 125, 10'000'000);  // 10 ms apart: 100 pps as captured
  double seconds = 0;
  RunResult mbps =
      Replay("--port net_null0 --wait 0 --in " + dir_ + "in.pcap --mbps 0.4", &seconds);
  ASSERT_EQ(mbps.status, 0) << mbps.err;
  EXPECT_NE(mbps.err.find("rate: requested 400.0 pps, 0.400 Mbps"), std::string::npos) << mbps.err;
  EXPECT_NEAR(NumberAfter(mbps.err, "; achieved "), 400, 20) << mbps.err;
  EXPECT_GE(seconds, 0.12);
  for (const std::string captured : {"", " --timing"}) {  // the default, and its old name
    RunResult run =
        Replay("--port net_null0 --wait 0 --in " + dir_ + "in.pcap" + captured, &seconds);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.err.find("(pace: as captured)"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("rate: requested 100.0 pps"), std::string::npos) << run.err;
    EXPECT_NEAR(NumberAfter(run.err, "; achieved "), 100, 5) << run.err;
    EXPECT_GE(seconds, 0.5);
  }
  RunResult twice =
      Replay("--port net_null0 --wait 0 --in " + dir_ + "in.pcap --multiplier 2", &seconds);
  ASSERT_EQ(twice.status, 0) << twice.err;
  EXPECT_NE(twice.err.find("(pace: as captured x2)"), std::string::npos) << twice.err;
  EXPECT_NE(twice.err.find("rate: requested 200.0 pps"), std::string::npos) << twice.err;
  EXPECT_NEAR(NumberAfter(twice.err, "; achieved "), 200, 10) << twice.err;
  EXPECT_GE(seconds, 0.25);
}

// The looped pcap keeps its rate: the next pass starts one mean gap after the last frame.
TEST_F(ReplayToolTest, LoopsKeepTheCapturedRate) {
  WriteTrace(dir_ + "in.pcap", 10, 100, 5'000'000);  // 200 pps
  RunResult run = Replay("--port net_null0 --wait 0 --in " + dir_ + "in.pcap --loop 5 --preload");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("sent 50, ", 0), 0u) << run.out;
  EXPECT_NE(run.err.find("rate: requested 200.0 pps"), std::string::npos) << run.err;
}

TEST_F(ReplayToolTest, FixlenOnThePort) {
  WriteTrace(dir_ + "in.pcap", 4, 200, 1000, /*snap=*/96, /*tcp_too=*/true);
  RunResult none = ReplayToPcap("--in " + dir_ + "in.pcap --topspeed");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.err.find("fixlen none: 4 of 4 frames cut short (captured < wire length), sent "
                          "as captured; --fixlen pad|trunc fixes them\n"),
            std::string::npos)
      << none.err;
  for (const testing::Frames::value_type& frame : testing::ReadFrames(dir_ + "tx.pcap")) {
    EXPECT_EQ(frame.size(), 96u);
  }

  RunResult pad = ReplayToPcap("--in " + dir_ + "in.pcap --topspeed --fixlen pad");
  ASSERT_EQ(pad.status, 0) << pad.err;
  EXPECT_NE(pad.err.find("fixlen pad: 4 of 4 frames cut short (captured < wire length), 4 "
                         "padded to their wire length\n"),
            std::string::npos)
      << pad.err;
  testing::Frames padded = testing::ReadFrames(dir_ + "tx.pcap");
  ASSERT_EQ(padded.size(), 4u);
  for (const auto& frame : padded) EXPECT_EQ(frame.size(), 200u);

  RunResult trunc = ReplayToPcap("--in " + dir_ + "in.pcap --topspeed --preload --fixlen trunc");
  ASSERT_EQ(trunc.status, 0) << trunc.err;
  EXPECT_NE(trunc.err.find("fixlen trunc: 4 of 4 frames cut short (captured < wire length), 4 "
                           "rewritten to their captured length\n"),
            std::string::npos)
      << trunc.err;
  testing::Frames cut = testing::ReadFrames(dir_ + "tx.pcap");
  ASSERT_EQ(cut.size(), 4u);
  for (std::size_t i = 0; i < cut.size(); ++i) {
    const uint8_t* ip = cut[i].data() + kIp;
    EXPECT_EQ(HeaderAt<Ipv4Header>(ip)->TotalLength(), 96 - kIp);
    EXPECT_TRUE(Ipv4HeaderChecksumOk(ip, 20));
    EXPECT_TRUE(i % 2 == 0 ? UdpChecksumOk(ip, ip + 20, 96 - kIp - 20)
                           : TcpChecksumOk(ip, ip + 20, 96 - kIp - 20))
        << i;
  }
}

// --iface: frames go out of one end of a veth pair and are captured at the other.
TEST_F(ReplayToolTest, IfaceSendsIntoAVethAndCaptures) {
  if (geteuid() != 0) GTEST_SKIP() << "a veth pair needs root";
  const std::string a = "srt" + std::to_string(getpid() % 100000) + "a";
  const std::string b = "srt" + std::to_string(getpid() % 100000) + "b";
  const std::string setup = "ip link add " + a + " type veth peer name " + b + " && ip link set " +
                            a + " up && ip link set " + b + " up && sysctl -qw net.ipv6.conf." + a +
                            ".disable_ipv6=1 net.ipv6.conf." + b + ".disable_ipv6=1";
  if (std::system((setup + " >/dev/null 2>&1").c_str()) != 0) {
    std::system(("ip link del " + a + " >/dev/null 2>&1").c_str());
    GTEST_SKIP() << "cannot create a veth pair here";
  }
  WriteTrace(dir_ + "in.pcap", 50, 128, 1000);
  const std::string capture_dir = dir_ + "capture/";
  std::filesystem::create_directories(capture_dir);
  std::thread capture([&] {
    RunResult run = RunCommandIn(capture_dir, kReplay + " --iface " + b + " --out " + dir_ +
                                                  "b.pcap --expect 100 --wait 3s");
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "sent 0, received 100\n");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the capture socket is open
  RunResult run = RunCommandIn(
      dir_, kReplay + " --iface " + a + " --in " + dir_ + "in.pcap --loop 2 --pps 10000 --wait 0");
  capture.join();
  std::system(("ip link del " + a + " >/dev/null 2>&1").c_str());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "sent 100, received 0\n");
  EXPECT_NE(run.err.find("sent 100 packets, 12800 bytes in "), std::string::npos) << run.err;
  testing::Frames sent = testing::ReadFrames(dir_ + "in.pcap");
  testing::Frames got = testing::ReadFrames(dir_ + "b.pcap");
  ASSERT_EQ(got.size(), 100u);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], sent[i % sent.size()]) << i;
}

// swemu --offline: a snapped capture's frames fail the parser's length check unless fixed.
class OfflineFixlenTest : public ReplayToolTest {
 protected:
  RunResult Swemu(const std::string& fixlen) {
    std::filesystem::remove_all(dir_ + "out");
    return RunCommandIn(dir_, testing::kSwemuBinary + " --config " + kConfigs +
                                  "leaf.ini --offline --in 0=" + dir_ + "snapped.pcap --out-dir " +
                                  dir_ + "out" + fixlen);
  }
};

TEST_F(OfflineFixlenTest, SnappedFramesDropWithoutFixlenAndForwardWithPadOrTrunc) {
  WriteTrace(dir_ + "snapped.pcap", 6, 300, 1000, /*snap=*/96, /*tcp_too=*/true);

  RunResult none = Swemu("");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(ReadText(dir_ + "out/counters.json").find("\"ipv4_bad_total_length\": 6"),
            std::string::npos)
      << ReadText(dir_ + "out/counters.json");
  EXPECT_EQ(testing::ReadFrames(dir_ + "out/port1.pcap").size(), 0u);
  EXPECT_NE(none.out.find("\nfixlen none: 6 of 6 frames cut short (captured < wire length), sent "
                          "as captured; --fixlen pad|trunc fixes them\n"),
            std::string::npos)
      << none.out;

  RunResult pad = Swemu(" --fixlen pad");
  ASSERT_EQ(pad.status, 0) << pad.err;
  EXPECT_EQ(ReadText(dir_ + "out/counters.json").find("ipv4_bad_total_length"), std::string::npos);
  testing::Frames padded = testing::ReadFrames(dir_ + "out/port1.pcap");
  ASSERT_EQ(padded.size(), 6u);
  for (const auto& frame : padded) EXPECT_EQ(frame.size(), 300u);
  EXPECT_NE(pad.out.find("\nfixlen pad: 6 of 6 frames cut short (captured < wire length), 6 "
                         "padded to their wire length\n"),
            std::string::npos)
      << pad.out;

  RunResult trunc = Swemu(" --fixlen trunc");
  ASSERT_EQ(trunc.status, 0) << trunc.err;
  EXPECT_EQ(ReadText(dir_ + "out/counters.json").find("ipv4_bad_total_length"), std::string::npos);
  testing::Frames cut = testing::ReadFrames(dir_ + "out/port1.pcap");
  ASSERT_EQ(cut.size(), 6u);
  for (std::size_t i = 0; i < cut.size(); ++i) {
    ASSERT_EQ(cut[i].size(), 96u);
    const uint8_t* ip = cut[i].data() + kIp;
    EXPECT_EQ(HeaderAt<Ipv4Header>(ip)->TotalLength(), 96 - kIp);
    EXPECT_TRUE(Ipv4HeaderChecksumOk(ip, 20)) << i;
    EXPECT_TRUE(i % 2 == 0 ? UdpChecksumOk(ip, ip + 20, 96 - kIp - 20)
                           : TcpChecksumOk(ip, ip + 20, 96 - kIp - 20))
        << i;
  }
  EXPECT_NE(trunc.out.find("\nfixlen trunc: 6 of 6 frames cut short (captured < wire length), 6 "
                           "rewritten to their captured length\n"),
            std::string::npos)
      << trunc.out;
}

TEST_F(OfflineFixlenTest, BadOrMisplacedFixlenIsOneLine) {
  WriteTrace(dir_ + "snapped.pcap", 1, 300, 1000, 96);
  RunResult bad = Swemu(" --fixlen chop");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "swemu: --fixlen: \"chop\" is not pad, trunc or none\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "out"));
  RunResult realtime =
      RunCommandIn(dir_, testing::kSwemuBinary + " --config " + kConfigs + "leaf.ini --fixlen pad");
  EXPECT_EQ(realtime.status, 2);
  EXPECT_EQ(realtime.err, "swemu: --fixlen: only with --offline\n");
  for (const std::string& tool : {testing::kSwemuBinary, kReplay}) {
    RunResult help = RunCommandIn(dir_, tool + " --help");
    std::string text;  // the help's words, without its line breaks
    for (char c : help.out) {
      if (c == '\n') c = ' ';
      if (c != ' ' || text.empty() || text.back() != ' ') text += c;
    }
    EXPECT_NE(text.find("--fixlen MODE"), std::string::npos) << tool;
    EXPECT_NE(text.find("or none (send as captured; the default)"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace swemu
