#pragma once
// DLCP's Appendix B, corrected (docs/papers.md, "DLCP"; the derivation is in the reading notes):
// per-queue RED/ECN thresholds S_i and capacities L_i that minimise the convergence cost of
// the loss they cause, under the port's buffer B.
//
//   queues i = 1..N (N = 7; i = 1 the front layers), G_i = the layers the host tags into queue i
//   (floor(x * N / M) = i - 1 for layer x of M, 0-based), lambda_i = lambda * sum_{G_i} size / S;
//   strict priority: mu_1 = mu, mu_i = mu - sum_{k<i} lambda_k (at least a sliver of mu),
//   rho_i = lambda_i / mu_i;
//   M/M/1/m loss P(rho, m) = (rho^m - rho^(m+1)) / (1 - rho^(m+1)), 1 / (m + 1) at rho = 1;
//   small gradients (share theta) see a queue of theta * S_i, large ones L_i - theta * S_i:
//   r_i^S = P(rho_i, theta S_i), r_i^L = P(rho_i, L_i - theta S_i);
//   minimise sum_i c_i^S r_i^S + c_i^L r_i^L subject to sum_i L_i <= B, 0 <= S_i <= L_i,
//   integers: separable but for B, so solved exactly by dynamic programming over buffer packets.
// The costs c are convergence rounds per unit of loss: the inverse of the loss a class
// tolerates (the paper's Fig. 5: front layers 1.1%, back layers 0.4%, small gradients 1.6%,
// large ones 0.1%; a queue's layer tolerance is interpolated between front and back).
// Then S_i = T(1 + (i - 1)d), the form switches take (4.2), is fitted to the optimum: the
// (T, d) whose thresholds cost least with the optimum's L_i.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

inline constexpr uint32_t kDlcpQueues = 7;

struct DlcpModelInput {
  std::vector<uint64_t> layer_sizes;  // M layers, input layer first (parameters or bytes)
  double theta = 0.5;      // share of small (unimportant) gradients, 0 < theta < 1
  double load = 1.2;       // lambda / mu at the port (above 1: an incast)
  uint32_t buffer_pkts = 349;  // B: 512 KB of 1500-byte packets (the paper's simulation)
  double tol_front = 0.011, tol_back = 0.004;  // loss the front / back layers tolerate
  double tol_small = 0.016, tol_large = 0.001;  // loss small / large gradients tolerate

  Status Validate() const;
};

struct DlcpQueuePlan {
  uint32_t first_layer = 0, last_layer = 0;  // 0-based, inclusive; empty when first > last
  double share = 0;  // of the model's size
  double rho = 0;
  double cost_small = 0, cost_large = 0;  // c_i^S, c_i^L
  uint32_t S = 0, L = 0;                  // the optimum
  double loss_small = 0, loss_large = 0;  // r_i^S, r_i^L at the optimum
};

struct DlcpThresholdPlan {
  std::vector<DlcpQueuePlan> queues;  // i = 1..7
  double cost = 0;                    // the optimum's sum of c * r
  uint32_t buffer_used = 0;           // sum of L_i
  double fit_t = 0, fit_d = 0;  // S_i = T(1 + (i - 1)d) of least cost with the same L_i
  double fit_rms = 0;           // its distance from the optimum's S_i, packets
  double fit_cost = 0;          // its cost (S_i rounded and at most L_i)
};

// P(rho, m) for a real capacity m >= 0 (P = 1 at m = 0: nothing fits).
double MM1mLoss(double rho, double m);
Result<DlcpThresholdPlan> SolveDlcpThresholds(const DlcpModelInput& in);
// The `dlcp_thresholds T d L1,...,L7` command that installs the fit with the optimum's L_i.
std::string DlcpThresholdsCommand(const DlcpThresholdPlan& plan);
// The plan as a table, then the commands that install it.
std::string FormatDlcpPlan(const DlcpModelInput& in, const DlcpThresholdPlan& plan);

}  // namespace swemu
