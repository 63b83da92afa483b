// A real-time swemu as the router of two subnets ([interface.N]), hosts in network namespaces
// with nothing but an address and a default route via their gateway: the kernel ARPs for the
// gateway, the switch answers and resolves the far host itself (no MAC written anywhere),
// then ICMP echo crosses the subnets, the gateways answer pings, and TCP runs across.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "tests/hostlib/testbed/netns_ping.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::ExpectTorTablesLearned;
using swemu::testing::FreshDirWithPing;
using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;

// The hand-written switches' two routed subnets: 10.1.1.0/24 on ports 0-1, 10.2.2.0/24 on 2-3.
constexpr const char* kTwoSubnets =
    "[interface.1]\nmac = 02:00:00:00:fe:01\nip = 10.1.1.1/24\nports = 0-1\n"
    "[interface.2]\nmac = 02:00:00:00:fe:02\nip = 10.2.2.1/24\nports = 2-3\n";

// Runs dir's net.topo across network namespaces, its logs in dir/out.
auto RunNetTopo(const std::string& dir) {
  return RunCommandIn(dir, kSwemuBinary + " --topology " + dir + "net.topo --backend netns " +
                               "--out-dir " + dir + "out");
}

TEST(NetnsRouterTest, HostsWithOnlyAGatewayPingAcrossSubnetsAndRunTcp) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_router_");
  std::ofstream(dir + "tor.ini") << "[switch]\nname = rtor\nports = 4\nprogram = l2l3\n"
                                 << kTwoSubnets;
  const std::string ping = "python3 " + dir + "ping.py ";
  std::ofstream(dir + "net.topo") << "[topology]\nswitch = rtor " << dir << "tor.ini\n"
                                  << "host = rtor:0 name=rh1 ip=10.1.1.2/24 gw=10.1.1.1\n"
                                  << "host = rtor:2 name=rh2 ip=10.2.2.2/24 gw=10.2.2.1\n"
                                  << "run = rh2 iperf3 -s -1\n"
                                  << "run = rh1 " << ping << "10.2.2.2 3 && " << ping
                                  << "10.1.1.1 2 && " << ping
                                  << "10.2.2.1 2 && iperf3 -c 10.2.2.2 -t 1 -f m && ip neigh\n";
  auto run = RunNetTopo(dir);
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string h1 = ReadText(dir + "out/rh1-run1.log");
  for (const char* line : {"reply from 10.2.2.2 seq 2", "reply from 10.1.1.1 seq 1",
                           "reply from 10.2.2.1 seq 1", "iperf Done.", "receiver"}) {
    EXPECT_NE(h1.find(line), std::string::npos) << line << "\n" << h1;
  }
  // The host learned its gateway's MAC by ARP, from the switch.
  EXPECT_NE(h1.find("10.1.1.1 dev eth0 lladdr 02:00:00:00:fe:01"), std::string::npos) << h1;
  // The only drop: the first request for rh2 also went out of port 3, which has no device.
  const std::string log = ReadText(dir + "out/rtor.log");
  EXPECT_NE(log.find("drops: link_down 1\n"), std::string::npos) << log;
}

// With MAC learning on too, the switch needs no entry at all: hosts of one subnet reach each
// other bridged (their ARP flooded, their MACs learned), and the other subnet routed.
TEST(NetnsRouterTest, WithLearningASubnetIsBridgedAndTheOtherRoutedWithNoEntry) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_router_");
  std::ofstream(dir + "tor.ini") << "[switch]\nname = ltor\nports = 4\nprogram = l2l3\n"
                                 << "[program]\nlearning = on\n"
                                 << kTwoSubnets;
  const std::string ping = "python3 " + dir + "ping.py ";
  std::ofstream(dir + "net.topo") << "[topology]\nswitch = ltor " << dir << "tor.ini\n"
                                  << "host = ltor:0 name=lh1 ip=10.1.1.2/24 gw=10.1.1.1\n"
                                  << "host = ltor:1 name=lh3 ip=10.1.1.3/24 gw=10.1.1.1\n"
                                  << "host = ltor:2 name=lh2 ip=10.2.2.2/24 gw=10.2.2.1\n"
                                  << "run = lh1 " << ping << "10.1.1.3 3 && " << ping
                                  << "10.2.2.2 3\n";
  auto run = RunNetTopo(dir);
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string h1 = ReadText(dir + "out/lh1-run0.log");
  for (const char* line : {"reply from 10.1.1.3 seq 2", "reply from 10.2.2.2 seq 2"}) {
    EXPECT_NE(h1.find(line), std::string::npos) << line << "\n" << h1;
  }
}

// configs/tor.ini itself, as a user runs it: its PCI ports replaced by veths to four hosts with
// only an address and a default route (two in one subnet, one in the other, the uplink's next
// hop with an address beyond it). Bridged, routed and default-routed pings cross, and the
// switch lists every host in `show mac` (in its subnet's VLAN) and in `show arp`, and its
// queues run on dynamic thresholds.
TEST(NetnsRouterTest, TheBundledTorConfigNeedsNoEntryPerHost) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_router_");
  const std::string ping = "python3 " + dir + "ping.py ";
  const std::string cli = "swemu-cli --socket " + dir + "out/tor-control.sock ";
  std::ofstream(dir + "net.topo") << "[topology]\nswitch = tor " SWEMU_SOURCE_DIR
                                     "/configs/tor.ini\n"
                                  << "host = tor:0 name=tor1 ip=10.1.1.2/24 gw=10.1.1.1\n"
                                  << "host = tor:1 name=tor2 ip=10.1.1.3/24 gw=10.1.1.1\n"
                                  << "host = tor:2 name=tor3 ip=10.1.2.2/24 gw=10.1.2.1\n"
                                  << "host = tor:3 name=torup ip=10.1.255.2/30 gw=10.1.255.1\n"
                                  << "run = torup ip addr add 192.0.2.1/32 dev eth0\n"
                                  << "run = tor2 " << ping << "10.1.1.1 2\n"
                                  << "run = tor1 sleep 1; " << ping << "10.1.1.3 3 && " << ping
                                  << "10.1.2.2 3 && " << ping << "192.0.2.1 3 && " << cli
                                  << "show mac && " << cli << "show arp && " << cli
                                  << "show queues\n";
  auto run = RunNetTopo(dir);
  EXPECT_EQ(run.status, 0) << run.err;
  const std::string h1 = ReadText(dir + "out/tor1-run2.log");
  for (const char* line :
       {"reply from 10.1.1.3 seq 2", "reply from 10.1.2.2 seq 2", "reply from 192.0.2.1 seq 2"}) {
    EXPECT_NE(h1.find(line), std::string::npos) << line << "\n" << h1;
  }
  ExpectTorTablesLearned(h1);  // show mac, then show arp
  // Dynamic thresholds on every queue (tor.ini's [tm] alpha).
  EXPECT_NE(h1.find(", alpha 1/8 "), std::string::npos) << h1;
}

}  // namespace
}  // namespace swemu
