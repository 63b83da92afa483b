// swemu --topology FILE --backend netns, run as a user runs it (root): switches in their own
// namespaces on net_af_packet, hosts in theirs, commands in the hosts, everything removed after.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;
using swemu::testing::TestDirFor;

std::string TestDir() {
  const std::string dir = TestDirFor("netns_testbed_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The bundled leaf-spine, hosts renamed for this test (namespace names are global).
std::string LeafSpineTopology(const std::string& dir, const std::string& tag,
                              const std::string& runs) {
  const std::string configs = SWEMU_SOURCE_DIR "/configs/leaf_spine/";
  std::ofstream(dir + "net.topo") << "[topology]\n"
                                  << "switch = " << tag << "l1 " << configs << "leaf1.ini\n"
                                  << "switch = " << tag << "l2 " << configs << "leaf2.ini\n"
                                  << "switch = " << tag << "sp " << configs << "spine.ini\n"
                                  << "link = " << tag << "l1:2 " << tag
                                  << "sp:0 rate=10G delay=1us\n"
                                  << "link = " << tag << "l2:2 " << tag
                                  << "sp:1 rate=10G delay=1us\n"
                                  << "host = " << tag << "l1:0 name=" << tag
                                  << "h0 ip=10.0.1.1/24 mac=00:00:00:00:01:01 "
                                  << "gw=10.0.1.254 gw_mac=00:00:00:00:01:fe\n"
                                  << "host = " << tag << "l2:0 name=" << tag
                                  << "h2 ip=10.0.2.1/24 mac=00:00:00:00:02:01 "
                                  << "gw=10.0.2.254 gw_mac=00:00:00:00:02:fe\n"
                                  << runs;
  return dir + "net.topo";
}

// Nothing of a run is left: no namespace of its names, no EAL runtime directory.
void ExpectNothingLeft(const std::string& tag) {
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns")) {
    EXPECT_EQ(entry.path().filename().string().find(tag), std::string::npos) << entry.path();
  }
  if (std::filesystem::exists("/var/run/dpdk")) {
    for (const auto& entry : std::filesystem::directory_iterator("/var/run/dpdk")) {
      EXPECT_EQ(entry.path().filename().string().find(tag), std::string::npos) << entry.path();
    }
  }
}

bool IsRoot() { return geteuid() == 0; }

TEST(NetnsTestbedTest, TcpCrossesThreeSwitchesBetweenNamespacesAndAllIsRemoved) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(
      dir, "ta", "run = tah2 iperf3 -s -1\nrun = tah0 sleep 1; iperf3 -c 10.0.2.1 -t 1 -f m\n");
  auto run = RunCommandIn(
      dir, kSwemuBinary + " --topology " + topo + " --backend netns --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("switch tasp: swemu-cli --socket " + dir + "out/tasp-control.sock"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("host tah0 on tal1:0: ip netns exec swemu-tah0 bash"), std::string::npos);
  const std::string client = ReadText(dir + "out/tah0-run1.log");
  EXPECT_NE(client.find("iperf Done."), std::string::npos) << client;
  EXPECT_NE(client.find("receiver"), std::string::npos) << client;
  // The spine carried the flow: its counters at shutdown show frames on both link ports.
  const std::string spine = ReadText(dir + "out/tasp.log");
  EXPECT_NE(spine.find("port 0"), std::string::npos) << spine;
  ExpectNothingLeft("ta");
}

// swemu's own host endpoints as run commands, named without a path (the testbed puts swemu's
// tools first on their PATH): DLCP tensors from h0 to h2 across both leaves and the spine.
TEST(NetnsTestbedTest, SwemusOwnHostsRunByNameAcrossTheLeafSpine) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(
      dir, "td",
      "run = tdh2 swemu-dlcp recv --bind 10.0.2.1 --tensors 2 --timeout 20s\n"
      "run = tdh0 sleep 0.5; swemu-dlcp send --bind 10.0.1.1 --to 10.0.2.1 --tensors 2 "
      "--bytes 100KB --rate 100M --bound 10% --timeout 20s\n");
  auto run = RunCommandIn(dir, kSwemuBinary + " --topology " + topo +
                                   " --backend netns --run-for 40s --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string recv = ReadText(dir + "out/tdh2-run0.log");
  EXPECT_NE(recv.find("recv: 2 of 2 flows confirmed"), std::string::npos) << recv;
  const std::string send = ReadText(dir + "out/tdh0-run1.log");
  EXPECT_NE(send.find("send: 2 of 2 tensors finished"), std::string::npos) << send;
  ExpectNothingLeft("td");
}

TEST(NetnsTestbedTest, AnInputPcapIsReplayedByItsHostAndTheOtherHostsKernelAnswers) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  // h0's pcap sends UDP to h1 (10.0.1.2, 00:00:00:00:01:02, leaf1 alone) and to leaf2's hosts.
  // h1's kernel answers each datagram to its closed port with ICMP port unreachable, which h0's
  // replay records: frames crossed leaf1 both ways. (A receiving process on h1 could start after
  // the replay has sent; h1's kernel is there from the start.)
  const std::string topo = LeafSpineTopology(
      dir, "tf", "host = tfl1:1 name=tfh1 ip=10.0.1.2/24 mac=00:00:00:00:01:02\n");
  auto run = RunCommandIn(
      dir, kSwemuBinary + " --topology " + topo + " --backend netns --in tfl1:0=" +
               SWEMU_SOURCE_DIR "/configs/pcap/h0_to_all.pcap --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string replay = ReadText(dir + "out/tfh0-replay.log");
  EXPECT_NE(replay.find("sent 75, received "), std::string::npos) << replay;
  EXPECT_EQ(replay.find("received 0"), std::string::npos) << replay;
  EXPECT_GT(std::filesystem::file_size(dir + "out/tfh0-rx.pcap"), 24u) << replay;  // > header
  ExpectNothingLeft("tf");
}

TEST(NetnsTestbedTest, AFailingHostCommandFailsTheRunAndNamesIt) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(dir, "tb", "run = tbh0 exit 3\n");
  auto run = RunCommandIn(
      dir, kSwemuBinary + " --topology " + topo + " --backend netns --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(
      run.err.find("swemu: run on tbh0 ended with status 3 (log: " + dir + "out/tbh0-run0.log)"),
      std::string::npos)
      << run.err;
  ExpectNothingLeft("tb");
}

