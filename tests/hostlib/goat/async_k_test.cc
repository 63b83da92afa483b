// GOAT's Algorithm 2 as reconstructed (hostlib/goat/async_k.h): the simulated epochs by hand, K
// chosen against stragglers and not without them, psi's shape, the participants' fan-in per
// switch and sub-model, bad input named.
#include "hostlib/goat/async_k.h"

#include <gtest/gtest.h>

#include <cmath>

namespace swemu {
namespace {

TEST(GoatK, TheSimulatedEpochsMatchAHandComputation) {
  // p = (1, 2, 4), M = 3. K = 1: h = 1, 1, 1. K = 2: h = 2, 2, 2 (the slow worker is 2 closer
  // after the first epoch and takes part in the second). K = 3: h = 4 each time.
  Result<KSearchResult> r = ChooseK({1, 2, 4}, {0.5, 3});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->mean_epoch, (std::vector<double>{1, 2, 4}));
  EXPECT_DOUBLE_EQ(r->epochs[0], 4.0);       // (1 / 0.5)^2
  EXPECT_DOUBLE_EQ(r->epochs[1], 16.0 / 9);  // (2 / 1.5)^2
  EXPECT_DOUBLE_EQ(r->epochs[2], 1.44);      // (3 / 2.5)^2
  EXPECT_EQ(r->k, 2u);                       // 3.56 against 4 and 5.76
}

TEST(GoatK, AStragglerIsLeftOutAndEqualWorkersAreAllAwaited) {
  std::vector<double> p(8, 1.0);
  Result<KSearchResult> even = ChooseK(p, {});
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->k, 8u);  // every epoch takes 1 whatever K: the most workers converge fastest
  p[7] = 10;
  Result<KSearchResult> straggler = ChooseK(p, {});
  ASSERT_TRUE(straggler.ok());
  EXPECT_EQ(straggler->k, 7u);
  EXPECT_DOUBLE_EQ(straggler->mean_epoch[6], 1.0);
  EXPECT_DOUBLE_EQ(straggler->mean_epoch[7], 10.0);
  // Much gradient noise makes small K useless: psi is infinite up to r.
  Result<KSearchResult> noisy = ChooseK(p, {7.5, 0});
  ASSERT_TRUE(noisy.ok());
  EXPECT_EQ(noisy->k, 8u);
  EXPECT_TRUE(std::isinf(noisy->epochs[6]));
}

TEST(GoatK, ParticipantsAndTheirFanInPerSwitch) {
  EXPECT_EQ(FastestWorkers({3, 1, 2, 1}, 2), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(FastestWorkers({3, 1}, 5), (std::vector<uint32_t>{0, 1}));
  GinaPlan plan;
  plan.node = {{0, kGinaPs, 0, 1}, {1, 1, kGinaPs, kGinaPs}};
  plan.fan_in = {{2, 1}, {0, 2}};
  const std::vector<std::vector<uint32_t>> k = AsyncFanIn(plan, {0, 1, 3});
  EXPECT_EQ(k[0], (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(k[1], (std::vector<uint32_t>{0, 2}));
}

TEST(GoatK, BadInputIsNamed) {
  EXPECT_FALSE(ChooseK({}, {}).ok());
  EXPECT_FALSE(ChooseK({1, -1}, {}).ok());
  EXPECT_FALSE(ChooseK({1, NAN}, {}).ok());
  Result<KSearchResult> r = ChooseK({1, 2}, {2.0, 0});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("no K converges"), std::string::npos);
}

}  // namespace
}  // namespace swemu
