#include "hostlib/testbed/processes_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace swemu {
namespace {

TopologyConfig LeafSpine() {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  EXPECT_TRUE(topo.ok()) << topo.message();
  return topo.ok() ? *topo : TopologyConfig{};
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(ProcessesPlanTest, HostPortsServeVhostAndLinksAttachTheLaterSwitch) {
  Result<TestbedPlan> plan = PlanProcessesTestbed(LeafSpine(), "/tmp/tb", 9);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->switches.size(), 3u);
  EXPECT_TRUE(plan->steps.empty());  // nothing to make in the system: no root needed
  const TestbedSwitch& leaf1 = plan->switches[0];
  EXPECT_TRUE(leaf1.launch.empty());
  // leaf1 is listed before the spine: it serves its end of the link; the spine attaches.
  const std::vector<std::pair<PortId, std::string>> leaf1_devargs{
      {0, "net_vhost0,iface=/tmp/tb/leaf1-p0.sock,queues=1"},
      {1, "net_vhost1,iface=/tmp/tb/leaf1-p1.sock,queues=1"},
      {2, "net_vhost2,iface=/tmp/tb/leaf1-p2.sock,queues=1"}};
  EXPECT_EQ(leaf1.config.port_devargs, leaf1_devargs);
  EXPECT_EQ(leaf1.served.size(), 3u);
  const TestbedSwitch& spine = plan->switches[2];
  EXPECT_EQ(spine.config.port_devargs.at(0).second,
            "net_virtio_user0,path=/tmp/tb/leaf1-p2.sock,queues=1,queue_size=1024");
  EXPECT_TRUE(spine.served.empty());
  EXPECT_EQ(spine.config.port_effects.at(0).delay_ns, 1000u);  // the link's delay, both ways
  EXPECT_EQ(plan->hosts.at(0).reach,
            "virtio_user net_virtio_user0,path=/tmp/tb/leaf1-p0.sock,queues=1,queue_size=1024");
}

TEST(ProcessesPlanTest, RunsGetTheirPortsDevargsAndEalAndReplaysUseThem) {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine_iperf.topo");
  ASSERT_TRUE(topo.ok()) << topo.message();
  const std::string pcap = SWEMU_SOURCE_DIR "/configs/pcap/h0_to_all.pcap";
  Result<TestbedPlan> plan =
      PlanProcessesTestbed(*topo, "/tmp/tb", 9, {{"leaf1", 0, pcap}}, "/b/swemu-replay");
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->runs.size(), 3u);
  const TestbedRun& h2 = plan->runs[0];
  EXPECT_EQ(h2.host, "h2");
  EXPECT_TRUE(h2.launch.empty());
  EXPECT_TRUE(
      Has(h2.env,
          "SWEMU_DEVARGS=net_virtio_user0,path=/tmp/tb/leaf2-p0.sock,queues=1,queue_size=1024"));
  const TestbedRun& replay = plan->runs[2];
  EXPECT_EQ(replay.host, "h0");
  EXPECT_EQ(replay.command, "'/b/swemu-replay' --port \"$SWEMU_DEVARGS\" --in '" + pcap +
                                "' --out '/tmp/tb/h0-rx.pcap' -- $SWEMU_EAL");
  EXPECT_TRUE(std::any_of(replay.env.begin(), replay.env.end(), [](const std::string& e) {
    return e.rfind("SWEMU_EAL=", 0) == 0 && e.find("--file-prefix swemu-tb9-host-h0") != e.npos;
  }));
  EXPECT_TRUE(Has(plan->file_prefixes, "swemu-tb9-host-h0"));
}

TEST(ProcessesPlanTest, ASocketPathTooLongIsRefused) {
  Result<TestbedPlan> plan = PlanProcessesTestbed(LeafSpine(), "/tmp/" + std::string(120, 'x'), 9);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.message().find("longer than a socket path may be"), std::string::npos)
      << plan.message();
}

}  // namespace
}  // namespace swemu
