// GoatFabric (hostlib/goat/fabric.h): routes by node id, the static scripts, and plans refused
// with one line when the network cannot run them.
#include "hostlib/goat/fabric.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

GoatFabric Testbed() {
  Result<GoatFabric> fabric = GoatFabric::Create(GoatFabricSpec::ThreeSwitch(2, 8));
  EXPECT_TRUE(fabric.ok()) << fabric.message();
  return *fabric;
}

TEST(GoatFabric, RoutesByNodeIdAlsoOffThePathToThePs) {
  const GoatFabric fabric = Testbed();
  const std::string s1 = fabric.StaticScript(0);
  EXPECT_NE(s1.find("table_add goat_route forward 2 => 3"), std::string::npos) << s1;  // s1-s2
  EXPECT_NE(s1.find("table_add goat_route forward 3 => 2"), std::string::npos) << s1;  // s1-s3
  EXPECT_EQ(fabric.PathToPs(0), (std::vector<uint32_t>{0, 2}));
}

TEST(GoatFabric, BadNetworksAreRefused) {
  GoatFabricSpec spec = GoatFabricSpec::ThreeSwitch(2, 8);
  spec.switches[1].node_id = 1;
  EXPECT_FALSE(GoatFabric::Create(spec).ok());
  spec = GoatFabricSpec::ThreeSwitch(2, 8);
  spec.hosts.back().ps = false;
  EXPECT_NE(GoatFabric::Create(spec).message().find("exactly one PS"), std::string::npos);
  spec = GoatFabricSpec::ThreeSwitch(2, 8);
  spec.links.clear();
  EXPECT_NE(GoatFabric::Create(spec).message().find("cannot reach the PS"), std::string::npos);
  spec = GoatFabricSpec::ThreeSwitch(2, 8);
  spec.hosts[0].port = 9;
  EXPECT_NE(GoatFabric::Create(spec).message().find("has no port 9"), std::string::npos);
}

TEST(GoatFabric, PlansTheNetworkCannotRunAreRefusedWithOneLine) {
  const GoatFabric fabric = Testbed();
  const std::vector<uint32_t> fragments = {4, 4};
  GoatPublished ok;
  ok.node.assign(4, std::vector<uint16_t>{1, 3});
  ok.entries["s1"] = {{0, false, 0, 4, 2}};
  ok.entries["s3"] = {{1, false, 4, 4, 4}};
  EXPECT_TRUE(fabric.CheckPublished(ok, fragments).ok())
      << fabric.CheckPublished(ok, fragments).message();
  const struct {
    std::string what;
    std::function<void(GoatPublished&)> change;
    std::string expect;
  } cases[] = {
      {"unknown switch",
       [](GoatPublished& p) {
         p.entries["s9"] = {{0, false, 0, 4, 2}};
       },
       "names switch s9, which the network does not have"},
      {"past memory", [](GoatPublished& p) { p.entries["s3"][0].base = 6; }, "exceeds s3's memory"},
      {"overlap",
       [](GoatPublished& p) {
         p.entries["s1"].push_back({1, false, 2, 4, 2});
       },
       "overlap"},
      {"fan-in", [](GoatPublished& p) { p.entries["s1"][0].fan_in = 65; }, "fan-in 65"},
      {"size", [](GoatPublished& p) { p.entries["s1"][0].size = 3; }, "3 slots for 4 fragments"},
      {"sub-model", [](GoatPublished& p) { p.entries["s1"][0].submodel = 5; }, "no such sub-model"},
      {"node", [](GoatPublished& p) { p.node[2][0] = 7; }, "sends to node 7, which is no switch"},
      {"workers", [](GoatPublished& p) { p.node.pop_back(); }, "nodes for 3 workers"},
  };
  for (const auto& c : cases) {
    GoatPublished bad = ok;
    c.change(bad);
    const Status st = fabric.CheckPublished(bad, fragments);
    ASSERT_FALSE(st.ok()) << c.what;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << c.what << ": " << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << c.what;
  }
}

}  // namespace
}  // namespace swemu
