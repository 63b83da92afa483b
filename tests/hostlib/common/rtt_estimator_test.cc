// RttEstimator (hostlib/common/rtt_estimator.h) against RFC 6298's formulas, step by step with
// values computed by hand; the back-off, the clamps, and the options its callers need (ATP's
// whole nanoseconds, the uncapped estimate of the model TCP and PLink, ATP's explicit reset).
#include "hostlib/common/rtt_estimator.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kSec = 1'000'000'000;

RttEstimatorOptions Unclamped() {
  RttEstimatorOptions o;
  o.min_rto_ns = 0;
  o.max_rto_ns = 1000 * kSec;
  return o;
}

TEST(RttEstimator, InitialRtoBeforeAnySample) {
  RttEstimator rtt;  // RFC 6298's defaults
  EXPECT_FALSE(rtt.has_sample());
  EXPECT_EQ(rtt.rto_ns(), 1 * kSec);
  EXPECT_EQ(rtt.BaseRto(), 1 * kSec);
  EXPECT_EQ(rtt.srtt_ns(), 0);
}

TEST(RttEstimator, FollowsRfc6298StepByStep) {
  RttEstimator rtt(Unclamped());
  rtt.Sample(100'000);  // 2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR
  EXPECT_EQ(rtt.srtt_ns(), 100'000);
  EXPECT_EQ(rtt.rttvar_ns(), 50'000);
  EXPECT_EQ(rtt.rto_ns(), 300'000u);
  rtt.Sample(200'000);  // 2.3: RTTVAR = 3/4 50000 + 1/4 100000; SRTT = 7/8 100000 + 1/8 200000
  EXPECT_EQ(rtt.rttvar_ns(), 62'500);
  EXPECT_EQ(rtt.srtt_ns(), 112'500);
  EXPECT_EQ(rtt.rto_ns(), 362'500u);
  rtt.Sample(50'000);  // RTTVAR uses the SRTT from before this sample: |112500 - 50000|
  EXPECT_EQ(rtt.rttvar_ns(), 62'500);
  EXPECT_EQ(rtt.srtt_ns(), 104'687.5);
  EXPECT_EQ(rtt.rto_ns(), 354'687u);  // 354687.5, whole nanoseconds down
}

TEST(RttEstimator, IntegerNanosecondsRoundEachStepDown) {
  RttEstimatorOptions o = Unclamped();
  o.integer_ns = true;
  RttEstimator whole(o);
  RttEstimator exact(Unclamped());
  whole.Sample(101);
  exact.Sample(101);
  EXPECT_EQ(whole.rttvar_ns(), 50);  // 101 / 2 down
  EXPECT_EQ(exact.rttvar_ns(), 50.5);
  EXPECT_EQ(whole.rto_ns(), 301u);
  EXPECT_EQ(exact.rto_ns(), 303u);
  whole.Sample(130);  // RTTVAR (3*50 + 29) / 4 = 44; SRTT (7*101 + 130) / 8 = 104 (104.625)
  EXPECT_EQ(whole.rttvar_ns(), 44);
  EXPECT_EQ(whole.srtt_ns(), 104);
  EXPECT_EQ(whole.rto_ns(), 104u + 176u);
}

TEST(RttEstimator, IntegerSrttStaysAtLeastOneNanosecond) {
  RttEstimatorOptions o = Unclamped();
  o.integer_ns = true;
  RttEstimator rtt(o);
  rtt.Sample(0);
  EXPECT_TRUE(rtt.has_sample());
  EXPECT_EQ(rtt.srtt_ns(), 1);
  EXPECT_EQ(rtt.rttvar_ns(), 0);
  rtt.Sample(0);  // (7 * 1 + 0) / 8 = 0, floored at 1
  EXPECT_EQ(rtt.srtt_ns(), 1);
}

TEST(RttEstimator, GranularityBoundsTheVarianceTerm) {
  RttEstimatorOptions o = Unclamped();
  o.granularity_ns = 1 * kMs;
  RttEstimator rtt(o);
  rtt.Sample(100'000);  // RTO = 100 us + max(1 ms, 200 us)
  EXPECT_EQ(rtt.rto_ns(), 1'100'000u);
  o.granularity_ns = 100'000;
  RttEstimator fine(o);
  fine.Sample(100'000);  // 4 RTTVAR is larger than G
  EXPECT_EQ(fine.rto_ns(), 300'000u);
}

TEST(RttEstimator, ClampsToMinAndMax) {
  RttEstimator rtt;  // min 1 s, max 60 s
  rtt.Sample(10 * kMs);
  EXPECT_EQ(rtt.rto_ns(), 1 * kSec);  // 30 ms, raised to the floor
  RttEstimator slow;
  slow.Sample(30 * kSec);  // 30 s + 60 s, capped
  EXPECT_EQ(slow.rto_ns(), 60 * kSec);
  RttEstimatorOptions o;
  o.cap_estimate = false;
  RttEstimator uncapped(o);
  uncapped.Sample(30 * kSec);
  EXPECT_EQ(uncapped.rto_ns(), 90 * kSec);
  o.cap_estimate = true;
  o.min_rto_ns = 100 * kSec;  // a floor above the cap: the cap wins
  RttEstimator inverted(o);
  inverted.Sample(10 * kMs);
  EXPECT_EQ(inverted.rto_ns(), 60 * kSec);
}

TEST(RttEstimator, BackoffDoublesUpToTheMax) {
  RttEstimator rtt;
  const TimeNs expected[] = {2, 4, 8, 16, 32, 60, 60};
  for (TimeNs e : expected) {
    rtt.Backoff();
    EXPECT_EQ(rtt.rto_ns(), e * kSec);
  }
  EXPECT_EQ(rtt.BaseRto(), 1 * kSec);
  rtt.ResetBackoff();
  EXPECT_EQ(rtt.rto_ns(), 1 * kSec);
}

TEST(RttEstimator, NewSampleEndsTheBackoff) {
  RttEstimatorOptions o = Unclamped();
  RttEstimator rtt(o);
  rtt.Sample(100'000);
  rtt.Backoff();
  rtt.Backoff();
  EXPECT_EQ(rtt.rto_ns(), 1'200'000u);
  rtt.Sample(100'000);  // RTTVAR 37500: RTO 250 us
  EXPECT_EQ(rtt.rto_ns(), 250'000u);
}

TEST(RttEstimator, WithoutSampleResetTheBackoffLastsUntilReset) {
  RttEstimatorOptions o = Unclamped();
  o.sample_resets_backoff = false;
  RttEstimator rtt(o);
  EXPECT_EQ(rtt.rto_ns(), 1 * kSec);
  rtt.Sample(100'000);
  EXPECT_EQ(rtt.rto_ns(), 1 * kSec);  // still the initial RTO
  rtt.Backoff();
  rtt.Sample(100'000);
  EXPECT_EQ(rtt.rto_ns(), 2 * kSec);
  EXPECT_EQ(rtt.BaseRto(), 250'000u);
  rtt.ResetBackoff();
  EXPECT_EQ(rtt.rto_ns(), 250'000u);
}

TEST(RttEstimator, RaisedFloorAppliesFromTheNextReset) {
  RttEstimatorOptions o = Unclamped();
  o.min_rto_ns = 1 * kMs;
  RttEstimator rtt(o);
  rtt.Sample(100'000);
  EXPECT_EQ(rtt.rto_ns(), 1 * kMs);
  rtt.SetMinRto(3 * kMs);
  EXPECT_EQ(rtt.options().min_rto_ns, 3 * kMs);
  EXPECT_EQ(rtt.rto_ns(), 1 * kMs);
  rtt.ResetBackoff();
  EXPECT_EQ(rtt.rto_ns(), 3 * kMs);
}

}  // namespace
}  // namespace swemu
