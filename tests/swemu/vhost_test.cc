// swemu end to end on vhost-user: swemu (net_vhost ports, the vhost-user server) and separate
// DPDK processes as hosts (swemu-replay on net_virtio_user, each with its own --file-prefix).
// Frames a peer sends come back forwarded per the table, without and with hugepages. Also a
// clean SIGINT shutdown under full load. Every process started here is killed in TearDown.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::Frames;
using testing::ReadFrames;
using testing::WritePcap;

const std::string kSwemu = SWEMU_BINARY_DIR "/swemu/swemu";
const std::string kReplay = SWEMU_BINARY_DIR "/tools/swemu-replay";
const MacAddr kMacA = MacAddr::FromU64(0x00000000000a);
const MacAddr kMacB = MacAddr::FromU64(0x00000000000b);
const MacAddr kMacUnknown = MacAddr::FromU64(0x0000000000ee);
constexpr int kHugepages = 48;  // swemu and two peers with 4095 mbufs each use ~8 pages apiece

using testing::CurrentTestName;
using testing::ReadText;

std::vector<uint8_t> Frame(const MacAddr& dst, const MacAddr& src, uint16_t id) {
  return FrameBuilder()
      .Eth(dst, src)
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(20 + id % 200)
      .Build();
}

class VhostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "swemu_vhost_" + std::to_string(getpid()) + "_" +
           CurrentTestName() + "/";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override {
    for (pid_t pid : pids_) {
      if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
    std::error_code ignored;
    for (const std::string& prefix : prefixes_) {
      std::filesystem::remove_all("/var/run/dpdk/" + prefix, ignored);
    }
    if (old_hugepages_ >= 0) WriteHugepages(old_hugepages_);
    std::filesystem::remove_all(dir_, ignored);
  }

  // A file prefix of this test's own, removed from /var/run/dpdk in TearDown.
  std::string Prefix(const std::string& who) {
    prefixes_.push_back("swemu-vhost-" + std::to_string(getpid()) + "-" + who);
    return prefixes_.back();
  }

  // Starts `command` in the background (stdout and stderr to DIR/NAME.out, .err). With
  // hugepages, the process gets a private hugetlbfs mount: others on the machine see no
  // mount, so their swemu keeps choosing --no-huge.
  pid_t Start(const std::string& name, const std::string& command) {
    std::string line = command;
    if (hugepages_) {
      line = "unshare -m sh -c 'mount -t hugetlbfs nodev " + dir_ + "huge && exec \"$0\" \"$@\"' " +
             command + " --huge-dir " + dir_ + "huge";
    }
    line = "exec " + line + " >" + dir_ + name + ".out 2>" + dir_ + name + ".err </dev/null";
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids_.push_back(pid);
    return pid;
  }

  // The exit status, or -1 when the process still runs after `seconds` or died of a signal.
  static int Wait(pid_t pid, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    int raw = 0;
    while (waitpid(pid, &raw, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }

  static bool WaitForFile(const std::string& path, double seconds) {
    for (int i = 0; i < seconds * 100; ++i) {
      if (std::filesystem::exists(path)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::filesystem::exists(path);
  }

  // Reserves hugepages for this test (restored in TearDown); false if the kernel refuses.
  bool ReserveHugepages() {
    std::ifstream in("/proc/sys/vm/nr_hugepages");
    int old = -1;
    if (!(in >> old)) return false;
    if (!WriteHugepages(old + kHugepages)) return false;
    old_hugepages_ = old;
    std::string meminfo = ReadText("/proc/meminfo");
    const std::size_t at = meminfo.find("HugePages_Free:");
    if (at == std::string::npos) return false;
    free_hugepages_ = std::atoi(meminfo.c_str() + at + 15);
    if (free_hugepages_ < kHugepages) return false;
    std::filesystem::create_directories(dir_ + "huge");
    hugepages_ = true;
    return true;
  }

  static bool WriteHugepages(int pages) {
    std::ofstream out("/proc/sys/vm/nr_hugepages");
    out << pages << "\n";
    out.flush();
    return out.good();
  }

  std::string EalMemory(const std::string& no_huge_size) const {
    return hugepages_ ? "" : " --no-huge -m " + no_huge_size;
  }

  std::string WriteSwitchConfig() const {
    std::ofstream(dir_ + "sw.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = " SWEMU_SOURCE_DIR
                                      "/configs/ci_vhost.cli\n[tm]\nport_rate = 0\n"
                                      "[dpdk]\nmbufs = 4095\nmbuf_cache = 128\n"
                                      "[port.0]\ndevargs = net_vhost0,iface="
                                   << dir_ << "v0.sock,queues=1\n[port.1]\ndevargs = "
                                   << "net_vhost1,iface=" << dir_ << "v1.sock,queues=1\n";
    return dir_ + "sw.ini";
  }

  std::string Peer(const std::string& name, const std::string& socket, const std::string& args) {
    // vhost-user maps at most 8 memory regions: one file for all of the peer's hugepages.
    return kReplay + " --port net_virtio_user0,path=" + dir_ + socket + ",queue_size=256" + args +
           " -- --no-pci -l 1 --file-prefix " + Prefix(name) + EalMemory("128") +
           (hugepages_ ? " --single-file-segments" : "");
  }

  // Peer A (port 0) sends frames to B, to itself and to an unknown MAC; B (port 1) receives.
  void ForwardBetweenPeers() {
    Frames to_b, to_a, sent;
    for (uint16_t id = 1; id <= 300; ++id) {
      if (id % 10 == 3) {
        sent.push_back(Frame(kMacA, kMacA, id));  // hairpin: back out of A's own port
        to_a.push_back(sent.back());
      } else if (id % 10 == 7) {
        sent.push_back(Frame(kMacUnknown, kMacA, id));  // a table miss
      } else {
        sent.push_back(Frame(kMacB, kMacA, id));
        to_b.push_back(sent.back());
      }
    }
    WritePcap(dir_ + "a_in.pcap", sent);
    const pid_t sw =
        Start("swemu", kSwemu + " --config " + WriteSwitchConfig() + " --control-socket " + dir_ +
                           "ctl.sock --run-for 20s" + " -- --no-pci -l 0 --file-prefix " +
                           Prefix("sw") + EalMemory("256"));
    ASSERT_TRUE(WaitForFile(dir_ + "ctl.sock", 5)) << ReadText(dir_ + "swemu.err");
    const pid_t b =
        Start("b", Peer("b", "v1.sock",
                        " --out " + dir_ + "b_out.pcap --wait 3s --expect " +
                            std::to_string(to_b.size()) + " --ready-file " + dir_ + "b.ready"));
    ASSERT_TRUE(WaitForFile(dir_ + "b.ready", 5)) << ReadText(dir_ + "b.err");
    if (hugepages_) {  // swemu and B really run on hugepages
      const std::string meminfo = ReadText("/proc/meminfo");
      const std::size_t at = meminfo.find("HugePages_Free:");
      EXPECT_LT(std::atoi(meminfo.c_str() + at + 15), free_hugepages_) << meminfo;
    }
    const pid_t a =
        Start("a", Peer("a", "v0.sock",
                        " --in " + dir_ + "a_in.pcap --out " + dir_ +
                            "a_out.pcap --wait 2s --expect " + std::to_string(to_a.size())));
    EXPECT_EQ(Wait(a, 6), 0) << ReadText(dir_ + "a.err");
    EXPECT_EQ(Wait(b, 6), 0) << ReadText(dir_ + "b.err");
    EXPECT_EQ(ReadText(dir_ + "a.out"), "sent 300, received 30\n");
    EXPECT_EQ(ReadText(dir_ + "b.out"), "sent 0, received 240\n");
    EXPECT_EQ(ReadFrames(dir_ + "b_out.pcap"), to_b);
    EXPECT_EQ(ReadFrames(dir_ + "a_out.pcap"), to_a);
    ASSERT_EQ(kill(sw, SIGINT), 0);
    EXPECT_EQ(Wait(sw, 5), 0) << ReadText(dir_ + "swemu.err");
    const std::string out = ReadText(dir_ + "swemu.out");
    EXPECT_NE(out.find("drops: table_miss 30\n"), std::string::npos) << out;
    EXPECT_EQ(ReadText(dir_ + "swemu.err").find("leak"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir_ + "ctl.sock"));
  }

  std::string dir_;
  std::vector<pid_t> pids_;
  std::vector<std::string> prefixes_;
  int old_hugepages_ = -1;
  bool hugepages_ = false;
  int free_hugepages_ = 0;
};

TEST_F(VhostTest, PeerFramesComeBackForwardedWithoutHugepages) { ForwardBetweenPeers(); }

TEST_F(VhostTest, PeerFramesComeBackForwardedWithHugepages) {
  if (geteuid() != 0) GTEST_SKIP() << "reserving hugepages needs root";
  if (!ReserveHugepages()) GTEST_SKIP() << "the kernel refused " << kHugepages << " hugepages";
  ForwardBetweenPeers();
}

// net_null ports are endless sources at line rate: SIGINT lands with frames everywhere (RX
// rings, TM queues, TX rings), and every mbuf must still come back.
TEST_F(VhostTest, SigintUnderLoadShutsDownCleanly) {
  std::ofstream(dir_ + "null.cli") << "table_add dmac forward 00:00:00:00:00:00 => 1\n";
  std::ofstream(dir_ + "null.ini") << "[switch]\nports = 2\nprogram = l2l3\ncli = null.cli\n"
                                      "[dpdk]\nmbufs = 4095\n"
                                      "[port.0]\ndevargs = net_null0\n"
                                      "[port.1]\ndevargs = net_null1\n";
  const pid_t sw = Start("swemu", kSwemu + " --config " + dir_ + "null.ini --control-socket " +
                                      dir_ + "ctl.sock --run-for 20s -- --no-pci -l 0" +
                                      " --no-huge -m 128 --file-prefix " + Prefix("null"));
  ASSERT_TRUE(WaitForFile(dir_ + "ctl.sock", 5)) << ReadText(dir_ + "swemu.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(sw, SIGINT), 0);
  EXPECT_EQ(Wait(sw, 5), 0) << ReadText(dir_ + "swemu.err");
  const std::string out = ReadText(dir_ + "swemu.out");
  EXPECT_EQ(ReadText(dir_ + "swemu.err").find("leak"), std::string::npos)
      << ReadText(dir_ + "swemu.err");
  // Port 1 sent frames: the switch was forwarding when the signal came.
  std::istringstream lines(out);
  std::string line;
  bool forwarded = false;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> row{std::istream_iterator<std::string>(fields), {}};
    if (row.size() > 4 && row[1] == "net_null1") forwarded = std::stoull(row[4]) > 0;
  }
  EXPECT_TRUE(forwarded) << out;
}

// DPDK's routine lines (telemetry's at every start, virtio_user's random MAC once per port) are
// not printed by default; a --log-level (what the demos' -v adds) prints them again.
TEST_F(VhostTest, DpdkRoutineLinesNeedALogLevel) {
  const std::string telemetry = "No legacy callbacks, legacy socket not created";
  const std::string random_mac = "No valid MAC in devargs or device, use random";
  for (const std::string level : {"", " --log-level=notice"}) {
    const std::string tag = level.empty() ? "quiet" : "verbose";
    const pid_t sw = Start(
        "swemu_" + tag, kSwemu + " --config " + WriteSwitchConfig() + " --control-socket " + dir_ +
                            tag + ".sock --run-for 20s -- --no-pci -l 0" + " --file-prefix " +
                            Prefix("sw" + tag) + EalMemory("256") + level);
    ASSERT_TRUE(WaitForFile(dir_ + tag + ".sock", 5)) << ReadText(dir_ + "swemu_" + tag + ".err");
    const pid_t peer = Start("peer_" + tag, Peer("peer" + tag, "v0.sock", " --wait 0s") + level);
    EXPECT_EQ(Wait(peer, 6), 0) << ReadText(dir_ + "peer_" + tag + ".err");
    ASSERT_EQ(kill(sw, SIGINT), 0);
    EXPECT_EQ(Wait(sw, 5), 0) << ReadText(dir_ + "swemu_" + tag + ".err");
    const std::string sw_err = ReadText(dir_ + "swemu_" + tag + ".err");
    const std::string peer_err = ReadText(dir_ + "peer_" + tag + ".err");
    EXPECT_EQ(ReadText(dir_ + "peer_" + tag + ".out"), "sent 0, received 0\n");
    EXPECT_EQ(sw_err.find(telemetry) != std::string::npos, !level.empty()) << tag << sw_err;
    EXPECT_EQ(peer_err.find(telemetry) != std::string::npos, !level.empty()) << tag << peer_err;
    EXPECT_EQ(peer_err.find(random_mac) != std::string::npos, !level.empty()) << tag << peer_err;
  }
}

TEST_F(VhostTest, ReplayRefusesBadDevargsAndOptionsWithOneLine) {
  const std::string eal = " -- --no-pci -l 0 --no-huge -m 64 --file-prefix " + Prefix("bad");
  auto run = [&](const std::string& args) {
    const int status = Wait(Start("replay", kReplay + args), 5);
    return std::make_pair(status, ReadText(dir_ + "replay.err"));
  };
  auto bad_devargs = run(" --port net_foo0" + eal);
  EXPECT_EQ(bad_devargs.first, 2);
  EXPECT_NE(bad_devargs.second.find("swemu-replay: port 0: devargs net_foo0: no such driver\n"),
            std::string::npos)
      << bad_devargs.second;
  auto no_file = run(" --port net_null0 --in " + dir_ + "missing.pcap" + eal);
  EXPECT_EQ(no_file.first, 2);
  EXPECT_EQ(no_file.second.rfind("swemu-replay: ", 0), 0u) << no_file.second;
  EXPECT_NE(no_file.second.find("missing.pcap"), std::string::npos) << no_file.second;
  auto two_paces = run(" --port net_null0 --pps 10 --timing" + eal);
  EXPECT_EQ(two_paces.first, 2);
  EXPECT_EQ(two_paces.second,
            "swemu-replay: --topspeed, --pps, --mbps and --timing exclude each other\n");
  auto no_port = run(eal);
  EXPECT_EQ(no_port.first, 2);
  EXPECT_EQ(no_port.second, "swemu-replay: give --port DEVARGS (a DPDK port) or --iface NAME (a kernel interface); "
            "--help lists the options\n");
}

// net_null answers every RX poll with frames: --expect ends the capture, and --pps paces.
TEST_F(VhostTest, ReplayStopsAtExpectAndPacesAtPps) {
  WritePcap(dir_ + "in.pcap", {Frame(kMacB, kMacA, 1), Frame(kMacB, kMacA, 2)});
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = Start("replay", kReplay + " --port net_null0 --in " + dir_ +
                                        "in.pcap --loop 5 --pps 20 --expect 100 --out " + dir_ +
                                        "out.pcap -- --no-pci -l 0 --no-huge -m 64" +
                                        " --file-prefix " + Prefix("pps"));
  EXPECT_EQ(Wait(pid, 8), 0) << ReadText(dir_ + "replay.err");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 0.45);  // 10 frames at 20 pps: the last is due after 450 ms
  const std::string out = ReadText(dir_ + "replay.out");
  EXPECT_EQ(out.rfind("sent 10, received ", 0), 0u) << out;
  EXPECT_GE(ReadFrames(dir_ + "out.pcap").size(), 100u);
}

}  // namespace
}  // namespace swemu
