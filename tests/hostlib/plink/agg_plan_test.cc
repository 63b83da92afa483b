// AggEngine's plan and schedule (PLink 4.2.1, Table 1): masters and their invariants, the bytes
// 2LHA and flat aggregation move across racks and in all, exact sums of the schedule.
#include "hostlib/plink/agg_plan.h"

#include <gtest/gtest.h>

#include <numeric>

namespace swemu {
namespace {

std::vector<uint32_t> Racks(uint32_t racks, uint32_t per_rack) {
  std::vector<uint32_t> r;
  for (uint32_t i = 0; i < racks * per_rack; ++i) r.push_back(i / per_rack);
  return r;
}

TEST(AggPlan, TableOneCrossRackAndTotalBytesWithGroupsEqualToRacks) {
  for (const auto& [C, N] : {std::pair{4u, 4u}, std::pair{8u, 8u}, std::pair{3u, 5u}}) {
    const uint64_t S = 1 << 20;
    const std::vector<uint64_t> chunks = CutChunks(S, 64 << 10);
    const std::vector<uint32_t> racks = Racks(C, N);
    Result<AggPlan> two = MakeTwoLevelPlan(racks, chunks);
    Result<AggPlan> flat = MakeFlatPlan(C * N, chunks);
    ASSERT_TRUE(two.ok() && flat.ok());
    const AggTraffic t2 = CountTraffic(*two, racks), tf = CountTraffic(*flat, racks);
    EXPECT_EQ(t2.cross_rack, 2 * (C - 1) * S) << C << "x" << N;
    EXPECT_EQ(tf.cross_rack, 2 * N * (C - 1) * S) << C << "x" << N;
    EXPECT_EQ(t2.total, 2 * (N * C - 1) * S) << C << "x" << N;
    EXPECT_EQ(tf.total, 2 * (N * C - 1) * S) << C << "x" << N;
  }
}

TEST(AggPlan, MastersKeepTheInvariantsAndAreBalancedByBytes) {
  // Groups of 2 and 6 nodes: GM bytes 1:3 within one chunk; LMs spread within each group.
  const std::vector<uint32_t> groups = {0, 0, 1, 1, 1, 1, 1, 1};
  const std::vector<uint64_t> chunks = CutChunks(64 << 10, 1 << 10);  // 64 equal chunks
  Result<AggPlan> p = MakeTwoLevelPlan(groups, chunks);
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_TRUE(p->Validate().ok());
  uint64_t gm0 = 0, gm1 = 0;
  std::vector<uint64_t> lm(8, 0);
  for (uint32_t c = 0; c < chunks.size(); ++c) {
    (groups[p->global_master[c]] == 0 ? gm0 : gm1) += chunks[c];
    for (uint32_t g = 0; g < 2; ++g) lm[p->local_master[c][g]] += chunks[c];
  }
  EXPECT_NEAR(static_cast<double>(gm1) / gm0, 3.0, 0.2);
  // Within a group every member carries about the same LM bytes.
  EXPECT_NEAR(static_cast<double>(lm[0]) / lm[1], 1.0, 0.1);
  const auto [lo, hi] = std::minmax_element(lm.begin() + 2, lm.end());
  EXPECT_LE(*hi - *lo, 3u * 1024);
  // A broken invariant is refused.
  AggPlan bad = *p;
  bad.local_master[0][1] = 0;  // node 0 is in group 0
  EXPECT_NE(bad.Validate().message().find("not in that group"), std::string::npos);
  bad = *p;
  bad.global_master[0] = bad.local_master[0][0] == 0 ? 1 : 0;  // group 0's other node: no LM
  EXPECT_NE(bad.Validate().message().find("none of its local masters"), std::string::npos);
}

TEST(AggPlan, SchedulesGiveEveryNodeTheExactSum) {
  const std::vector<uint32_t> groups = {0, 1, 0, 2, 1, 2, 0};
  const std::vector<uint64_t> chunks = {16, 32, 8, 40};
  std::vector<std::vector<float>> in(7, std::vector<float>(24));
  for (uint32_t n = 0; n < 7; ++n) {
    for (uint32_t i = 0; i < 24; ++i) in[n][i] = static_cast<float>(n * 100 + i);
  }
  for (bool flat : {false, true}) {
    Result<AggPlan> p = flat ? MakeFlatPlan(7, chunks) : MakeTwoLevelPlan(groups, chunks);
    ASSERT_TRUE(p.ok());
    std::vector<std::vector<float>> out;
    ASSERT_TRUE(RunScheduleInMemory(*p, in, &out).ok());
    for (uint32_t n = 0; n < 7; ++n) {
      for (uint32_t i = 0; i < 24; ++i) {
        EXPECT_EQ(out[n][i], 2100.0f + 7 * i) << (flat ? "FA" : "2LHA") << " node " << n;
      }
    }
  }
}

TEST(AggPlan, BadInputIsRefused) {
  EXPECT_FALSE(MakeTwoLevelPlan({0, 2}, {8}).ok());  // group 1 empty
  EXPECT_FALSE(MakeTwoLevelPlan({}, {8}).ok());
  EXPECT_FALSE(MakeTwoLevelPlan({0}, {}).ok());
  EXPECT_FALSE(MakeFlatPlan(3, {8, 0}).ok());
  EXPECT_FALSE(MakeFlatPlan(0, {8}).ok());
  Result<AggPlan> p = MakeFlatPlan(2, {8});
  std::vector<std::vector<float>> out;
  EXPECT_FALSE(RunScheduleInMemory(*p, {{1, 2}}, &out).ok());
  EXPECT_EQ(CutChunks(10, 4), (std::vector<uint64_t>{4, 4, 2}));
}

}  // namespace
}  // namespace swemu
