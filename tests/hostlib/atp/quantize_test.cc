#include "hostlib/atp/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace swemu {
namespace {

TEST(QuantizeTest, RoundsToTheNearestScaledInteger) {
  const float in[] = {0.0f, 1.0f, -1.0f, 0.5f / (1 << 20), 3.25f};
  int32_t out[5];
  ASSERT_TRUE(QuantizeToInt32(in, 5, kAtpDefaultScale, out));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 1 << 20);
  EXPECT_EQ(out[2], -(1 << 20));
  EXPECT_EQ(out[3], 0);  // a tie rounds to even
  EXPECT_EQ(out[4], 13 << 18);
}

// Each of W workers rounds by at most 0.5 / scale, so the exact integer sum is within
// W * 0.5 / scale of the exact real sum, for every element.
TEST(QuantizeTest, SumErrorIsWithinTheBound) {
  constexpr uint32_t kWorkers = 8;
  constexpr std::size_t kN = 4096;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-0.01f, 0.01f);
  std::vector<int64_t> sum(kN, 0);
  std::vector<double> exact(kN, 0.0);
  std::vector<float> in(kN);
  std::vector<int32_t> q(kN);
  for (uint32_t w = 0; w < kWorkers; ++w) {
    for (float& x : in) x = dist(rng);
    ASSERT_TRUE(QuantizeToInt32(in.data(), kN, kAtpDefaultScale, q.data()));
    for (std::size_t i = 0; i < kN; ++i) {
      sum[i] += q[i];
      exact[i] += in[i];
    }
  }
  const double bound = AtpSumErrorBound(kWorkers, kAtpDefaultScale);
  double worst = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    const double err = std::abs(static_cast<double>(sum[i]) / kAtpDefaultScale - exact[i]);
    EXPECT_LE(err, bound) << "element " << i;
    worst = std::max(worst, err);
  }
  EXPECT_GT(worst, bound / 8);  // the bound is not vacuous for this data
}

TEST(QuantizeTest, ElementsOutsideInt32TakeTheOverflowPath) {
  const float big = 2048.0f;  // 2048 * 2^20 = 2^31: one past INT32_MAX
  const float fits = 2047.999f;
  int32_t out[1];
  EXPECT_TRUE(QuantizeToInt32(&fits, 1, kAtpDefaultScale, out));
  EXPECT_FALSE(QuantizeToInt32(&big, 1, kAtpDefaultScale, out));
  const float neg = -2048.0f;  // -2^31 fits exactly
  EXPECT_TRUE(QuantizeToInt32(&neg, 1, kAtpDefaultScale, out));
  EXPECT_EQ(out[0], std::numeric_limits<int32_t>::min());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(QuantizeToInt32(&nan, 1, kAtpDefaultScale, out));
  EXPECT_FALSE(QuantizeToInt32(&inf, 1, kAtpDefaultScale, out));
  const float mixed[] = {1.0f, 1e9f, 2.0f};
  int32_t three[3];
  EXPECT_FALSE(QuantizeToInt32(mixed, 3, kAtpDefaultScale, three));
}

}  // namespace
}  // namespace swemu
