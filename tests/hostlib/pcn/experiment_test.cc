// The paper's experiment in virtual time, scaled to a CI budget (12 s of virtual time, 6 bursts
// per worker, 1 s idle): with PCN the queue at burst start and the maximum queue are lower and
// the bursts complete sooner than without, for Reno and for DCTCP senders; and a run is
// deterministic.
#include "hostlib/pcn/experiment.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

PcnExperimentOptions Scaled(CongestionControl cc) {
  PcnExperimentOptions o;
  o.cc = cc;
  o.duration_ns = 14'000'000'000;
  o.ddl_start_ns = 2'000'000'000;
  o.idle_ns = 1'000'000'000;
  return o;
}

class PcnExperiment : public ::testing::TestWithParam<CongestionControl> {};

TEST_P(PcnExperiment, PcnLowersTheQueueAndShortensTheBursts) {
  const PcnExperimentOptions o = Scaled(GetParam());
  Result<PcnRunResult> without = RunPcnExperiment(o, false);
  Result<PcnRunResult> with = RunPcnExperiment(o, true);
  ASSERT_TRUE(without.ok()) << without.message();
  ASSERT_TRUE(with.ok()) << with.message();
  SCOPED_TRACE(FormatPcnComparison(o, *without, *with));
  ASSERT_EQ(without->bursts.size(), 12u);
  ASSERT_EQ(with->bursts.size(), 12u);
  EXPECT_LT(with->MeanStartQueue(), 0.5 * without->MeanStartQueue());
  EXPECT_LT(with->MeanMaxQueue(), without->MeanMaxQueue());
  EXPECT_LT(with->MeanBctMs(), 0.9 * without->MeanBctMs());
  EXPECT_GT(with->MeanDdlMbps(), without->MeanDdlMbps());
  // The switch saw every START and every burst arrive, and no announcement timed out.
  EXPECT_EQ(with->pcn_starts, 12u);
  EXPECT_EQ(with->pcn_bursts_arrived, 12u);
  EXPECT_EQ(with->pcn_timeouts, 0u);
  EXPECT_EQ(without->pcn_starts, 0u);
  for (const PcnBurstMetrics& b : with->bursts) EXPECT_TRUE(b.acked);
}

INSTANTIATE_TEST_SUITE_P(Senders, PcnExperiment,
                         ::testing::Values(CongestionControl::kReno, CongestionControl::kDctcp),
                         [](const auto& info) { return std::string(CongestionControlName(info.param)); });

TEST(PcnExperimentRuns, AreDeterministic) {
  PcnExperimentOptions o = Scaled(CongestionControl::kReno);
  o.duration_ns = 5'000'000'000;
  o.iterations = 2;
  Result<PcnRunResult> a = RunPcnExperiment(o, true);
  Result<PcnRunResult> b = RunPcnExperiment(o, true);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(PcnRunJson(*a), PcnRunJson(*b));
}

TEST(PcnExperimentRuns, RefuseSettingsThatCannotRun) {
  PcnExperimentOptions o = Scaled(CongestionControl::kReno);
  o.pcn_threshold = 40;  // not below the initial threshold
  EXPECT_FALSE(RunPcnExperiment(o, true).ok());
  o = Scaled(CongestionControl::kReno);
  o.ddl_start_ns = o.duration_ns;
  EXPECT_FALSE(RunPcnExperiment(o, true).ok());
  o = Scaled(CongestionControl::kReno);
  o.duration_ns = 2'100'000'000;  // too short for 6 bursts and their idle periods
  Result<PcnRunResult> r = RunPcnExperiment(o, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("did not finish"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace swemu
