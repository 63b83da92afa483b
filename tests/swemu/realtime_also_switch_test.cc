// Several switches in one real-time swemu process (--also-switch), joined by a swemu_link (a
// pair of rings): frames cross the link both ways with the sending port's delay, each switch
// answers on its own control socket, and a link end without its peer is refused.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/address.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::Frames;
using testing::ReadFrames;
using testing::ReadText;
using testing::RunResult;
using testing::WritePcap;

const std::string kSwemu = testing::kSwemuBinary;
const MacAddr kMacA = MacAddr::FromU64(0x000000000001);  // behind switch a
const MacAddr kMacB = MacAddr::FromU64(0x000000000002);  // behind switch b

std::string TestDir() { return testing::TestDirFor("swemu_also_switch_test_"); }

std::vector<uint8_t> Frame(const MacAddr& dst, const MacAddr& src, uint16_t id) {
  return FrameBuilder()
      .Eth(dst, src)
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Identification(id)
      .Udp(1000, 2000)
      .Payload(40 + id)
      .Build();
}

// Switch `name`: its host port a net_pcap port (`host_port`), its other port end `end` of link
// ab; kMacA and kMacB forwarded to where they live. `extra`: more lines for the link's port.
void WriteSwitch(const std::string& name, uint16_t host_port, int end, const std::string& extra) {
  const std::string dir = TestDir();
  const uint16_t link_port = 1 - host_port;
  const MacAddr local = host_port == 0 ? kMacA : kMacB;
  const MacAddr remote = host_port == 0 ? kMacB : kMacA;
  std::ofstream(dir + name + ".cli")
      << "table_add dmac forward " << FormatMac(local) << " => " << host_port
      << "\ntable_add dmac forward " << FormatMac(remote) << " => " << link_port << "\n";
  std::ofstream(dir + name + ".ini")
      << "[switch]\nname = " << name << "\nports = 2\nprogram = l2l3\ncli = " << name
      << ".cli\n[dpdk]\nmbufs = 4095\n[port." << host_port << "]\ndevargs = net_pcap" << host_port
      << ",rx_pcap=" << dir << "in_" << name << ".pcap,tx_pcap=" << dir << "out_" << name
      << ".pcap\n[port." << link_port << "]\ndevargs = swemu_link:ab:" << end << "\n"
      << extra;
}

class AlsoSwitchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
    to_b_ = {Frame(kMacB, kMacA, 1), Frame(kMacB, kMacA, 2), Frame(kMacB, kMacA, 3)};
    to_a_ = {Frame(kMacA, kMacB, 4), Frame(kMacA, kMacB, 5)};
    WritePcap(TestDir() + "in_a.pcap", to_b_);
    WritePcap(TestDir() + "in_b.pcap", to_a_);
  }
  void TearDown() override {
    std::error_code ignored;  // EAL's runtime directory of this test's prefix
    std::filesystem::remove_all("/var/run/dpdk/" + testing::DpdkFilePrefix(), ignored);
  }

  Frames to_b_, to_a_;
};

