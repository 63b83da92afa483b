#include "hostlib/testbed/netns_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace swemu {
namespace {

// The step that makes `argv`, or nullptr.
const TestbedStep* FindStep(const TestbedPlan& plan, const Argv& argv) {
  for (const TestbedStep& step : plan.steps) {
    if (step.make == argv) return &step;
  }
  return nullptr;
}

bool HasStep(const TestbedPlan& plan, const Argv& argv) { return FindStep(plan, argv) != nullptr; }

TopologyConfig LeafSpine() {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  EXPECT_TRUE(topo.ok()) << topo.message();
  return topo.ok() ? *topo : TopologyConfig{};
}

TEST(NetnsPlanTest, EachSwitchInItsNamespaceWithItsUsedPortsOnAfPacket) {
  Result<TestbedPlan> plan = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->switches.size(), 3u);
  const TestbedSwitch& leaf1 = plan->switches[0];
  EXPECT_EQ(leaf1.launch, (Argv{"ip", "netns", "exec", "swemu-sw-leaf1"}));
  EXPECT_EQ(leaf1.ini_path, "/tmp/tb/leaf1.ini");
  EXPECT_EQ(leaf1.control_socket, "/tmp/tb/leaf1-control.sock");
  const TestbedStep* ns = FindStep(*plan, {"ip", "netns", "add", "swemu-sw-leaf1"});
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(ns->undo, (Argv{"ip", "netns", "del", "swemu-sw-leaf1"}));
  // Ports 0 and 1 (hosts) and 2 (the link to the spine); port 3 is unused, so not opened.
  const std::vector<std::pair<PortId, std::string>> devargs{{0, "net_af_packet0,iface=p0"},
                                                            {1, "net_af_packet1,iface=p1"},
                                                            {2, "net_af_packet2,iface=p2"}};
  EXPECT_EQ(leaf1.config.port_devargs, devargs);
  // The link's rate shapes its ports, its delay is the port's wire delay, both ways.
  EXPECT_EQ(leaf1.config.config.tm.PortRateBps(2), 10'000'000'000u);
  EXPECT_EQ(leaf1.config.port_effects.at(2).delay_ns, 1000u);
  EXPECT_EQ(plan->switches[2].config.port_effects.at(0).delay_ns, 1000u);  // spine's end
  EXPECT_EQ(leaf1.config.port_effects.at(0).delay_ns, 100u);  // host h0's link, toward h0
  EXPECT_NE(leaf1.config.eal_args.find("--file-prefix " + leaf1.file_prefix), std::string::npos);
  EXPECT_NE(leaf1.file_prefix.find("77"), std::string::npos);
  const TestbedStep* link =
      FindStep(*plan, {"ip", "link", "add", "p2", "netns", "swemu-sw-leaf1", "type", "veth", "peer",
                       "name", "p0", "netns", "swemu-sw-spine"});
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->undo, (Argv{"ip", "-n", "swemu-sw-leaf1", "link", "del", "p2"}));
}