TEST(NetnsTestbedTest, SigintStopsEverythingAndRemovesIt) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(dir, "tc", "");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    freopen((dir + "stdout").c_str(), "w", stdout);
    freopen((dir + "stderr").c_str(), "w", stderr);
    const std::string out = dir + "out";
    execl(kSwemuBinary.c_str(), "swemu", "--topology", topo.c_str(), "--backend", "netns",
          "--out-dir", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadText(dir + "stdout").find("running:") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(ReadText(dir + "stdout").find("running:"), std::string::npos)
      << ReadText(dir + "stderr");
  EXPECT_TRUE(std::filesystem::exists("/run/netns/swemu-tch0"));
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  EXPECT_NE(ReadText(dir + "stderr").find("stopped by SIGINT; everything the run made is removed"),
            std::string::npos);
  ExpectNothingLeft("tc");
}

TEST(NetnsTestbedTest, ALeftoverNamespaceIsNamedAndKept) {
  if (!IsRoot()) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(dir, "td", "");
  ASSERT_EQ(std::system("ip netns add swemu-tdh2"), 0);
  auto run = RunCommandIn(
      dir, kSwemuBinary + " --topology " + topo + " --backend netns --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("namespace swemu-tdh2 exists (another run holds it, or remove it: ip "
                         "netns del swemu-tdh2)"),
            std::string::npos)
      << run.err;
  EXPECT_TRUE(std::filesystem::exists("/run/netns/swemu-tdh2"));  // not ours: left alone
  EXPECT_FALSE(std::filesystem::exists("/run/netns/swemu-sw-tdl1"));
  EXPECT_FALSE(std::filesystem::exists(dir + "out"));
  std::system("ip netns del swemu-tdh2");
}

