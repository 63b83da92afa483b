// GOAT end to end on three switches in the virtual-time engine (hostlib/goat/experiment.h): the
// testbed's topology (Figure 4: 4 workers on each of s1 and s2, the PS on s3), a KRGS plan
// published to the switches, exact sums, the asynchronous mode with a delayed worker, loss.
#include "hostlib/goat/experiment.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace swemu
