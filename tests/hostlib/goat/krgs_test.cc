// KRGS's rounding (Algorithm 1, steps 2 and 3) checked as the reading notes say it must be:
// every sub-model with k(g) >= 1 gets k(g) switches and every worker's sub-model exactly one
// node (Theorems 1 and 2); choosing frequencies approach x / S_a and y / S_a (the LP values only
// when S_a = 1), statistically; draws whose y / x sum past 1 are normalised; LPT bins keep
// S_a > 0.5 (Lemma 3); memory before repair stays within Eq. 13's 2 B(s) on average and after
// repair never exceeds B(s); plans are reproducible per seed; and truncating the LP solution,
// as the authors' code does, throws in-network aggregation away where rounding keeps it.
#include "hostlib/goat/krgs.h"

#include <gtest/gtest.h>

#include <cmath>

#include "hostlib/goat/gina.h"
#include "hostlib/goat/gina_lp.h"

namespace swemu {
namespace {

// Three switches one hop from every worker, two hops from the PS; one sub-model; `workers`
// workers, each its own class.
GinaProblem ThreeSwitches(uint32_t workers) {
  GinaProblem p;
  p.switch_names = {"s1", "s2", "s3"};
  p.memory = {4, 4, 4};
  p.switch_to_ps = {2, 2, 2};
  for (uint32_t w = 0; w < workers; ++w) {
    p.worker_names.push_back("w" + std::to_string(w));
    p.worker_to_switch.push_back({1, 1, 1});
    p.worker_to_ps.push_back(3);
  }
  p.submodels = {1};
  return p;
}

// A fractional solution given by hand (LP-feasible), one class per worker.
GinaLpSolution Fractional(const GinaProblem& p, std::vector<double> x,
                          const std::vector<std::vector<double>>& y_per_worker) {
  GinaLpSolution s;
  for (uint32_t w = 0; w < p.num_workers(); ++w) {
    s.classes.push_back({{w}});
    s.class_of.push_back(w);
  }
  s.x = {std::move(x)};
  s.y = {y_per_worker};
  return s;
}

constexpr int kSeeds = 20000;

// Within 4 standard deviations of a binomial share.
void ExpectShare(int hits, double p, const std::string& what) {
  const double sigma = std::sqrt(p * (1 - p) / kSeeds);
  EXPECT_NEAR(static_cast<double>(hits) / kSeeds, p, 4 * sigma + 1e-12) << what;
}

TEST(Krgs, SwitchFrequenciesFollowXOverTheBinSum) {
  // x = (0.3, 0.3, 0.6): k = 1, one bin with S_a = 1.2, so 0.25, 0.25, 0.5, not the LP's values.
  const GinaProblem p = ThreeSwitches(1);
  const GinaLpSolution lp = Fractional(p, {0.3, 0.3, 0.6}, {{0.3, 0.3, 0.4, 0.0}});
  int hits[3] = {0, 0, 0}, ps = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    KrgsStats st;
    Result<GinaPlan> plan = RoundKrgs(p, lp, seed, &st);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(st.bins, 1u);
    EXPECT_GT(st.min_bin_sum, 0.5);
    const int32_t n = plan->node[0][0];
    if (n == kGinaPs) {
      ++ps;
    } else {
      ++hits[n];
    }
  }
  // The worker goes to the chosen switch with probability y / x = 1 for s1, s2; 2/3 for s3.
  ExpectShare(hits[0], 0.25, "s1");
  ExpectShare(hits[1], 0.25, "s2");
  ExpectShare(hits[2], 0.5 * 2.0 / 3.0, "s3");
  ExpectShare(ps, 0.5 / 3.0, "PS");
}

TEST(Krgs, BinsByLptAndProbabilitiesPastOneNormalised) {
  // The notes' Theorem 2 example: x = (0.5, 0.5, 1.0), k = 2, LPT bins {s3} and {s1, s2}; a
  // worker with y = (0.5, 0, 0.5) and S(g) = {s1, s3} has y / x = 1 + 0.5: normalised to 2/3
  // and 1/3; with S(g) = {s2, s3}: 0 and 0.5, the PS the other half.
  const GinaProblem p = ThreeSwitches(1);
  const GinaLpSolution lp = Fractional(p, {0.5, 0.5, 1.0}, {{0.5, 0.0, 0.5, 0.0}});
  int s1 = 0, s3_with_s1 = 0, s3_with_s2 = 0, ps = 0, normalised = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    KrgsStats st;
    Result<GinaPlan> plan = RoundKrgs(p, lp, seed, &st);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(st.bins, 2u);
    EXPECT_DOUBLE_EQ(st.min_bin_sum, 1.0);
    normalised += st.normalised;
    const int32_t n = plan->node[0][0];
    const bool with_s1 = st.normalised == 1;  // S(g) = {s1, s3} is the one that sums past 1
    if (n == 0) ++s1;
    if (n == 2) ++(with_s1 ? s3_with_s1 : s3_with_s2);
    if (n == kGinaPs) ++ps;
    EXPECT_NE(n, 1);  // y(s2) = 0
  }
  ExpectShare(normalised, 0.5, "S(g) = {s1, s3}");
  ExpectShare(s1, 0.5 * 2.0 / 3.0, "s1");
  ExpectShare(s3_with_s1, 0.5 / 3.0, "s3 beside s1");
  ExpectShare(s3_with_s2, 0.25, "s3 beside s2");
  ExpectShare(ps, 0.25, "PS");
}

