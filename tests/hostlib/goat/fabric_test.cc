// GoatFabric (hostlib/goat/fabric.h): routes by node id, the static scripts, plans refused with
// one line when the network cannot run them, and the network read from a topology file.
#include "hostlib/goat/fabric.h"

#include <gtest/gtest.h>

#include <functional>

#include "hostlib/goat/gina_lp.h"

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

// The paper's fat-tree (VII-D): k = 8, 80 switches, 192 servers, 6 on each edge switch, the PS
// on the last edge; paths up to the core and down; KRGS plans it.
TEST(GoatFabric, TheFatTreeHasThePapersShapeRoutesAndPlans) {
  GoatFabricSpec all = GoatFabricSpec::FatTree(8, 192, {"edge0", "agg1", "core5", "edge31"}, 100);
  ASSERT_EQ(all.switches.size(), 80u);
  EXPECT_EQ(all.switches[0].name, "core0");
  EXPECT_EQ(all.switches[16].name, "agg0");
  EXPECT_EQ(all.switches[48].name, "edge0");
  EXPECT_EQ(all.switches[79].node_id, 80);
  EXPECT_EQ(all.links.size(), 8u * (16 + 16));
  ASSERT_EQ(all.hosts.size(), 192u);
  EXPECT_TRUE(all.hosts.back().ps);
  EXPECT_EQ(all.hosts.back().sw, "edge31");
  uint32_t on_edge0 = 0, slots = 0;
  for (const auto& h : all.hosts) on_edge0 += h.sw == "edge0" ? 1 : 0;
  for (const auto& sw : all.switches) slots += sw.slots;
  EXPECT_EQ(on_edge0, 6u);
  EXPECT_EQ(slots, 400u);
  // 191 workers are more than the header's bitmap holds: the first 40 run.
  EXPECT_FALSE(GoatFabric::Create(all).ok());
  all.hosts.erase(all.hosts.begin() + 40, all.hosts.end() - 1);
  Result<GoatFabric> fabric = GoatFabric::Create(all);
  ASSERT_TRUE(fabric.ok()) << fabric.message();
  // w0 on edge0 (pod 0): edge0, agg0, core0 (the first links listed), agg28, edge31. w28 on
  // edge28, in the PS's pod 7: up to an aggregation switch and down. Server 31 is the PS, so
  // worker 31 is server 32, on edge0 again.
  EXPECT_EQ(fabric->PathToPs(0), (std::vector<uint32_t>{48, 16, 0, 44, 79}));
  EXPECT_EQ(fabric->PathToPs(28), (std::vector<uint32_t>{76, 44, 79}));
  EXPECT_EQ(fabric->PathToPs(31), fabric->PathToPs(0));
  Result<GinaProblem> problem = fabric->Problem(std::vector<uint64_t>(8, 40));
  ASSERT_TRUE(problem.ok()) << problem.message();
  EXPECT_EQ(problem->num_switches(), 4u);
  Result<GinaLpSolution> lp = SolveGinaLp(*problem);
  ASSERT_TRUE(lp.ok()) << lp.message();
  Result<GinaPlan> plan = RoundKrgs(*problem, *lp, 1, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.message();
  const GoatPublished published = fabric->PublishPlan(*problem, *plan);
  EXPECT_TRUE(fabric->CheckPublished(published, std::vector<uint32_t>(8, 40)).ok());
  uint32_t on_switches = 0;
  for (const auto& row : published.node) {
    for (uint16_t node : row) on_switches += node != kGoatNodePs ? 1 : 0;
  }
  EXPECT_GT(on_switches, 0u);
}

// The bundled testbed file (configs/goat_testbed/goat.topo, what swemu-goat publish writes) is the
// built-in three-switch testbed: the same switches, node ids, memory, hosts and routes.
TEST(GoatFabricFromTopology, TheBundledTestbedIsTheThreeSwitchTestbed) {
  Result<TopologyConfig> topo = LoadTopology(SWEMU_SOURCE_DIR "/configs/goat_testbed/goat.topo");
  ASSERT_TRUE(topo.ok()) << topo.message();
  Result<GoatFabricSpec> spec = GoatFabricSpec::FromTopology(*topo);
  ASSERT_TRUE(spec.ok()) << spec.message();
  Result<GoatFabric> from_file = GoatFabric::Create(*spec);
  ASSERT_TRUE(from_file.ok()) << from_file.message();
  Result<GoatFabric> built_in = GoatFabric::Create(GoatFabricSpec::ThreeSwitch(4, 78));
  ASSERT_TRUE(built_in.ok());
  ASSERT_EQ(spec->switches.size(), 3u);
  for (uint32_t s = 0; s < 3; ++s) {
    const auto& a = spec->switches[s];
    const auto& b = built_in->spec().switches[s];
    EXPECT_EQ(a.name + " " + std::to_string(a.node_id) + " " + std::to_string(a.ports) + " " +
                  std::to_string(a.slots),
              b.name + " " + std::to_string(b.node_id) + " " + std::to_string(b.ports) + " " +
                  std::to_string(b.slots));
    EXPECT_EQ(from_file->StaticScript(s), built_in->StaticScript(s)) << a.name;
  }
  ASSERT_EQ(spec->hosts.size(), built_in->spec().hosts.size());
  for (std::size_t h = 0; h < spec->hosts.size(); ++h) {
    const auto& a = spec->hosts[h];
    const auto& b = built_in->spec().hosts[h];
    EXPECT_EQ(a.name + "@" + a.sw + ":" + std::to_string(a.port) + (a.ps ? " ps" : ""),
              b.name + "@" + b.sw + ":" + std::to_string(b.port) + (b.ps ? " ps" : ""));
    EXPECT_EQ(a.delay_ns, 1000);  // the file's delay=1us
  }
  EXPECT_EQ(spec->links[0].rate_bps, 10'000'000'000u);
  EXPECT_EQ(spec->links[0].delay_ns, 1000);
}

// A topology made in code: switch s's program and slots, links, hosts by role.
TopologyConfig Topology(const std::vector<std::pair<std::string, std::string>>& roles) {
  TopologyConfig topo;
  topo.path = "t.topo";
  for (const char* name : {"a", "b", "c"}) {
    LoadedSwitchConfig sw;
    sw.config.name = name;
    sw.config.num_ports = 4;
    sw.config.program = "goat";
    topo.switches.push_back(sw);
  }
  topo.switches[0].config.program_options.Set("slots", "40");  // programmable
  topo.switches[2].config.program = "l2l3";                    // not goat: not programmable
  topo.switches[2].config.program_options.Set("slots", "40");
  topo.links = {{"a", 3, "b", 3, 1'000'000'000, 5000, 0.01}, {"b", 2, "c", 2, 0, 0, 0}};
  for (const auto& [at, role] : roles) {
    TopologyHost h;
    h.sw = at.substr(0, 1);
    h.port = static_cast<PortId>(std::stoi(at.substr(2)));
    h.name = at.substr(0, 1) + at.substr(2);
    h.role = role;
    h.delay_ns = 700;
    topo.hosts.push_back(h);
  }
  return topo;
}

TEST(GoatFabricFromTopology, SlotsOnlyFromGoatSwitchesRolesInFileOrderLinksTheirOwn) {
  Result<GoatFabricSpec> spec = GoatFabricSpec::FromTopology(
      Topology({{"a:0", "worker"}, {"c:0", "ps"}, {"b:0", ""}, {"c:1", "worker"}}));
  ASSERT_TRUE(spec.ok()) << spec.message();
  EXPECT_EQ(spec->switches[0].slots, 40u);
  EXPECT_EQ(spec->switches[1].slots, 0u);  // goat without slots
  EXPECT_EQ(spec->switches[2].slots, 0u);  // l2l3
  EXPECT_EQ(spec->switches[2].node_id, 3u);
  ASSERT_EQ(spec->hosts.size(), 3u);  // b:0 has no role: left out
  EXPECT_EQ(spec->hosts[0].name, "a0");
  EXPECT_EQ(spec->hosts[1].name, "c1");
  EXPECT_TRUE(spec->hosts[2].ps);
  EXPECT_EQ(spec->hosts[2].delay_ns, 700);
  EXPECT_EQ(spec->links[0].rate_bps, 1'000'000'000u);
  EXPECT_EQ(spec->links[0].delay_ns, 5000);
  EXPECT_EQ(spec->links[0].loss, 0.01);
  Result<GoatFabric> fabric = GoatFabric::Create(*spec);
  ASSERT_TRUE(fabric.ok()) << fabric.message();
  EXPECT_EQ(fabric->PathToPs(0), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(GoatFabricFromTopology, AMissingOrSecondPsOrAnUnreachableWorkerIsOneLine) {
  const struct {
    std::vector<std::pair<std::string, std::string>> roles;
    std::string expect;
  } cases[] = {
      {{{"a:0", "worker"}}, "no PS: one host should say role=ps"},
      {{{"a:0", "worker"}, {"c:0", "ps"}, {"b:0", "ps"}},
       "more than one host says role=ps (c0, b0)"},
      {{{"c:0", "ps"}}, "no workers: the workers' hosts should say role=worker"},
  };
  for (const auto& c : cases) {
    Result<GoatFabricSpec> spec = GoatFabricSpec::FromTopology(Topology(c.roles));
    ASSERT_FALSE(spec.ok()) << c.expect;
    EXPECT_NE(spec.message().find(c.expect), std::string::npos) << spec.message();
    EXPECT_EQ(spec.message().rfind("t.topo: ", 0), 0u) << spec.message();
    EXPECT_EQ(spec.message().find('\n'), std::string::npos);
  }
  TopologyConfig cut = Topology({{"a:0", "worker"}, {"c:0", "ps"}});
  cut.links.pop_back();  // b-c: c is an island
  Result<GoatFabricSpec> spec = GoatFabricSpec::FromTopology(cut);
  ASSERT_TRUE(spec.ok());
  EXPECT_NE(GoatFabric::Create(*spec).message().find("host a0 cannot reach the PS"),
            std::string::npos);
}

}  // namespace
}  // namespace swemu
