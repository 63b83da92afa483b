#include "hostlib/dlcp/thresholds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace swemu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct QueueModel {
  double rho = 0, cs = 0, cl = 0, theta = 0;
  double Cost(uint32_t s, uint32_t l) const {
    const double small = theta * s;
    return cs * MM1mLoss(rho, small) + cl * MM1mLoss(rho, static_cast<double>(l) - small);
  }
};

}  // namespace

double MM1mLoss(double rho, double m) {
  if (m <= 0) return 1.0;
  if (rho <= 0) return 0.0;
  if (std::abs(rho - 1.0) < 1e-12) return 1.0 / (m + 1.0);
  // (rho^m - rho^(m+1)) / (1 - rho^(m+1)), written to stay finite for rho > 1 and large m.
  if (rho > 1.0) {  // divided through by rho^(m+1), so nothing overflows for large m
    return (1.0 - 1.0 / rho) / (1.0 - std::pow(rho, -(m + 1.0)));
  }
  const double pm = std::pow(rho, m);
  return (pm - pm * rho) / (1.0 - pm * rho);
}

Status DlcpModelInput::Validate() const {
  if (layer_sizes.empty()) return Status::Error("no layers");
  for (uint64_t s : layer_sizes) {
    if (s == 0) return Status::Error("a layer of size 0");
  }
  if (!(theta > 0 && theta < 1)) return Status::Error("theta must be in (0, 1)");
  if (!(load > 0) || load > 1000) return Status::Error("load (lambda / mu) must be in (0, 1000]");
  if (buffer_pkts < kDlcpQueues || buffer_pkts > 100'000) {
    return Status::Error("buffer must hold 7..100000 packets");
  }
  for (double t : {tol_front, tol_back, tol_small, tol_large}) {
    if (!(t > 0 && t < 1)) return Status::Error("loss tolerances must be in (0, 1)");
  }
  return Status::Ok();
}

namespace {

// Each queue's layers and share of the bytes, as the host tags them.
void AssignLayers(const DlcpModelInput& in, DlcpThresholdPlan& plan) {
  const auto m = static_cast<uint32_t>(in.layer_sizes.size());
  double total = 0;
  for (uint64_t s : in.layer_sizes) total += static_cast<double>(s);
  plan.queues.resize(kDlcpQueues);
  for (DlcpQueuePlan& q : plan.queues) {
    q.first_layer = 1;
    q.last_layer = 0;
  }
  for (uint32_t x = 0; x < m; ++x) {  // the host's tagging: queue floor(x * N / M) + 1
    DlcpQueuePlan& q = plan.queues[static_cast<uint64_t>(x) * kDlcpQueues / m];
    if (q.first_layer > q.last_layer) q.first_layer = x;
    q.last_layer = x;
    q.share += static_cast<double>(in.layer_sizes[x]) / total;
  }
}

// Each queue's load and loss costs. Strict priority: what the queues above take is gone from
// this one's service.
std::vector<QueueModel> ModelQueues(const DlcpModelInput& in, DlcpThresholdPlan& plan) {
  std::vector<QueueModel> model(kDlcpQueues);
  double above = 0;  // sum of lambda_k / mu over k < i
  for (uint32_t i = 0; i < kDlcpQueues; ++i) {
    DlcpQueuePlan& q = plan.queues[i];
    const double lambda = in.load * q.share;
    const double mu = std::max(1.0 - above, 1e-6);
    q.rho = lambda / mu;
    above += lambda;
    const double layer_tol =
        in.tol_front + (in.tol_back - in.tol_front) * static_cast<double>(i) / (kDlcpQueues - 1);
    const double mean_layer_tol = (in.tol_front + in.tol_back) / 2;
    // A class's tolerance: its size class's, scaled by how much its layers tolerate.
    q.cost_small = 1.0 / (in.tol_small * layer_tol / mean_layer_tol);
    q.cost_large = 1.0 / (in.tol_large * layer_tol / mean_layer_tol);
    model[i] = QueueModel{q.rho, q.cost_small, q.cost_large, in.theta};
  }
  return model;
}

// The optimum: each queue's L_i and S_i over a buffer of b packets, by dynamic programming.
void SolveOptimum(const DlcpModelInput& in, const std::vector<QueueModel>& model,
                  DlcpThresholdPlan& plan) {
  // c_i(L) = min over S <= L of cost_i(S, L), and the S that gives it.
  const uint32_t b = in.buffer_pkts;
  std::vector<std::vector<double>> best(kDlcpQueues, std::vector<double>(b + 1, kInf));
  std::vector<std::vector<uint32_t>> best_s(kDlcpQueues, std::vector<uint32_t>(b + 1, 0));
  for (uint32_t i = 0; i < kDlcpQueues; ++i) {
    for (uint32_t l = 1; l <= b; ++l) {
      for (uint32_t s = 0; s <= l; ++s) {
        const double c = model[i].Cost(s, l);
        if (c < best[i][l]) {
          best[i][l] = c;
          best_s[i][l] = s;
        }
      }
    }
  }
  // V(i, r) = min over L of c_i(L) + V(i + 1, r - L): every queue gets at least one packet.
  std::vector<std::vector<double>> v(kDlcpQueues + 1, std::vector<double>(b + 1, kInf));
  std::vector<std::vector<uint32_t>> pick(kDlcpQueues, std::vector<uint32_t>(b + 1, 0));
  std::fill(v[kDlcpQueues].begin(), v[kDlcpQueues].end(), 0.0);
  for (int i = kDlcpQueues - 1; i >= 0; --i) {
    for (uint32_t r = 0; r <= b; ++r) {
      for (uint32_t l = 1; l <= r; ++l) {
        const double c = best[i][l] + v[i + 1][r - l];
        if (c < v[i][r]) {
          v[i][r] = c;
          pick[i][r] = l;
        }
      }
    }
  }
  uint32_t left = b;
  for (uint32_t i = 0; i < kDlcpQueues; ++i) {
    DlcpQueuePlan& q = plan.queues[i];
    q.L = pick[i][left];
    q.S = best_s[i][q.L];
    left -= q.L;
    q.loss_small = MM1mLoss(q.rho, in.theta * q.S);
    q.loss_large = MM1mLoss(q.rho, q.L - in.theta * q.S);
    plan.buffer_used += q.L;
  }
  plan.cost = v[0][b];
}

// Fit S_i = T(1 + (i - 1)d), the form a switch takes, to the optimum: the (T, d) on a grid
// (T in steps of 0.25 packets up to the largest S_i, d in steps of 0.05 up to 20) whose
// thresholds, with the optimum's L_i, cost least; ties go to the one closest to the optimum.
void FitThresholdForm(const std::vector<QueueModel>& model, DlcpThresholdPlan& plan) {
  uint32_t max_s = 1;
  for (const DlcpQueuePlan& q : plan.queues) max_s = std::max(max_s, q.S);
  double best_cost = kInf, best_err = kInf;
  for (double t = 1; t <= max_s; t += 0.25) {
    for (int k = 0; k <= 400; ++k) {
      const double d = k * 0.05;
      double cost = 0, err = 0;
      for (uint32_t i = 0; i < kDlcpQueues; ++i) {
        const double exact = t * (1 + i * d);
        const auto s = static_cast<uint32_t>(
            std::clamp(std::round(exact), 0.0, static_cast<double>(plan.queues[i].L)));
        cost += model[i].Cost(s, plan.queues[i].L);
        err += (exact - plan.queues[i].S) * (exact - plan.queues[i].S);
      }
      if (cost < best_cost * (1 - 1e-12) || (cost <= best_cost * (1 + 1e-12) && err < best_err)) {
        best_cost = cost;
        best_err = err;
        plan.fit_t = t;
        plan.fit_d = d;
      }
    }
  }
  plan.fit_cost = best_cost;
  plan.fit_rms = std::sqrt(best_err / kDlcpQueues);
}

}  // namespace