TEST_F(AlsoSwitchTest, TwoSwitchesInOneProcessPassFramesOverALinkWithItsDelay) {
  const std::string dir = TestDir();
  // Switch a delays what it sends b by 300 ms; b sends a without delay.
  WriteSwitch("a", 0, 0, "delay = 300ms\n");
  WriteSwitch("b", 1, 1, "");
  const std::string start = "(" + kSwemu + " --config " + dir + "a.ini --control-socket " + dir +
                            "a.sock --also-switch " + dir + "b.ini=" + dir + "b.sock --run-for 3s" +
                            testing::TestEalArgs() + " >" + dir + "stdout 2>" + dir +
                            "stderr </dev/null; echo $? >" + dir + "status) &";
  ASSERT_EQ(std::system(start.c_str()), 0);
  struct stat st = {};
  const std::string b_sock = dir + "b.sock";
  for (int i = 0; i < 250 && lstat(b_sock.c_str(), &st) != 0; ++i) usleep(20000);
  ASSERT_TRUE(S_ISSOCK(st.st_mode)) << ReadText(dir + "stderr");
  auto cli = [&](const std::string& sock, const std::string& command) {
    const std::string line = SWEMU_BINARY_DIR "/tools/swemu-cli --socket " + dir + sock + " '" +
                             command + "' >" + dir + "cli.out 2>&1";
    EXPECT_EQ(std::system(line.c_str()), 0) << ReadText(dir + "cli.out");
    return ReadText(dir + "cli.out");
  };
  // Each socket reaches its own switch: an entry added on b is in b's table only.
  cli("b.sock", "table_add dmac forward 00:00:00:00:00:77 => 1");
  EXPECT_NE(cli("b.sock", "table_dump dmac").find("00:00:00:00:00:77"), std::string::npos);
  EXPECT_EQ(cli("a.sock", "table_dump dmac").find("00:00:00:00:00:77"), std::string::npos);
  // Each switch says where the lcore's time in its own loop steps went.
  for (const std::string sock : {"a.sock", "b.sock"}) {
    const std::string runtime = cli(sock, "show runtime");
    EXPECT_NE(runtime.find("loops"), std::string::npos) << runtime;
    std::smatch shares;
    const bool said = std::regex_search(
        runtime, shares,
        std::regex("lcore time in this switch's steps: ([0-9.]+)% moving frames, ([0-9.]+)% "
                   "empty, over [0-9.]+ s; [0-9]+ steps over 200 us \\([0-9.]+ s: off the CPU\\)"));
    EXPECT_TRUE(said) << runtime;
    if (said) {
      EXPECT_NEAR(std::stod(shares[1]) + std::stod(shares[2]), 100.0, 0.11) << runtime;
    }
  }
  for (int i = 0; i < 500 && !std::filesystem::exists(dir + "status"); ++i) usleep(20000);
  usleep(20000);
  ASSERT_EQ(ReadText(dir + "status"), "0\n") << ReadText(dir + "stderr");  // 0: no mbuf leak
  EXPECT_EQ(ReadFrames(dir + "out_b.pcap"), to_b_);
  EXPECT_EQ(ReadFrames(dir + "out_a.pcap"), to_a_);
  const std::string out = ReadText(dir + "stdout");
  EXPECT_NE(out.find("switch a ("), std::string::npos) << out;
  EXPECT_NE(out.find("switch b ("), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir + "a.sock"));
  EXPECT_FALSE(std::filesystem::exists(b_sock));
  // Both inputs are read at once; a's 300 ms delay on the link holds its frames back.
  Result<std::vector<PcapRecord>> at_b = ReadPcapFile(dir + "out_b.pcap");
  Result<std::vector<PcapRecord>> at_a = ReadPcapFile(dir + "out_a.pcap");
  ASSERT_TRUE(at_b.ok() && at_a.ok() && !at_b->empty() && !at_a->empty());
  EXPECT_GT(at_b->front().ts_ns, at_a->front().ts_ns + 250'000'000) << out;
}

TEST_F(AlsoSwitchTest, ALinkEndWithoutItsPeerIsRefused) {
  WriteSwitch("a", 0, 0, "");
  const RunResult run = testing::RunSwemuIn(
      TestDir(), "--config " + TestDir() + "a.ini --run-for 1s" + testing::TestEalArgs());
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err,
            "swemu: link ab: only end 0 is a port; end 1 must be a port of another switch of "
            "this process (swemu_link:ab:1, --also-switch)\n");
  // Two switches that claim the same end.
  WriteSwitch("b", 1, 0, "");
  const RunResult twice =
      testing::RunSwemuIn(TestDir(), "--config " + TestDir() + "a.ini --also-switch " + TestDir() +
                                         "b.ini=none" + " --run-for 1s" + testing::TestEalArgs());
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.err.find("end 0 of link ab is already a port"), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace swemu