TEST(NetnsPlanTest, HostsGetAddressMacGatewayAndSubnetNeighbours) {
  Result<TestbedPlan> plan = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->hosts.size(), 4u);
  EXPECT_EQ(plan->hosts[0].name, "h0");
  EXPECT_EQ(plan->hosts[0].attachment, "leaf1:0");
  EXPECT_EQ(plan->hosts[0].reach, "ip netns exec swemu-h0 bash  (eth0 10.0.1.1/24)");
  EXPECT_TRUE(HasStep(*plan, {"ip", "link", "add", "p0", "netns", "swemu-sw-leaf1", "type", "veth",
                              "peer", "name", "eth0", "netns", "swemu-h0"}));
  EXPECT_TRUE(HasStep(
      *plan, {"ip", "-n", "swemu-h0", "link", "set", "eth0", "address", "00:00:00:00:01:01"}));
  EXPECT_TRUE(
      HasStep(*plan, {"ip", "-n", "swemu-h0", "addr", "add", "10.0.1.1/24", "dev", "eth0"}));
  // h1 shares h0's subnet: a permanent neighbour; h2 and h3 are reached through the gateway.
  EXPECT_TRUE(HasStep(*plan, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.1.2", "lladdr",
                              "00:00:00:00:01:02", "dev", "eth0", "nud", "permanent"}));
  EXPECT_FALSE(HasStep(*plan, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.2.1", "lladdr",
                               "00:00:00:00:02:01", "dev", "eth0", "nud", "permanent"}));
  EXPECT_TRUE(HasStep(*plan, {"ip", "-n", "swemu-h0", "neigh", "replace", "10.0.1.254", "lladdr",
                              "00:00:00:00:01:fe", "dev", "eth0", "nud", "permanent"}));
  EXPECT_TRUE(
      HasStep(*plan, {"ip", "-n", "swemu-h0", "route", "add", "default", "via", "10.0.1.254"}));
  const TestbedStep* offload =
      FindStep(*plan, {"ip", "netns", "exec", "swemu-h0", "ethtool", "-K", "eth0", "tx", "off",
                       "tso", "off", "gso", "off", "gro", "off"});
  ASSERT_NE(offload, nullptr);
  EXPECT_TRUE(offload->best_effort);
  EXPECT_EQ(plan->host_namespaces.size(), 4u);
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
    Result<TestbedPlan> plan = PlanNetnsTestbed(*topo, "/tmp/tb", 1);
    ASSERT_FALSE(plan.ok()) << c.body;
    EXPECT_NE(plan.message().find(c.expected), std::string::npos) << plan.message();
    EXPECT_EQ(plan.message().find('\n'), std::string::npos);
  }
}

TEST(NetnsPlanTest, AnInputPcapIsAReplayOnItsHost) {
  const std::string pcap = SWEMU_SOURCE_DIR "/configs/pcap/h0_to_all.pcap";
  Result<TestbedPlan> plan =
      PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77, {{"leaf1", 0, pcap}}, "/b/swemu-replay");
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->runs.size(), 1u);
  EXPECT_EQ(plan->runs[0].host, "h0");
  EXPECT_EQ(plan->runs[0].launch, (Argv{"ip", "netns", "exec", "swemu-h0"}));
  EXPECT_EQ(plan->runs[0].command,
            "'/b/swemu-replay' --iface eth0 --in '" + pcap + "' --out '/tmp/tb/h0-rx.pcap'");
  for (const TestbedReplay& bad : {TestbedReplay{"leaf1", 3, pcap}, TestbedReplay{"", 0, pcap},
                                   TestbedReplay{"leaf1", 0, "/no/such.pcap"},
                                   TestbedReplay{"leaf1", 0, SWEMU_SOURCE_DIR "/configs"}}) {
    Result<TestbedPlan> refused = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77, {bad});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("--in "), std::string::npos) << refused.message();
  }
}

TEST(NetnsPlanTest, WorkersGiveEachSwitchThatManyLcores) {
  Result<TestbedPlan> one = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77);
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ(one->switches[0].config.workers, 1u);
  EXPECT_NE(one->switches[0].config.eal_args.find(" -l 0 "), std::string::npos);
  Result<TestbedPlan> two = PlanNetnsTestbed(LeafSpine(), "/tmp/tb", 77, {}, "swemu-replay", 2);
  ASSERT_TRUE(two.ok()) << two.message();
  for (const TestbedSwitch& sw : two->switches) {
    EXPECT_EQ(sw.config.workers, 2u) << sw.name;
    // Lcores 0 and 1, each on a CPU (round the machine's).
    EXPECT_NE(sw.config.eal_args.find(" --lcores 0@"), std::string::npos) << sw.config.eal_args;
    EXPECT_NE(sw.config.eal_args.find(",1@"), std::string::npos) << sw.config.eal_args;
    EXPECT_EQ(sw.config.eal_args.find(" -l "), std::string::npos) << sw.config.eal_args;
  }
}

}  // namespace
}  // namespace swemu