Result<DlcpThresholdPlan> SolveDlcpThresholds(const DlcpModelInput& in) {
  SWEMU_RETURN_IF_ERROR(in.Validate());
  DlcpThresholdPlan plan;
  AssignLayers(in, plan);
  const std::vector<QueueModel> model = ModelQueues(in, plan);
  SolveOptimum(in, model, plan);
  FitThresholdForm(model, plan);
  return plan;
}

std::string DlcpThresholdsCommand(const DlcpThresholdPlan& plan) {
  std::string caps;
  for (const DlcpQueuePlan& q : plan.queues)
    caps += (caps.empty() ? "" : ",") + std::to_string(q.L);
  char t_d[64];
  std::snprintf(t_d, sizeof(t_d), "%.2f %.2f ", plan.fit_t, plan.fit_d);
  return "dlcp_thresholds " + std::string(t_d) + caps;
}

std::string FormatDlcpPlan(const DlcpModelInput& in, const DlcpThresholdPlan& plan) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "DLCP thresholds (Appendix B, corrected): %zu layers, theta %.2f, load %.2f, "
                "buffer %u packets\n",
                in.layer_sizes.size(), in.theta, in.load, in.buffer_pkts);
  out += line;
  out += "  i queue  layers    share    rho   S_i   L_i   loss small   loss large\n";
  for (uint32_t i = 0; i < plan.queues.size(); ++i) {
    const DlcpQueuePlan& q = plan.queues[i];
    const std::string layers = q.first_layer > q.last_layer ? std::string("-")
                                                            : std::to_string(q.first_layer) + "-" +
                                                                  std::to_string(q.last_layer);
    std::snprintf(line, sizeof(line), "  %u %5u  %-8s %6.3f %6.3f %5u %5u %12.3e %12.3e\n", i + 1,
                  kDlcpQueues - 1 - i, layers.c_str(), q.share, q.rho, q.S, q.L, q.loss_small,
                  q.loss_large);
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "optimum: cost %.4g (rounds per unit loss, summed), buffer used %u of %u\n"
                "fit S_i = T(1 + (i-1)d): T %.2f, d %.2f (rms %.2f packets), cost %.4g\n",
                plan.cost, plan.buffer_used, in.buffer_pkts, plan.fit_t, plan.fit_d, plan.fit_rms,
                plan.fit_cost);
  out += line;
  out += "\ncommands (the fit):\n  " + DlcpThresholdsCommand(plan) + "\n";
  out += "commands (the optimum, queue by queue):\n";
  for (uint32_t i = 0; i < plan.queues.size(); ++i) {
    const int q = static_cast<int>(kDlcpQueues - 1 - i);
    out += "  set_red_threshold all " + std::to_string(q) + " " + std::to_string(plan.queues[i].S) +
           "\n  set_queue_depth " + std::to_string(plan.queues[i].L) + " all " + std::to_string(q) +
           "\n";
  }
  return out;
}

}  // namespace swemu
