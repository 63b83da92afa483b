// ProbeEmbed's probes as packets: echo probes in rounds of disjoint pairs through an emulated
// three-tier datacenter of l2l3 switches in the virtual-time engine (hostlib/plink/datacenter.h),
// then the embedding and the grouping on what they measured.
#include "hostlib/plink/datacenter.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/embed.h"
#include "hostlib/plink/grouping.h"
#include "pipeline/engine/engine.h"

namespace swemu {
namespace {

TEST(CircleRounds, EveryPairOnceNoNodeTwiceInARound) {
  for (uint32_t n : {2u, 5u, 16u, 17u}) {
    const auto rounds = CircleRounds(n);
    EXPECT_EQ(rounds.size(), n % 2 == 0 ? n - 1 : n) << n;
    std::vector<std::vector<int>> seen(n, std::vector<int>(n, 0));
    for (const auto& pairs : rounds) {
      std::vector<int> used(n, 0);
      for (const auto& [a, b] : pairs) {
        ASSERT_LT(a, b);
        EXPECT_EQ(++used[a], 1);
        EXPECT_EQ(++used[b], 1);
        ++seen[a][b];
      }
    }
    for (uint32_t a = 0; a < n; ++a) {
      for (uint32_t b = a + 1; b < n; ++b) EXPECT_EQ(seen[a][b], 1) << a << "," << b;
    }
  }
  EXPECT_TRUE(CircleRounds(1).empty());
}

void ProbeAndEmbed(std::vector<uint32_t> fanout, uint32_t per_rack, uint64_t seed, double* raw,
                   double* embedded, double* ami) {
  DatacenterSpec spec;
  spec.fanout = fanout;
  spec.per_rack = per_rack;
  spec.tier_delay_ns.assign(fanout.size() + 1, 1'000);
  for (std::size_t l = 0; l < fanout.size(); ++l)
    spec.tier_delay_ns[l] = 4'000 << (2 * (fanout.size() - 1 - l));
  spec.seed = seed;
  // One echo per pair and a busy host's jitter: raw probes well short of the truth.
  spec.prober.samples = 1;
  spec.jitter_mean_ns = 40'000;
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  ASSERT_TRUE(dc.ok()) << dc.message();
  uint32_t missing = 0;
  Result<DistanceMatrix> probes = (*dc)->ProbeDistances(&missing);
  ASSERT_TRUE(probes.ok()) << probes.message();
  EXPECT_EQ(missing, 0u);
  *raw = Paia((*dc)->locations(), *probes)->paia();
  EmbedOptions eo;
  eo.startup_cost = true;
  eo.seed = seed;
  Result<Embedding> e = EmbedProbes(*probes, eo);
  ASSERT_TRUE(e.ok());
  *embedded = Paia((*dc)->locations(), e->Distances())->paia();
  Result<Grouping> g = ConstrainedKMeans(e->coords, e->dims, {});
  ASSERT_TRUE(g.ok());
  std::vector<uint32_t> racks;
  for (const NodeLocation& l : (*dc)->locations()) racks.push_back(l[l.size() - 2]);
  *ami = AdjustedMutualInformation(g->group_of, racks);
  std::printf("%zu hosts, seed %llu: PAIA raw %.3f embedded %.3f, AMI with the racks %.3f\n",
              racks.size(), static_cast<unsigned long long>(seed), *raw, *embedded, *ami);
}

TEST(EmulatedDatacenter, ProbesThroughSwitchesThenEmbeddingAndGroups) {
  double raw = 0, embedded = 0, ami = 0;
  double sum_raw = 0, sum_embedded = 0, sum_ami = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    ProbeAndEmbed({2, 2}, 4, seed, &raw, &embedded, &ami);
    sum_raw += raw / 3;
    sum_embedded += embedded / 3;
    sum_ami += ami / 3;
  }
  EXPECT_LT(sum_raw, 0.97);
  EXPECT_GT(sum_embedded, sum_raw);
  EXPECT_GT(sum_ami, 0.3);  // 0.43 over seeds 1-3; Balanced Random about 0
}

TEST(EmulatedDatacenter, AHostThatLeftIsNamed) {
  DatacenterSpec spec;
  spec.fanout = {2};
  spec.per_rack = 2;
  spec.tier_delay_ns = {5'000, 1'000};
  spec.prober.timeout_ns = 200'000;
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  ASSERT_TRUE(dc.ok()) << dc.message();
  (*dc)->TakeDown(3);
  Result<DistanceMatrix> probes = (*dc)->ProbeDistances();
  ASSERT_FALSE(probes.ok());
  EXPECT_NE(probes.message().find("node 3 "), std::string::npos) << probes.message();
}

// Probes that time out: on lossy host links some pairs get no reply at all. They are counted, get
// the largest distance measured (the documented fallback), and the matrix still embeds.
TEST(EmulatedDatacenter, UnansweredPairsGetTheLargestDistance) {
  DatacenterSpec spec;
  spec.fanout = {2, 2};
  spec.per_rack = 3;
  spec.prober.samples = 1;
  spec.prober.timeout_ns = 300'000;
  spec.host_link_loss = 0.1;  // an echo crosses four host links: about 1 in 3 is lost
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  ASSERT_TRUE(dc.ok()) << dc.message();
  uint32_t missing = 0;
  const TimeNs before = (*dc)->engine().Now();
  Result<DistanceMatrix> probes = (*dc)->ProbeDistances(&missing);
  ASSERT_TRUE(probes.ok()) << probes.message();
  EXPECT_GT(missing, 0u);
  EXPECT_LT(missing, 66u / 2);
  // Rounds of 12 hosts: 11, each ending at its timeout at the latest.
  EXPECT_LE((*dc)->engine().Now() - before, 11 * (300'000 + 20'000) + 1'000'000);
  double largest = 0;
  uint32_t at_largest = 0;
  for (uint32_t a = 0; a < 12; ++a) {
    for (uint32_t b = a + 1; b < 12; ++b) largest = std::max(largest, probes->at(a, b));
  }
  for (uint32_t a = 0; a < 12; ++a) {
    for (uint32_t b = a + 1; b < 12; ++b) at_largest += probes->at(a, b) == largest ? 1 : 0;
  }
  EXPECT_GE(at_largest, missing);
  EXPECT_TRUE(EmbedProbes(*probes, {}).ok());
}

// Unbalanced racks and rates per tier build; counts and rates that cannot be are refused.
TEST(EmulatedDatacenter, UnbalancedRacksAndTierRates) {
  DatacenterSpec spec;
  spec.fanout = {3};
  spec.rack_hosts = {1, 5, 2};
  spec.tier_delay_ns = {5'000, 1'000};
  spec.tier_rate_bps = {1'000'000'000, 10'000'000'000};
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  ASSERT_TRUE(dc.ok()) << dc.message();
  EXPECT_EQ((*dc)->hosts(), 8u);
  EXPECT_EQ((*dc)->rack_of(), (std::vector<uint32_t>{0, 1, 1, 1, 1, 1, 2, 2}));
  spec.rack_hosts = {1, 5};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
  spec.rack_hosts = {1, 0, 2};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
  spec.rack_hosts = {};
  spec.tier_rate_bps = {0, 1};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
  spec.tier_rate_bps = {1};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
}

TEST(EmulatedDatacenter, BadShapesAreRefused) {
  DatacenterSpec spec;
  spec.fanout = {};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
  spec.fanout = {2, 2};
  spec.tier_delay_ns = {1};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
  spec.fanout = {0};
  EXPECT_FALSE(EmulatedDatacenter::Create(spec).ok());
}

// A topology that is no tree: two leaves under two spines (two shortest paths between the
// leaves) and a host on a spine. The racks are the hosts' switches in host order, the locations
// run from the central switch (spine2, a hop from every host's switch), and reductions over the
// racks are exact.
TopologyConfig TwoSpines() {
  TopologyConfig topo;
  for (const char* name : {"leaf1", "spine1", "spine2", "leaf2"}) {
    LoadedSwitchConfig sw;
    sw.config.name = name;
    sw.config.num_ports = 4;
    sw.config.program = "p4";  // PLink runs l2l3 whatever the file says
    sw.startup_script = "/no/such/script.cli";  // nor its startup script
    topo.switches.push_back(sw);
  }
  for (const LinkSpec& l : {LinkSpec{"leaf1", 2, "spine1", 0, 10'000'000'000, 2'000, 0},
                            LinkSpec{"leaf1", 3, "spine2", 0, 10'000'000'000, 2'000, 0},
                            LinkSpec{"leaf2", 2, "spine1", 1, 10'000'000'000, 2'000, 0},
                            LinkSpec{"leaf2", 3, "spine2", 1, 10'000'000'000, 2'000, 0}}) {
    topo.links.push_back(l);
  }
  const std::pair<const char*, PortId> hosts[] = {
      {"leaf2", 0}, {"leaf1", 0}, {"leaf2", 1}, {"spine2", 2}, {"leaf1", 1}};
  for (const auto& [sw, port] : hosts) {
    TopologyHost h;
    h.sw = sw;
    h.port = port;
    h.delay_ns = 500;
    h.name = std::string(sw) + "-p" + std::to_string(port);
    topo.hosts.push_back(h);
  }
  return topo;
}

TEST(EmulatedDatacenter, FromATopologyTheRacksAreTheHostsSwitches) {
  Result<std::unique_ptr<EmulatedDatacenter>> dc =
      EmulatedDatacenter::Create(TwoSpines(), DatacenterSpec{});
  ASSERT_TRUE(dc.ok()) << dc.message();
  EXPECT_EQ((*dc)->rack_of(), (std::vector<uint32_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ((*dc)->rack_names(), (std::vector<std::string>{"leaf2", "leaf1", "spine2"}));
  EXPECT_EQ((*dc)->tiers(), 2u);
  // From spine2: leaf1 and leaf2 one hop (indices 0 and 1 in switch order); its own host.
  EXPECT_EQ((*dc)->locations()[0], (NodeLocation{1, 0}));
  EXPECT_EQ((*dc)->locations()[1], (NodeLocation{0, 1}));
  EXPECT_EQ((*dc)->locations()[3], (NodeLocation{3}));
  const std::vector<uint64_t> chunks = CutChunks(64'000, 8'000);
  std::vector<std::vector<float>> in(5, std::vector<float>(16'000)), out;
  for (uint32_t h = 0; h < 5; ++h) {
    for (std::size_t i = 0; i < in[h].size(); ++i) in[h][i] = static_cast<float>(h + i % 7);
  }
  for (Result<AggPlan> plan :
       {MakeFlatPlan(5, chunks), MakeTwoLevelPlan((*dc)->rack_of(), chunks)}) {
    ASSERT_TRUE(plan.ok()) << plan.message();
    Result<ReductionRun> run = (*dc)->AllReduce(*plan, in, &out);
    ASSERT_TRUE(run.ok()) << run.message();
    for (uint32_t h = 0; h < 5; ++h) {
      for (std::size_t i = 0; i < in[h].size(); ++i) {
        ASSERT_EQ(out[h][i], static_cast<float>(10 + 5 * (i % 7))) << h << " " << i;
      }
    }
  }
  uint32_t missing = 0;
  ASSERT_TRUE((*dc)->ProbeDistances(&missing).ok());
  EXPECT_EQ(missing, 0u);
}

TEST(EmulatedDatacenter, TopologiesWithoutTwoHostsThatReachEachOtherAreRefused) {
  TopologyConfig topo = TwoSpines();
  topo.links.clear();  // every switch alone
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(topo, {});
  ASSERT_FALSE(dc.ok());
  EXPECT_EQ(dc.message(),
            "datacenter: hosts leaf2-p0 and leaf1-p0 cannot reach each other (no links from "
            "leaf2 to leaf1)");
  topo = TwoSpines();
  topo.hosts.resize(1);
  dc = EmulatedDatacenter::Create(topo, {});
  ASSERT_FALSE(dc.ok());
  EXPECT_EQ(dc.message(), "datacenter: PLink needs at least two hosts, not 1");
}

// The tree as a topology: switches level by level, links from each level up, hosts rack by rack.
TEST(EmulatedDatacenter, TheTreeAsATopology) {
  DatacenterSpec spec;
  spec.fanout = {2};
  spec.rack_hosts = {1, 2};
  spec.tier_delay_ns = {5'000, 1'000};
  spec.tier_rate_bps = {1'000'000'000, 10'000'000'000};
  Result<TopologyConfig> topo = DatacenterTopology(spec);
  ASSERT_TRUE(topo.ok()) << topo.message();
  ASSERT_EQ(topo->switches.size(), 3u);
  EXPECT_EQ(topo->switches[0].config.name, "core");
  EXPECT_EQ(topo->switches[2].config.name, "l1s1");
  EXPECT_EQ(topo->switches[2].config.num_ports, 3);
  EXPECT_EQ(topo->switches[2].config.tm.port_rate_bps, 10'000'000'000u);
  ASSERT_EQ(topo->links.size(), 2u);
  EXPECT_EQ(topo->links[1].a, "l1s1");
  EXPECT_EQ(topo->links[1].a_port, 2);
  EXPECT_EQ(topo->links[1].b, "core");
  EXPECT_EQ(topo->links[1].b_port, 1);
  EXPECT_EQ(topo->links[1].rate_bps, 1'000'000'000u);
  EXPECT_EQ(topo->links[1].delay_ns, 5'000);
  ASSERT_EQ(topo->hosts.size(), 3u);
  EXPECT_EQ(topo->hosts[2].sw, "l1s1");
  EXPECT_EQ(topo->hosts[2].port, 1);
  EXPECT_EQ(topo->hosts[2].delay_ns, 1'000);
  EXPECT_EQ(topo->hosts[2].name, "h2");
}

}  // namespace
}  // namespace swemu
