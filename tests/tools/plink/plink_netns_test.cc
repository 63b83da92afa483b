// PLink on servers, proven on one machine (root): `swemu-plink publish` from the bundled
// leaf-spine (two racks of two hosts under a spine: 2LHA's groups are the two leaves), then
// `swemu --topology FILE --backend netns` with `swemu-plink node` on every host as run commands.
// Each node is a network namespace on a veth pair to a real-time swemu on net_af_packet, so every
// chunk crosses a kernel network stack and two or three switches as between servers: every
// iteration's sums exact at every node, and nothing left behind. The same with h0 on a DPDK port
// (`--port net_af_packet0,iface=eth0`: whole frames to its router, the job's gw_mac).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";

// Publishes the leaf-spine's job of `floats`, runs its four nodes in namespaces for `iterations`
// (h0 with `h0_options` added) and checks every node's log: its plan, every iteration's sums
// exact. Returns h0's log.
std::string RunFourNodes(const std::string& tag, int floats, int iterations,
                         const std::string& h0_options) {
  const std::string dir = TestDirFor(tag);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunResult pub = RunCommandIn(
      dir, kPlink + " publish --topology " SWEMU_SOURCE_DIR "/configs/leaf_spine.topo --floats " +
               std::to_string(floats) + " --out-dir " + dir + "pub");
  EXPECT_EQ(pub.status, 0) << pub.err;
  EXPECT_NE(pub.out.find("4 nodes in 2 groups (2LHA)"), std::string::npos) << pub.out;
  const std::string job = dir + "pub/plink.job";
  std::ofstream topo(dir + "pub/netns.topo");
  topo << "[topology]\ninclude = " SWEMU_SOURCE_DIR "/configs/leaf_spine.topo\n";
  for (const std::string h : {"h0", "h1", "h2", "h3"}) {
    topo << "run = " << h << " swemu-plink node --job " << job << " --name " << h
         << " --iterations " << iterations << " --timeout 15s" << (h == "h0" ? h0_options : "")
         << "\n";
  }
  topo.close();
  RunResult run = RunCommandIn(dir, kSwemuBinary + " --topology " + dir + "pub/netns.topo" +
                                        " --backend netns --run-for 50s --out-dir " + dir + "run");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  for (int h = 0; h < 4; ++h) {
    const std::string log =
        ReadText(dir + "run/h" + std::to_string(h) + "-run" + std::to_string(h) + ".log");
    EXPECT_NE(log.find("2LHA over 2 groups"), std::string::npos) << log;
    EXPECT_NE(log.find("iteration " + std::to_string(iterations - 1) + ": "), std::string::npos)
        << log;
    size_t exact = 0;
    for (size_t at = log.find("every sum exact"); at != std::string::npos;
         at = log.find("every sum exact", at + 1)) {
      ++exact;
    }
    EXPECT_EQ(exact, static_cast<size_t>(iterations)) << log;
    EXPECT_EQ(log.find("WRONG"), std::string::npos) << log;
  }
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns")) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name != "swemu-h0" && name != "swemu-sw-leaf1" && name != "swemu-sw-spine") << name;
  }
  return ReadText(dir + "run/h0-run0.log");
}

TEST(PlinkNetns, FourNodesInTwoRacksGiveExactSumsThroughThreeSwitches) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string h0 = RunFourNodes("plink_netns_", 262144, 3, "");
  EXPECT_EQ(h0.find("DPDK"), std::string::npos) << h0;
}

TEST(PlinkNetns, ANodeOnADpdkPortReducesExactlyWithKernelNodes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string h0 =
      RunFourNodes("plink_netns_dpdk_", 65536, 2, " --port net_af_packet0,iface=eth0");
  EXPECT_NE(h0.find("over DPDK port net_af_packet0,iface=eth0"), std::string::npos) << h0;
}

}  // namespace
}  // namespace swemu::testing