TEST(Krgs, EveryWorkerHasOneNodeAndSeedsReproduce) {
  const GinaGraph g = LeafSpineGraph(2, 4, 24, {"leaf0", "leaf1", "leaf2", "spine1"}, 10);
  Result<GinaProblem> p = BuildGinaProblem(g, {3, 4, 2, 5, 3, 3, 2, 4});
  ASSERT_TRUE(p.ok()) << p.message();
  Result<GinaLpSolution> lp = SolveGinaLp(*p);
  ASSERT_TRUE(lp.ok());
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    KrgsStats st;
    Result<GinaPlan> a = RoundKrgs(*p, *lp, seed, &st);
    Result<GinaPlan> b = RoundKrgs(*p, *lp, seed);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->node, b->node);
    for (std::size_t s = 0; s < p->num_switches(); ++s) EXPECT_LE(a->used[s], p->memory[s]);
    for (std::size_t sub = 0; sub < p->submodels.size(); ++sub) {
      ASSERT_EQ(a->node[sub].size(), p->num_workers());
      uint32_t aggregated = 0;
      for (int32_t n : a->node[sub]) {
        EXPECT_TRUE(n == kGinaPs || (n >= 0 && n < static_cast<int32_t>(p->num_switches())));
        aggregated += n != kGinaPs;
      }
      uint32_t fan_in = 0;
      for (uint32_t f : a->fan_in[sub]) fan_in += f;
      EXPECT_EQ(fan_in, aggregated);  // a worker's sub-model is counted at its one node
    }
    if (st.bins > 0) {
      EXPECT_GT(st.min_bin_sum, 0.5);  // Lemma 3 with LPT
    }
  }
}

TEST(Krgs, MemoryIsWithinTwiceBOnAverageBeforeRepairAndWithinBAfter) {
  // Four sub-models of 2 slots, three switches of 4 slots, x = 0.5 everywhere (the memory rows
  // exactly full), every worker's y = 1/3 per switch: k = 1, S_a = 1.5, so each sub-model lands
  // on each switch with probability 1/3, and a switch that draws three or four of them (about
  // one in nine) is over its memory until the repair demotes some.
  GinaProblem p = ThreeSwitches(4);
  p.submodels = {2, 2, 2, 2};
  GinaLpSolution lp = Fractional(
      p, {0.5, 0.5, 0.5}, std::vector<std::vector<double>>(4, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}));
  lp.x.assign(4, {0.5, 0.5, 0.5});
  lp.y.assign(4, lp.y[0]);
  const std::size_t S = p.num_switches();
  std::vector<double> load(S, 0);
  uint32_t demoted = 0, over = 0;
  const int seeds = 6000;
  for (int seed = 0; seed < seeds; ++seed) {
    KrgsStats st;
    Result<GinaPlan> plan = RoundKrgs(p, lp, seed, &st);
    ASSERT_TRUE(plan.ok());
    for (std::size_t s = 0; s < S; ++s) {
      load[s] += static_cast<double>(st.used_before_repair[s]) / static_cast<double>(p.memory[s]);
      EXPECT_LE(plan->used[s], p.memory[s]) << seed;
    }
    demoted += st.demoted;
    over += st.switches_over_before_repair;
  }
  // Eq. 13: E[load] <= 2 B(s). Here E[used] = 4 x 2 slots x (1/3 x (1 - (1/3)^4)).
  const double expected = 8.0 * (1.0 / 3) * (1 - 1.0 / 81) / 4;
  for (std::size_t s = 0; s < S; ++s) {
    EXPECT_LE(load[s] / seeds, 2.0) << p.switch_names[s];
    EXPECT_NEAR(load[s] / seeds, expected, 0.03) << p.switch_names[s];
  }
  EXPECT_GT(over, 0u);       // the rounding overran memory
  EXPECT_GE(demoted, over);  // and the repair acted each time
  EXPECT_NEAR(static_cast<double>(over) / (seeds * S), 1.0 / 9, 0.02);
}

TEST(Krgs, TruncatingTheLpThrowsAggregationAwayRoundingKeepsIt) {
  // x = (0.5, 0.5, 0): the sub-model belongs on one of two switches. The authors' int() makes
  // both 0 and sends every worker to the PS; KRGS picks one and aggregates there.
  const GinaProblem p = ThreeSwitches(4);
  std::vector<std::vector<double>> y(4, {0.5, 0.5, 0.0, 0.0});
  const GinaLpSolution lp = Fractional(p, {0.5, 0.5, 0.0}, y);
  const GinaPlan truncated = TruncatedPlan(p, lp);
  for (int32_t n : truncated.node[0]) EXPECT_EQ(n, kGinaPs);
  double rounded = 0;
  for (int seed = 0; seed < 100; ++seed) {
    Result<GinaPlan> plan = RoundKrgs(p, lp, seed);
    ASSERT_TRUE(plan.ok());
    for (int32_t n : plan->node[0]) EXPECT_NE(n, kGinaPs);  // y / x = 1 at the chosen switch
    rounded += GinaPlanEq1(p, *plan);
  }
  EXPECT_NEAR(rounded / 100, 4 * 1 + 2, 1e-9);          // 4 workers one hop, one aggregate two hops
  EXPECT_NEAR(GinaPlanEq1(p, truncated), 4 * 3, 1e-9);  // every worker three hops to the PS
}

TEST(Krgs, ASolutionOfAnotherProblemIsRefused) {
  const GinaProblem p = ThreeSwitches(2);
  const GinaLpSolution lp = Fractional(ThreeSwitches(1), {1, 0, 0}, {{1, 0, 0, 0}});
  EXPECT_FALSE(RoundKrgs(p, lp, 1).ok());
}

}  // namespace
}  // namespace swemu
