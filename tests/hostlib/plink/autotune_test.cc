// Autotune (PLink 4.3) on the performance model: the Fig. 10 scenario (8 nodes with flat
// aggregation, node 0's links limited to 2 Gbit/s from step 1 to step 11) and Quicktune's
// objective.
#include "hostlib/plink/autotune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "hostlib/plink/datacenter.h"

namespace swemu {
namespace {

constexpr double kGbit = 1e9 / 8;  // bytes per second

std::vector<std::vector<double>> Bandwidth(const std::vector<double>& node_gbit) {
  const std::size_t n = node_gbit.size();
  std::vector<std::vector<double>> bw(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) bw[i][j] = std::min(node_gbit[i], node_gbit[j]) * kGbit;
  }
  return bw;
}

uint64_t MasterBytes(const AggPlan& p, uint32_t node) {
  uint64_t b = 0;
  for (std::size_t c = 0; c < p.chunk_bytes.size(); ++c)
    b += p.global_master[c] == node ? p.chunk_bytes[c] : 0;
  return b;
}

double LoadRatio(const AggMetrics& m) {
  const auto [lo, hi] = std::minmax_element(m.bytes.begin(), m.bytes.end());
  return *hi / *lo;
}

TEST(Autotune, Figure10MovesMastersOffAThrottledNodeAndRebalancesAfterTheRestore) {
  Result<AggPlan> start = MakeFlatPlan(8, CutChunks(100 << 20, 512 << 10));  // 200 chunks
  ASSERT_TRUE(start.ok());
  AggPlan plan = *start;
  Autotune tune;
  std::vector<double> gbit(8, 10.0);
  const uint64_t initial = MasterBytes(plan, 0);
  double static_throttled = 0, tuned_throttled = 0;
  int balanced_at = -1;
  for (int step = 0; step < 40; ++step) {
    gbit[0] = step >= 1 && step < 11 ? 2.0 : 10.0;
    const auto bw = Bandwidth(gbit);
    const AggMetrics m = ModelMetrics(plan, bw);
    if (step == 10) {
      tuned_throttled = m.iteration_seconds;
      static_throttled = ModelMetrics(*start, bw).iteration_seconds;
      EXPECT_LT(MasterBytes(plan, 0), initial / 2);  // masters moved away from node 0
    }
    if (step > 11 && balanced_at < 0 && LoadRatio(m) < 1.05) balanced_at = step;
    tune.Step(plan, m, bw);
    ASSERT_TRUE(plan.Validate().ok());
  }
  std::printf(
      "throttled: tuned %.1f ms vs static %.1f ms per iteration (%.2fx); balanced again "
      "%d steps after the restore; %u Quicktunes\n",
      tuned_throttled * 1e3, static_throttled * 1e3, static_throttled / tuned_throttled,
      balanced_at - 11, tune.quicktunes());
  EXPECT_LT(tuned_throttled, static_throttled / 1.2);
  ASSERT_GE(balanced_at, 0);
  EXPECT_LE(balanced_at - 11, 14);  // the paper: balanced 14 steps after the restore
  EXPECT_GE(tune.quicktunes(), 1u);
}

TEST(Autotune, QuicktuneGivesASlowNodeLessWorkAndKeepsTheInvariants) {
  const std::vector<uint32_t> groups = {0, 0, 0, 0, 1, 1, 1, 1};
  Result<AggPlan> p = MakeTwoLevelPlan(groups, CutChunks(8 << 20, 256 << 10));
  ASSERT_TRUE(p.ok());
  std::vector<double> gbit(8, 10.0);
  gbit[5] = 1.0;
  const auto bw = Bandwidth(gbit);
  const AggPlan q = Quicktune(*p, bw);
  ASSERT_TRUE(q.Validate().ok());
  EXPECT_LT(ModelMetrics(q, bw).iteration_seconds, ModelMetrics(*p, bw).iteration_seconds);
  uint64_t lm5 = 0, lm4 = 0;
  for (std::size_t c = 0; c < q.chunk_bytes.size(); ++c) {
    lm5 += q.local_master[c][1] == 5 ? q.chunk_bytes[c] : 0;
    lm4 += q.local_master[c][1] == 4 ? q.chunk_bytes[c] : 0;
  }
  EXPECT_LT(lm5 * 4, lm4);
}

TEST(Autotune, ABalancedPlanOnEvenLinksIsLeftAlone) {
  Result<AggPlan> p = MakeFlatPlan(8, CutChunks(8 << 20, 256 << 10));
  ASSERT_TRUE(p.ok());
  AggPlan plan = *p;
  Autotune tune;
  const auto bw = Bandwidth(std::vector<double>(8, 10.0));
  for (int step = 0; step < 5; ++step) EXPECT_EQ(tune.Step(plan, ModelMetrics(plan, bw), bw), 0u);
  EXPECT_EQ(tune.quicktunes(), 0u);
}

// The same scenario on packets: 8 hosts in two racks of the virtual-time engine, flat
// aggregation of 512 KiB in 32 chunks by AggEngine, host 0's link shaped to 2 of 10 Gbit/s from
// step 1 to step 11. Autotune sees only what the reductions measured (MeasuredMetrics).
TEST(Autotune, Figure10InTheEngineOnMeasuredMetrics) {
  DatacenterSpec spec;
  spec.fanout = {2};
  spec.per_rack = 4;
  spec.tier_delay_ns = {5'000, 1'000};
  spec.tier_rate_bps = {40'000'000'000ull, 10'000'000'000ull};
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  ASSERT_TRUE(dc.ok()) << dc.message();
  Result<AggPlan> start = MakeFlatPlan(8, CutChunks(1 << 19, 16 << 10));
  ASSERT_TRUE(start.ok());
  AggPlan plan = *start;
  Autotune tune;
  std::vector<std::vector<float>> in(8, std::vector<float>(1 << 17, 1.0f)), out;
  auto bw = Bandwidth(std::vector<double>(8, 10.0));
  const uint64_t initial = MasterBytes(plan, 0);
  double tuned_throttled = 0;
  int balanced_at = -1;
  for (int step = 0; step < 20; ++step) {
    if (step == 1 || step == 11) {
      ASSERT_TRUE((*dc)->SetHostRate(0, step == 1 ? 2'000'000'000 : 0).ok());
    }
    Result<ReductionRun> run = (*dc)->AllReduce(plan, in, &out);
    ASSERT_TRUE(run.ok()) << run.message();
    ASSERT_EQ(out[3][12345], 8.0f);
    const AggMetrics m = MeasuredMetrics(run->reports, bw);
    bw = m.bandwidth;
    std::printf("step %2d: %.3f ms, node 0 masters %llu KiB, load max/min %.3f\n", step,
                run->latency_ns / 1e6, static_cast<unsigned long long>(MasterBytes(plan, 0) >> 10),
                LoadRatio(m));
    if (step == 10) {
      tuned_throttled = run->latency_ns;
      EXPECT_LT(MasterBytes(plan, 0), initial / 2);
    }
    if (step > 11 && balanced_at < 0 && LoadRatio(m) < 1.05) balanced_at = step;
    tune.Step(plan, m, bw);
    ASSERT_TRUE(plan.Validate().ok());
  }
  // The static plan under the same throttle, for the ratio.
  ASSERT_TRUE((*dc)->SetHostRate(0, 2'000'000'000).ok());
  Result<ReductionRun> fixed = (*dc)->AllReduce(*start, in, &out);
  ASSERT_TRUE(fixed.ok());
  std::printf(
      "throttled: tuned %.3f ms vs static %.3f ms (%.2fx); balanced %d steps after the "
      "restore; %u Quicktunes\n",
      tuned_throttled / 1e6, fixed->latency_ns / 1e6, fixed->latency_ns / tuned_throttled,
      balanced_at - 11, tune.quicktunes());
  EXPECT_LT(tuned_throttled, fixed->latency_ns / 1.2);
  ASSERT_GE(balanced_at, 0);
  EXPECT_LE(balanced_at - 11, 14);
}

}  // namespace
}  // namespace swemu
