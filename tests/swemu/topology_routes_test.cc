#include "swemu/topology_routes.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

LinkSpec Link(const std::string& a, PortId ap, const std::string& b, PortId bp) {
  LinkSpec l;
  l.a = a;
  l.a_port = ap;
  l.b = b;
  l.b_port = bp;
  return l;
}

// Two leaves under two spines: leaf0 ports 2, 3 go to spine0, spine1.
Result<TopologyRoutes> LeafSpine() {
  return TopologyRoutes::Compute({"leaf0", "leaf1", "spine0", "spine1"},
                                 {Link("leaf0", 2, "spine0", 0), Link("leaf0", 3, "spine1", 0),
                                  Link("leaf1", 2, "spine0", 1), Link("leaf1", 3, "spine1", 1)},
                                 {{"leaf0", 0}, {"leaf1", 1}});
}

TEST(TopologyRoutesTest, HopsAndTheFirstListedLinkWinsATie) {
  auto r = LeafSpine();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->Hops(0, 1), 2u);
  EXPECT_EQ(r->Hops(0, 2), 1u);
  EXPECT_EQ(r->PortTowards(0, 1), 2);  // via spine0: its link is listed first
  EXPECT_EQ(r->NextSwitch(0, 1), 2);
  EXPECT_EQ(r->PortTowards(2, 1), 1);
  EXPECT_EQ(r->SwitchPath(0, 1), (std::vector<uint32_t>{0, 2, 1}));
}

TEST(TopologyRoutesTest, EveryEqualCostFirstHopInLinkOrder) {
  auto r = LeafSpine();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->PortsTowards(0, 1), (std::vector<PortId>{2, 3}));
  EXPECT_EQ(r->PortsTowards(2, 3), (std::vector<PortId>{0, 1}));  // spine to spine: via leaves
  EXPECT_TRUE(r->PortsTowards(1, 1).empty());
}

TEST(TopologyRoutesTest, TheNeighbourAtAPort) {
  auto r = LeafSpine();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->NeighbourAt(0, 2), 2);  // leaf0:2 -- spine0
  EXPECT_EQ(r->NeighbourAt(0, 3), 3);
  EXPECT_EQ(r->NeighbourAt(3, 1), 1);  // spine1:1 -- leaf1
  EXPECT_EQ(r->NeighbourAt(0, 0), -1);  // a host's port
}

TEST(TopologyRoutesTest, PortToAHostIsItsOwnPortOnItsSwitch) {
  auto r = LeafSpine();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->PortToHost(0, 0), 0);
  EXPECT_EQ(r->PortToHost(1, 1), 1);
  EXPECT_EQ(r->PortToHost(1, 0), 2);
  EXPECT_EQ(r->PortToHost(3, 0), 0);
  EXPECT_EQ(r->HostSwitch(1), 1u);
}

TEST(TopologyRoutesTest, UnreachableAndUnknownSwitches) {
  auto r = TopologyRoutes::Compute({"a", "b"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Hops(0, 1), TopologyRoutes::kNone);
  EXPECT_EQ(r->PortTowards(0, 1), -1);
  EXPECT_TRUE(r->SwitchPath(0, 1).empty());
  auto bad = TopologyRoutes::Compute({"a"}, {Link("a", 0, "c", 0)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no switch named c"), std::string::npos) << bad.message();
}

TEST(TopologyRoutesTest, FromTheBundledLeafSpine) {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/leaf_spine.topo");
  ASSERT_TRUE(topo.ok()) << topo.message();
  auto r = TopologyRoutes::Compute(*topo);
  ASSERT_TRUE(r.ok()) << r.message();
  const uint32_t leaf1 = r->SwitchIndex("leaf1");
  EXPECT_EQ(r->PortToHost(leaf1, 2), 2);  // h2 is under leaf2: up to the spine
  EXPECT_EQ(r->PortToHost(r->SwitchIndex("spine"), 2), 1);
}

}  // namespace
}  // namespace swemu
