// Issue 37's proof that a ToR on two lcores behaves as on one: configs/tor.ini (MAC learning,
// router interfaces, dynamic thresholds) run with --workers 2 ([dpdk] workers = 2: two replicas
// of the switch, one per lcore), on net_af_packet ports, hosts in network namespaces with only
// an address and a default route. Pings cross within a subnet (bridged on learned MACs) and
// between subnets (routed on neighbours one control plane resolved for both lcores), TCP runs
// routed, and `show mac` and `show arp` list every host. Only correctness is checked, not
// throughput: the two lcores share the machine's cores with the hosts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/hostlib/testbed/netns_ping.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using swemu::testing::ExpectTorTablesLearned;
using swemu::testing::FreshDirWithPing;
using swemu::testing::kSwemuBinary;
using swemu::testing::ReadText;
using swemu::testing::RunCommandIn;

TEST(NetnsWorkersTest, TheBundledTorOnTwoLcoresLearnsRoutesAndCarriesTcp) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const std::string dir = FreshDirWithPing("netns_workers_");
  const std::string ping = "python3 " + dir + "ping.py ";
  const std::string cli = "swemu-cli --socket " + dir + "out/tor-control.sock ";
  std::ofstream(dir + "net.topo") << "[topology]\nswitch = tor " SWEMU_SOURCE_DIR
                                     "/configs/tor.ini\n"
                                  << "host = tor:0 name=wk1 ip=10.1.1.2/24 gw=10.1.1.1\n"
                                  << "host = tor:1 name=wk2 ip=10.1.1.3/24 gw=10.1.1.1\n"
                                  << "host = tor:2 name=wk3 ip=10.1.2.2/24 gw=10.1.2.1\n"
                                  << "host = tor:3 name=wkup ip=10.1.255.2/30 gw=10.1.255.1\n"
                                  << "run = wkup ip addr add 192.0.2.1/32 dev eth0\n"
                                  << "run = wk3 iperf3 -s -1\n"
                                  << "run = wk2 " << ping << "10.1.1.1 2\n"
                                  << "run = wk1 sleep 1; " << ping << "10.1.1.3 3 && " << ping
                                  << "10.1.2.2 3 && " << ping << "192.0.2.1 3 && "
                                  << "iperf3 -c 10.1.2.2 -t 2 -f m && " << cli << "show mac && "
                                  << cli << "show arp && " << cli << "show runtime\n";
  auto run = RunCommandIn(dir, kSwemuBinary + " --topology " + dir +
                                   "net.topo --backend netns --workers 2 --run-for 12s "
                                   "--out-dir " + dir + "out");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(ReadText(dir + "out/tor.ini").find("workers = 2"), std::string::npos);
  const std::string h1 = ReadText(dir + "out/wk1-run3.log");
  for (const char* line : {"reply from 10.1.1.3 seq 2", "reply from 10.1.2.2 seq 2",
                           "reply from 192.0.2.1 seq 2", "iperf Done.", "receiver"}) {
    EXPECT_NE(h1.find(line), std::string::npos) << line << "\n" << h1;
  }
  // Two lcores ran the switch (show runtime: a section per lcore).
  EXPECT_NE(h1.find("lcore 1"), std::string::npos) << h1;
  ExpectTorTablesLearned(h1);  // show mac, then show arp
}

}  // namespace
}  // namespace swemu
