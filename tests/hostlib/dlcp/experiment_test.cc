// DLCP's simulation scaled to CI: a 2-ToR, 2-spine fabric with 4 hosts pushing ResNet-50's
// layers (scaled 1/256) to their PSs. Every DLCP flow ends within its loss bound, and DLCP's
// mean and p99 completion times are below the DCTCP baseline's on the same fabric and tensors,
// at RTOmin 10 ms and 1 ms; runs are deterministic.
#include "hostlib/dlcp/experiment.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

DlcpExperimentOptions Small(TimeNs rto) {
  DlcpExperimentOptions o;
  o.tors = 2;
  o.hosts_per_tor = 2;
  o.scale = 256;
  o.min_rto_ns = rto;
  return o;
}

class DlcpExperiment : public ::testing::TestWithParam<TimeNs> {};

TEST_P(DlcpExperiment, DlcpCutsTheTailAgainstDctcp) {
  const DlcpExperimentOptions o = Small(GetParam());
  Result<DlcpRunResult> d = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, false);
  ASSERT_TRUE(d.ok()) << d.message();
  ASSERT_TRUE(b.ok()) << b.message();
  SCOPED_TRACE(FormatDlcpComparison(o, *d, *b));
  ASSERT_EQ(d->flows.size(), b->flows.size());
  for (const DlcpFlowResult& f : d->flows) EXPECT_LE(f.loss, o.loss_bound + 1e-9) << f.layer;
  EXPECT_LT(d->P99FctMs(), b->P99FctMs());
  EXPECT_LT(d->MeanFctMs(), b->MeanFctMs());
  EXPECT_GT(d->red_drops, 0u);  // the switches dropped unimportant packets
}

INSTANTIATE_TEST_SUITE_P(RtoMin, DlcpExperiment, ::testing::Values(10'000'000, 1'000'000),
                         [](const auto& info) {
                           return "rto" + std::to_string(info.param / 1'000'000) + "ms";
                         });

TEST(DlcpExperimentRuns, AreDeterministicAndRefuseBadSettings) {
  const DlcpExperimentOptions o = Small(10'000'000);
  Result<DlcpRunResult> a = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, true);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->flows.size(), b->flows.size());
  for (std::size_t i = 0; i < a->flows.size(); ++i) EXPECT_EQ(a->flows[i].fct_ns, b->flows[i].fct_ns);
  DlcpExperimentOptions bad = o;
  bad.tors = 1;
  EXPECT_FALSE(RunDlcpExperiment(bad, true).ok());
  bad = o;
  bad.model = "gpt";
  EXPECT_FALSE(RunDlcpExperiment(bad, false).ok());
}

}  // namespace
}  // namespace swemu
