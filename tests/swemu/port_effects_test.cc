// PortEffects in isolation: the seeded loss stream and the delay line (mbufs are only stored,
// so fake pointers stand in for them).
#include "swemu/dpdk/port_effects.h"

#include <gtest/gtest.h>

#include <vector>

namespace swemu {
namespace {

rte_mbuf* Fake(uintptr_t i) { return reinterpret_cast<rte_mbuf*>((i + 1) * 64); }

std::vector<bool> Draws(uint64_t seed, PortId port, double loss, int n) {
  PortEffects fx;
  fx.Init(seed, port, 0);
  fx.SetLoss(loss);
  std::vector<bool> lost;
  for (int i = 0; i < n; ++i) lost.push_back(fx.lossy() && fx.Lose());
  return lost;
}

TEST(PortEffectsTest, LossRatioFollowsTheProbability) {
  const std::vector<bool> lost = Draws(1, 0, 0.1, 100000);
  const auto count = std::count(lost.begin(), lost.end(), true);
  EXPECT_NEAR(double(count) / 100000, 0.1, 0.003);
}

TEST(PortEffectsTest, SameSeedSameLossesOtherSeedOrPortOthers) {
  EXPECT_EQ(Draws(5, 1, 0.2, 1000), Draws(5, 1, 0.2, 1000));
  EXPECT_NE(Draws(5, 1, 0.2, 1000), Draws(6, 1, 0.2, 1000));
  EXPECT_NE(Draws(5, 1, 0.2, 1000), Draws(5, 2, 0.2, 1000));
}

TEST(PortEffectsTest, ZeroLosesNothingOneLosesEverything) {
  const std::vector<bool> none = Draws(1, 0, 0, 1000);
  const std::vector<bool> all = Draws(1, 0, 1, 1000);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), 1000);
}

TEST(PortEffectsTest, DelayLineReleasesInOrderWhenTimeComes) {
  PortEffects fx;
  fx.Init(1, 0, 4);
  fx.SetDelay(100, 1000);  // 1000 cycles
  EXPECT_TRUE(fx.delaying());
  ASSERT_TRUE(fx.Hold(Fake(0), 0));
  ASSERT_TRUE(fx.Hold(Fake(1), 10));
  ASSERT_TRUE(fx.Hold(Fake(2), 20));
  rte_mbuf* out[4];
  EXPECT_EQ(fx.Release(999, out, 4), 0);
  ASSERT_EQ(fx.Release(1010, out, 4), 2);
  EXPECT_EQ(out[0], Fake(0));
  EXPECT_EQ(out[1], Fake(1));
  EXPECT_EQ(fx.held(), 1u);
  // Delay set to 0 while a frame is held: new frames still queue behind it.
  fx.SetDelay(0, 0);
  EXPECT_TRUE(fx.delaying());
  ASSERT_TRUE(fx.Hold(Fake(3), 30));
  ASSERT_EQ(fx.Release(1020, out, 4), 2);
  EXPECT_EQ(out[0], Fake(2));
  EXPECT_EQ(out[1], Fake(3));
  EXPECT_FALSE(fx.delaying());
}

TEST(PortEffectsTest, FullDelayLineRefuses) {
  PortEffects fx;
  fx.Init(1, 0, 2);
  fx.SetDelay(1, 1);
  EXPECT_TRUE(fx.Hold(Fake(0), 0));
  EXPECT_TRUE(fx.Hold(Fake(1), 0));
  EXPECT_FALSE(fx.Hold(Fake(2), 0));
  rte_mbuf* out[2];
  EXPECT_EQ(fx.Release(1, out, 1), 1);
  EXPECT_TRUE(fx.Hold(Fake(2), 0));  // the ring wraps
  EXPECT_EQ(fx.held(), 2u);
}

TEST(PortEffectsTest, DelayLineSizedFromDelayRateAndMbufs) {
  // 50us at 10G in 88-byte frames: 710 in flight, x2 -> 1421 -> 2048.
  EXPECT_EQ(PortEffects::DelayLineFrames(50'000, 10'000'000'000, 24, 16383), 2048u);
  EXPECT_EQ(PortEffects::DelayLineFrames(0, 10'000'000'000, 24, 16383), 1024u);  // the minimum
  EXPECT_EQ(PortEffects::DelayLineFrames(1'000'000'000, 100'000'000'000, 24, 4095), 4096u);
  EXPECT_EQ(PortEffects::DelayLineFrames(1000, 0, 24, 16383), 16384u);  // unshaped: mbufs
}

}  // namespace
}  // namespace swemu