TEST(ProcessesTestbedTest, APcapCrossesLeaf1BetweenTwoVirtioUserHosts) {
  const std::string dir = TestDir();
  // h1 (leaf1:1) records what arrives on its virtio_user port; h0 replays its pcap into leaf1:0
  // once h1's port is up (its ready file), both with the devargs and EAL arguments the back end
  // gives its commands. h2's --in shows the back end's own replayer on virtio_user.
  const std::string replay = SWEMU_BINARY_DIR "/tools/swemu-replay";
  const std::string ready = dir + "h1.ready";
  const std::string topo = LeafSpineTopology(dir, "tg",
                                             "host = tgl1:1 name=tgh1\n"
                                             "run = tgh1 " +
                                                 replay + " --port \"$SWEMU_DEVARGS\" --out " +
                                                 dir + "h1.pcap --ready-file " + ready +
                                                 " --wait 3s --expect 3 -- $SWEMU_EAL\n"
                                                 "run = tgh0 while [ ! -e " +
                                                 ready + " ]; do sleep 0.05; done; " + replay +
                                                 " --port \"$SWEMU_DEVARGS\" --in " SWEMU_SOURCE_DIR
                                                 "/configs/pcap/h0_to_all.pcap -- "
                                                 "$SWEMU_EAL\n");
  auto run = RunCommandIn(dir, kSwemuBinary + " --topology " + topo +
                                   " --backend processes --in tgl2:0=" SWEMU_SOURCE_DIR
                                   "/configs/pcap/h2_to_all.pcap --run-for 60s --out-dir " +
                                   dir + "out");
  EXPECT_EQ(run.status, 0) << run.err << ReadText(dir + "out/tgl1.log");
  EXPECT_NE(run.out.find("host tgh1 on tgl1:1: virtio_user net_virtio_user0,path=" + dir +
                         "out/tgl1-p1.sock"),
            std::string::npos)
      << run.out;
  const std::string received = ReadText(dir + "out/tgh1-run0.log");
  EXPECT_NE(received.find("received "), std::string::npos) << received;
  EXPECT_EQ(received.find("received 0"), std::string::npos) << received;
  EXPECT_NE(ReadText(dir + "out/tgh2-replay.log").find("sent "), std::string::npos);
  ExpectNothingLeft("tg");
  for (const auto& entry : std::filesystem::directory_iterator(dir + "out")) {
    EXPECT_NE(entry.path().extension(), ".sock") << entry.path();  // swemu removes its sockets
  }
}

TEST(NetnsTestbedTest, BadOptionsEndWithOneLine) {
  const std::string dir = TestDir();
  const std::string topo = LeafSpineTopology(dir, "te", "");
  struct Case {
    std::string args, expected;
  };
  for (const Case& c : {
           Case{"--topology " + topo + " --backend mininet",
                "swemu: --backend: \"mininet\" is not a back end (expected netns or processes; the "
                "engine is --offline)"},
           Case{"--config " SWEMU_SOURCE_DIR "/configs/tor.ini --backend netns",
                "swemu: --backend: needs --topology"},
           Case{"--topology " + topo + " --backend netns --offline",
                "swemu: --backend: not with --offline"},
           Case{"--topology " + topo + " --backend netns --pcap-dir x",
                "swemu: --backend: not with --pcap-dir"},
       }) {
    auto run = RunCommandIn(dir, kSwemuBinary + " " + c.args);
    EXPECT_EQ(run.status, 2) << c.args;
    EXPECT_EQ(run.err.rfind(c.expected, 0), 0u) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_TRUE(run.out.empty());
  }
  ExpectNothingLeft("te");
}

}  // namespace
}  // namespace swemu
