// GOAT end to end on three switches in the virtual-time engine (hostlib/goat/experiment.h): the
// testbed's topology (Figure 4: 4 workers on each of s1 and s2, the PS on s3), a KRGS plan
// published to the switches, exact sums, the asynchronous mode with a delayed worker, loss.
#include "hostlib/goat/experiment.h"

#include <gtest/gtest.h>

#include <vector>

namespace swemu {
namespace {

GoatFabric Testbed(uint32_t slots = 64) {
  Result<GoatFabric> fabric = GoatFabric::Create(GoatFabricSpec::ThreeSwitch(4, slots));
  EXPECT_TRUE(fabric.ok()) << fabric.message();
  return *fabric;
}

GoatRunOptions Options(GoatScheme scheme) {
  GoatRunOptions o;
  o.scheme = scheme;
  o.elements = 16;
  o.fragments = {40, 40, 40, 40};  // 160 fragments; the three switches hold 64 slots each
  return o;
}

TEST(GoatExperiment, GoatPlanOnThreeSwitchesGivesExactSumsWithLessPsTraffic) {
  const GoatFabric fabric = Testbed();
  Result<GoatRunResult> goat = RunGoatJob(fabric, Options(GoatScheme::kGoat));
  ASSERT_TRUE(goat.ok()) << goat.message();
  Result<GoatRunResult> ps = RunGoatJob(fabric, Options(GoatScheme::kPsOnly));
  ASSERT_TRUE(ps.ok()) << ps.message();
  EXPECT_GT(goat->checked, 0u);
  EXPECT_EQ(goat->mismatches, 0u);
  EXPECT_EQ(ps->mismatches, 0u);
  EXPECT_EQ(ps->ps_gradients, 8u * 160);  // every worker's every fragment
  EXPECT_LT(goat->ps_gradients, ps->ps_gradients / 2);
  EXPECT_LT(goat->gradient_frames, ps->gradient_frames);
  EXPECT_GT(goat->switches.completed, 0u);
  EXPECT_EQ(goat->retransmissions, 0u);
  // Every sub-model got a node for every worker (Theorem 2), and some went to switches.
  uint32_t on_switches = 0;
  for (const auto& row : goat->node) {
    for (uint16_t node : row) on_switches += node != kGoatNodePs ? 1 : 0;
  }
  EXPECT_GT(on_switches, 0u);
}

GoatRunOptions WithStraggler() {
  GoatRunOptions o = Options(GoatScheme::kGoat);
  o.async = true;
  o.rounds = 3;
  o.start_delay.assign(8, 0);
  o.start_delay[5] = 5'000'000;  // worker 5 is 5 ms late every round
  return o;
}

TEST(GoatExperiment, AsynchronousModeCompletesRoundsFromTheKFastest) {
  GoatRunOptions o = WithStraggler();
  o.fixed_k = 7;
  Result<GoatRunResult> r = RunGoatJob(Testbed(), o);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->rounds.size(), 3u);
  EXPECT_EQ(r->rounds[0].k, 8u);  // no history yet: every worker
  for (uint32_t i = 1; i < 3; ++i) {
    EXPECT_EQ(r->rounds[i].k, 7u) << "round " << i;
    // The counted workers are done long before worker 5 sends.
    EXPECT_LT(r->rounds[i].duration_ns, 5'000'000) << "round " << i;
    EXPECT_GT(r->rounds[i].all_done_ns, 5'000'000) << "round " << i;
  }
  EXPECT_GT(r->rounds[0].duration_ns, 5'000'000);  // round 0 waited for worker 5
  EXPECT_EQ(r->excluded, 2u * 160);  // worker 5's results in rounds 1 and 2, not counting it
  EXPECT_EQ(r->mismatches, 0u);      // each result is the exact sum of those it counted
  EXPECT_GT(r->switches.late, 0u);   // its fragments found their slots done
}

TEST(GoatExperiment, AlgorithmTwoLeavesTheStragglerOut) {
  Result<GoatRunResult> r = RunGoatJob(Testbed(), WithStraggler());
  ASSERT_TRUE(r.ok()) << r.message();
  for (uint32_t i = 1; i < 3; ++i) {
    EXPECT_GE(r->rounds[i].k, 2u) << "round " << i;  // psi is infinite for K <= r = 1
    EXPECT_LT(r->rounds[i].k, 8u) << "round " << i;
    EXPECT_LT(r->rounds[i].duration_ns, 5'000'000) << "round " << i;
  }
  EXPECT_GE(r->excluded, 2u * 160);
  EXPECT_EQ(r->mismatches, 0u);
}

TEST(GoatExperiment, FixedKAboveTheWorkersIsRefused) {
  GoatRunOptions o = Options(GoatScheme::kGoat);
  o.async = true;
  o.fixed_k = 9;
  Result<GoatRunResult> r = RunGoatJob(Testbed(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("exceeds the 8 workers"), std::string::npos) << r.message();
}

TEST(GoatExperiment, LossyLinksStillGiveExactSums) {
  for (GoatScheme scheme : {GoatScheme::kGoat, GoatScheme::kAtpStyle}) {
    GoatRunOptions o = Options(scheme);
    o.net.loss = 0.01;
    o.rounds = 2;
    Result<GoatRunResult> r = RunGoatJob(Testbed(), o);
    ASSERT_TRUE(r.ok()) << GoatSchemeName(scheme) << ": " << r.message();
    EXPECT_GT(r->retransmissions, 0u) << GoatSchemeName(scheme);
    EXPECT_EQ(r->mismatches, 0u) << GoatSchemeName(scheme);
  }
}

TEST(GoatExperiment, VaryingRatesHurtAtpStyleSharingMoreThanGoat) {
  const GoatFabric fabric = Testbed(16);  // little memory: ATP-style slots are shared
  GoatRunOptions o = Options(GoatScheme::kGoat);
  o.fragments = {16, 16, 16};
  o.rate_mean = 0.5;
  o.rate_std = 0.2;
  o.rounds = 2;
  Result<GoatRunResult> goat = RunGoatJob(fabric, o);
  ASSERT_TRUE(goat.ok()) << goat.message();
  o.scheme = GoatScheme::kAtpStyle;
  Result<GoatRunResult> atp = RunGoatJob(fabric, o);
  ASSERT_TRUE(atp.ok()) << atp.message();
  EXPECT_EQ(goat->mismatches + atp->mismatches, 0u);
  EXPECT_GT(atp->switches.collisions, 0u);
  EXPECT_LT(goat->ps_gradients, atp->ps_gradients);
}

// The check behind every run's "exact": a result equal to the sum of the workers it counted
// passes, a wrong value, a missing worker's share or a worker that does not exist does not.
TEST(GoatRoundTruth, ChecksEachResultAgainstTheSumOfItsContributors) {
  GoatRoundTruth truth(7, 3, 4, 8);  // 3 workers, 2 fragments of 4 elements
  truth.Start(1);
  int32_t v[3][4];
  for (uint32_t w = 0; w < 3; ++w) truth.Gradient(w, 1, v[w]);
  EXPECT_NE(v[0][0], v[1][0]);  // the workers' values differ
  int32_t all[4], two[4];
  for (int e = 0; e < 4; ++e) {
    all[e] = v[0][e] + v[1][e] + v[2][e];
    two[e] = v[0][e] + v[2][e];
  }
  truth.Check(1, all, 0b111);
  truth.Check(1, two, 0b101);
  EXPECT_EQ(truth.checked(), 8u);
  EXPECT_EQ(truth.mismatches(), 0u);
  truth.Check(1, two, 0b111);  // worker 1's share is missing in every element
  EXPECT_EQ(truth.mismatches(), 4u);
  all[2] += 1;
  truth.Check(1, all, 0b111);
  EXPECT_EQ(truth.mismatches(), 5u);
  truth.Check(1, v[0], 0b1001);  // worker 3 does not exist
  EXPECT_EQ(truth.mismatches(), 9u);
  truth.Start(2);  // another round, other values
  int32_t next[4];
  truth.Gradient(0, 1, next);
  EXPECT_NE(std::vector<int32_t>(next, next + 4), std::vector<int32_t>(v[0], v[0] + 4));
}

// A small fat-tree (k = 4, 2 servers per edge: 20 switches, 15 workers) runs every scheme with
// exact sums, GOAT's PS traffic below PS-only's.
TEST(GoatExperiment, TheFatTreeRunsEverySchemeExactly) {
  Result<GoatFabric> fabric =
      GoatFabric::Create(GoatFabricSpec::FatTree(4, 16, {"edge0", "edge5", "agg2", "core1"}, 64));
  ASSERT_TRUE(fabric.ok()) << fabric.message();
  uint64_t ps_gradients[3] = {};
  for (GoatScheme scheme : {GoatScheme::kGoat, GoatScheme::kAtpStyle, GoatScheme::kPsOnly}) {
    GoatRunOptions o = Options(scheme);
    o.rate_mean = 0.5;
    o.rate_std = 0.2;
    Result<GoatRunResult> r = RunGoatJob(*fabric, o);
    ASSERT_TRUE(r.ok()) << GoatSchemeName(scheme) << ": " << r.message();
    EXPECT_EQ(r->checked, 15u * 160 * 16) << GoatSchemeName(scheme);
    EXPECT_EQ(r->mismatches, 0u) << GoatSchemeName(scheme);
    ps_gradients[static_cast<int>(scheme)] = r->ps_gradients;
  }
  EXPECT_EQ(ps_gradients[2], 15u * 160);
  EXPECT_LT(ps_gradients[0], ps_gradients[2]);
}

}  // namespace
}  // namespace swemu
