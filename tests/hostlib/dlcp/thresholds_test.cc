// DLCP's Appendix B solver: the M/M/1/m loss (checked against closed forms and a direct
// birth-death computation), the queues' layers as the host tags them, the buffer constraint,
// exactness of the dynamic program on a small case, and the fit of S_i = T(1 + (i-1)d).
#include "hostlib/dlcp/thresholds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "hostlib/workload/model_layers.h"
#include "pipeline/programs/dlcp.h"

namespace swemu {
namespace {

// pi_m of an M/M/1/m chain computed state by state.
double DirectLoss(double rho, int m) {
  std::vector<double> pi(m + 1);
  double sum = 0;
  for (int n = 0; n <= m; ++n) sum += pi[n] = std::pow(rho, n);
  return pi[m] / sum;
}

TEST(DlcpThresholds, MM1mLossMatchesTheChain) {
  for (double rho : {0.3, 0.9, 1.0, 1.5, 4.0}) {
    for (int m : {1, 2, 5, 20, 60}) {
      EXPECT_NEAR(MM1mLoss(rho, m), DirectLoss(rho, m), 1e-12) << rho << " " << m;
    }
  }
  EXPECT_DOUBLE_EQ(MM1mLoss(1.0, 9), 0.1);
  EXPECT_DOUBLE_EQ(MM1mLoss(0.5, 0), 1.0);
  EXPECT_NEAR(MM1mLoss(2.0, 5000), 0.5, 1e-12);  // no overflow past rho^m
}

TEST(DlcpThresholds, QueuesTakeTheLayersTheHostTagsThem) {
  DlcpModelInput in;
  in.layer_sizes = std::vector<uint64_t>(10, 100);  // M = 10, N = 7
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  ASSERT_TRUE(plan.ok()) << plan.message();
  // floor(x * 7 / 10): 0 0 1 2 2 3 4 4 5 6 -> queue i holds the layers of tag i - 1.
  const uint32_t first[] = {0, 2, 3, 5, 6, 8, 9}, last[] = {1, 2, 4, 5, 7, 8, 9};
  for (uint32_t i = 0; i < 7; ++i) {
    EXPECT_EQ(plan->queues[i].first_layer, first[i]) << i;
    EXPECT_EQ(plan->queues[i].last_layer, last[i]) << i;
  }
  EXPECT_NEAR(plan->queues[0].share, 0.2, 1e-12);
}

TEST(DlcpThresholds, TheBufferBindsAndEveryQueueHasRoom) {
  DlcpModelInput in;
  const Result<ModelLayers> resnet = BundledModel("ResNet50");
  ASSERT_TRUE(resnet.ok()) << resnet.message();
  for (const LayerSize& l : resnet->layers) in.layer_sizes.push_back(l.params);
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_LE(plan->buffer_used, in.buffer_pkts);
  for (const DlcpQueuePlan& q : plan->queues) {
    EXPECT_GE(q.L, 1u);
    EXPECT_LE(q.S, q.L);
    EXPECT_GE(q.loss_large, 0.0);
  }
  // More buffer never costs more.
  DlcpModelInput more = in;
  more.buffer_pkts = 2 * in.buffer_pkts;
  EXPECT_LE(SolveDlcpThresholds(more)->cost, plan->cost);
  // The fitted form costs at least the optimum.
  EXPECT_GE(plan->fit_cost, plan->cost - 1e-9);
}

TEST(DlcpThresholds, TheDynamicProgramIsExactOnASmallCase) {
  DlcpModelInput in;
  in.layer_sizes = {5, 1, 1, 1, 1, 1, 3};
  in.buffer_pkts = 12;
  in.load = 0.95;
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  ASSERT_TRUE(plan.ok());
  // Brute force over every split of 12 packets into 7 queues of at least 1 (L), and every S.
  double best = 1e300;
  std::vector<uint32_t> l(7, 1);
  std::function<void(int, uint32_t)> rec = [&](int i, uint32_t left) {
    if (i == 7) {
      double cost = 0;
      for (int k = 0; k < 7; ++k) {
        double c = 1e300;
        for (uint32_t s = 0; s <= l[k]; ++s) {
          const DlcpQueuePlan& q = plan->queues[k];
          c = std::min(c, q.cost_small * MM1mLoss(q.rho, in.theta * s) +
                              q.cost_large * MM1mLoss(q.rho, l[k] - in.theta * s));
        }
        cost += c;
      }
      best = std::min(best, cost);
      return;
    }
    for (uint32_t x = 1; x + (6 - i) <= left; ++x) {
      l[i] = x;
      rec(i + 1, left - x);
    }
  };
  rec(0, 12);
  EXPECT_NEAR(plan->cost, best, 1e-9 * best);
}

TEST(DlcpThresholds, TheDlcpProgramsDefaultsAreAppendixBAtTheExperimentsSetting) {
  // ResNet-50, a 512 KB port (349 packets of 1500 bytes), load 1.2: the fit and the optimum's
  // capacities are the `dlcp` program's defaults, within the port's buffer.
  Result<ModelLayers> model = BundledModel("ResNet50");
  ASSERT_TRUE(model.ok());
  DlcpModelInput in;
  for (const LayerSize& l : model->layers) in.layer_sizes.push_back(l.params);
  in.load = 1.2;
  in.buffer_pkts = 349;
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_DOUBLE_EQ(plan->fit_t, kDlcpDefaultT);
  EXPECT_DOUBLE_EQ(plan->fit_d, kDlcpDefaultD);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < kDlcpQueues; ++i) {
    EXPECT_EQ(plan->queues[i].L, kDlcpDefaultCaps[i]) << i;
    sum += kDlcpDefaultCaps[i];
  }
  EXPECT_LE(sum, 349u);
  const DlcpThresholds defaults;
  EXPECT_EQ(defaults.L(1), kDlcpDefaultCaps[0]);
  EXPECT_EQ(defaults.S(1), 23u);
  EXPECT_EQ(DlcpThresholdsCommand(*plan), "dlcp_thresholds 23.25 0.55 14,18,21,33,39,98,126");
}

TEST(DlcpThresholds, BadInputIsNamed) {
  DlcpModelInput in;
  EXPECT_FALSE(SolveDlcpThresholds(in).ok());  // no layers
  in.layer_sizes = {1, 2, 3};
  in.theta = 1;
  EXPECT_NE(SolveDlcpThresholds(in).message().find("theta"), std::string::npos);
  in.theta = 0.5;
  in.buffer_pkts = 3;
  EXPECT_NE(SolveDlcpThresholds(in).message().find("buffer"), std::string::npos);
}

}  // namespace
}  // namespace swemu
