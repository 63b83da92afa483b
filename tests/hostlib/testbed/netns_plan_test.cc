#include "hostlib/testbed/netns_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace swemu {
namespace {

bool HasArgv(const std::vector<Argv>& list, const Argv& argv) {
  return std::find(list.begin(), list.end(), argv) != list.end();
}

TopologyConfig LeafSpine() {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  EXPECT_TRUE(topo.ok()) << topo.message();
  return topo.ok() ? *topo : TopologyConfig{};
}

TEST(NetnsPlanTest, EachSwitchInItsNamespaceWithItsUsedPortsOnAfPacket) {
  Result<NetnsPlan> plan = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->switches.size(), 3u);
  const NetnsSwitchPlan& leaf1 = plan->switches[0];
  EXPECT_EQ(leaf1.netns, "swemu-sw-leaf1");
  EXPECT_EQ(leaf1.ini_path, "/tmp/tb/leaf1.ini");
  EXPECT_EQ(leaf1.control_socket, "/tmp/tb/leaf1-control.sock");
  // Ports 0 and 1 (hosts) and 2 (the link to the spine); port 3 is unused, so not opened.
  const std::vector<std::pair<PortId, std::string>> devargs{{0, "net_af_packet0,iface=p0"},
                                                            {1, "net_af_packet1,iface=p1"},
                                                            {2, "net_af_packet2,iface=p2"}};
  EXPECT_EQ(leaf1.config.port_devargs, devargs);
  // The link's rate shapes its ports, its delay is the port's wire delay, both ways.
  auto rate = std::find_if(leaf1.config.port_rates.begin(), leaf1.config.port_rates.end(),
                           [](const PortRate& r) { return r.port == 2; });
  ASSERT_NE(rate, leaf1.config.port_rates.end());
  EXPECT_EQ(rate->bps, 10'000'000'000u);
  EXPECT_EQ(leaf1.config.port_effects.at(2).delay_ns, 1000u);
  EXPECT_EQ(plan->switches[2].config.port_effects.at(0).delay_ns, 1000u);  // spine's end
  EXPECT_EQ(leaf1.config.port_effects.at(0).delay_ns, 100u);  // host h0's link, toward h0
  EXPECT_NE(leaf1.config.eal_args.find("--file-prefix " + leaf1.file_prefix), std::string::npos);
  EXPECT_NE(leaf1.file_prefix.find("77"), std::string::npos);
}

TEST(NetnsPlanTest, HostsGetAddressMacGatewayAndSubnetNeighbours) {
  Result<NetnsPlan> plan = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->hosts.size(), 4u);
  const NetnsHostPlan& h0 = plan->hosts[0];
  EXPECT_EQ(h0.netns, "swemu-h0");
  EXPECT_EQ(h0.switch_netns, "swemu-sw-leaf1");
  EXPECT_EQ(h0.iface, "p0");
  EXPECT_EQ(h0.attachment, "leaf1:0");
  EXPECT_TRUE(HasArgv(h0.setup, {"ip", "link", "add", "p0", "netns", "swemu-sw-leaf1", "type",
                                 "veth", "peer", "name", "eth0", "netns", "swemu-h0"}));
  EXPECT_TRUE(HasArgv(
      h0.setup, {"ip", "-n", "swemu-h0", "link", "set", "eth0", "address", "00:00:00:00:01:01"}));
  EXPECT_TRUE(
      HasArgv(h0.setup, {"ip", "-n", "swemu-h0", "addr", "add", "10.0.1.1/24", "dev", "eth0"}));
  // h1 shares h0's subnet: a permanent neighbour; h2 and h3 are reached through the gateway.
  EXPECT_TRUE(HasArgv(h0.setup, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.1.2", "lladdr",
                                 "00:00:00:00:01:02", "dev", "eth0", "nud", "permanent"}));
  EXPECT_FALSE(HasArgv(h0.setup, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.2.1", "lladdr",
                                  "00:00:00:00:02:01", "dev", "eth0", "nud", "permanent"}));
  EXPECT_TRUE(HasArgv(h0.setup, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.1.254", "lladdr",
                                 "00:00:00:00:01:fe", "dev", "eth0", "nud", "permanent"}));
  EXPECT_TRUE(
      HasArgv(h0.setup, {"ip", "-n", "swemu-h0", "route", "add", "default", "via", "10.0.1.254"}));
  ASSERT_EQ(plan->links.size(), 2u);
  EXPECT_EQ(plan->links[0].a_netns, "swemu-sw-leaf1");
  EXPECT_EQ(plan->links[0].a_iface, "p2");
  EXPECT_EQ(plan->links[0].b_netns, "swemu-sw-spine");
  EXPECT_EQ(plan->links[0].b_iface, "p0");
}

std::string WriteTopology(const std::string& body) {
  const std::string dir = ::testing::TempDir() + "netns_plan_test/";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "a.ini") << "[switch]\nports = 2\n";
  std::ofstream(dir + "t.topo") << "[topology]\nswitch = a a.ini\nswitch = b a.ini\n" << body;
  return dir + "t.topo";
}

TEST(NetnsPlanTest, RefusesWhatCannotBeBuiltBeforeTouchingAnything) {
  struct Case {
    const char* body;
    const char* expected;
  };
  for (const Case& c :
       {Case{"host = a:0 name=x\nhost = a:0 name=y\n", "host y: a:0 is already used"},
        Case{"host = a:5\n", "host a-p5: a has 2 ports, no port 5"},
        Case{"link = a:0 c:0\n", "link a:0 c:0: no switch named c"},
        Case{"host = a:0\nlink = a:0 b:0\n", "a:0 is already used"},
        Case{"host = a:0 name=sw-b\n", "two namespaces named swemu-sw-b"}}) {
    Result<TopologyConfig> topo = LoadTopology(WriteTopology(c.body));
    ASSERT_TRUE(topo.ok()) << topo.message();
    Result<NetnsPlan> plan = PlanNetnsTestbed(*topo, "/tmp/tb", 1);
    ASSERT_FALSE(plan.ok()) << c.body;
    EXPECT_NE(plan.message().find(c.expected), std::string::npos) << plan.message();
    EXPECT_EQ(plan.message().find('\n'), std::string::npos);
  }
}

TEST(NetnsPlanTest, AnInputPcapIsAReplayOnItsHost) {
  const std::string pcap = SWEMU_SOURCE_DIR "/configs/pcap/h0_to_all.pcap";
  Result<NetnsPlan> plan =
      PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77, {{"leaf1", 0, pcap}}, "/b/swemu-replay");
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->runs.size(), 1u);
  EXPECT_EQ(plan->runs[0].host, "h0");
  EXPECT_EQ(plan->runs[0].netns, "swemu-h0");
  EXPECT_EQ(plan->runs[0].command,
            "'/b/swemu-replay' --iface eth0 --in '" + pcap + "' --out '/tmp/tb/h0-rx.pcap'");
  for (const NetnsReplay& bad : {NetnsReplay{"leaf1", 3, pcap}, NetnsReplay{"", 0, pcap},
                                 NetnsReplay{"leaf1", 0, "/no/such.pcap"}}) {
    Result<NetnsPlan> refused = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77, {bad});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("--in "), std::string::npos) << refused.message();
  }
}

}  // namespace
}  // namespace swemu
