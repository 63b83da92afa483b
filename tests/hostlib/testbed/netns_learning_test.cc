// A real-time swemu that learns: l2l3 with `learning = on` and no dmac entry at all, on
// net_af_packet ports, three hosts in network namespaces with nothing but an address. Their
// kernels' ARP broadcasts are flooded, the answers and the TCP that follows are forwarded on
// learned entries, and `show mac` lists the hosts on their ports.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;
using swemu::testing::TestDirFor;

TEST(NetnsLearningTest, HostsWithOnlyAnAddressReachEachOtherThroughALearningSwitch) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = TestDirFor("netns_learning_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "sw.ini") << "[switch]\nname = lsw\nports = 3\nprogram = l2l3\n"
                                << "[program]\nlearning = on\nmac_age = 60\n";
  std::ofstream(dir + "net.topo")
      << "[topology]\nswitch = lsw " << dir << "sw.ini\n"
      << "host = lsw:0 name=lh0 ip=10.0.9.1/24\n"
      << "host = lsw:1 name=lh1 ip=10.0.9.2/24\n"
      << "host = lsw:2 name=lh2 ip=10.0.9.3/24\n"
      << "run = lh2 iperf3 -s -1\n"
      << "run = lh0 sleep 1; iperf3 -c 10.0.9.3 -t 1 -f m && swemu-cli --socket " << dir
      << "out/lsw-control.sock show mac && swemu-cli --socket " << dir
      << "out/lsw-control.sock show digests\n";
  auto run = RunCommandIn(dir, kSwemuBinary + " --topology " + dir +
                                   "net.topo --backend netns --out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string h0 = ReadText(dir + "out/lh0-run1.log");
  for (const char* line : {"iperf Done.", "receiver", "dynamic", "refused (table full) 0"}) {
    EXPECT_NE(h0.find(line), std::string::npos) << line << "\n" << h0;
  }
  // lh0 (port 0) and lh2 (port 2) are learned on their ports, in VLAN 1.
  EXPECT_NE(h0.find("  1     0     "), std::string::npos) << h0;
  EXPECT_NE(h0.find("  1     2     "), std::string::npos) << h0;
  EXPECT_NE(h0.find("digests: emitted "), std::string::npos) << h0;
}

}  // namespace
}  // namespace swemu
