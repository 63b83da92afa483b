#pragma once
// Autotune (PLink section 4.3): moves aggregation masters as the network changes.
//   - Quicktune (4.3.1), one shot on a trigger (a throughput change above `trigger`, 20% in the
//     paper's example): masters reassigned so that the slowest node's time
//       t_i = sum_c S(c) (LM(i,c) |G(i)| + GM(i,c) |G|) / BW_i
//     is least, greedily: GMs to groups by their inter-group bandwidth, then LMs (and the GM with
//     its LM) to the group's members by their aggregate bandwidth, largest chunk first.
//   - Finetune (4.3.2), step by step: blame B(i) = beta * l^(i) + gamma * t^(i), with l(i) =
//     sum_j D(i, j) (bytes node i moved) min-max normalised and t(i) = max_j RTT(i, j) +
//     sum_j D(i, j) / BW(i, j) normalised by its mean; when B(most) / B(least) > epsilon, move
//     one GM (or, if the most blamed node has none, an LM of its group) from the most to the
//     least blamed node that can take it, and twice as many each step the same node stays most
//     blamed. The paper gives no beta, gamma, epsilon or stop condition: swemu uses beta = gamma
//     = 1, epsilon = 1.05, and stops moving once max/min load < 1.05 while no node's time is
//     more than epsilon above the mean (docs/papers.md, "PLink").
#include <cstdint>
#include <vector>

#include "hostlib/plink/agg_engine.h"
#include "hostlib/plink/agg_plan.h"

namespace swemu {

// What a step measured, per node (bytes moved, time spent) and per pair (bandwidth, RTT).
struct AggMetrics {
  std::vector<double> bytes;                   // l(i) = sum_j D(i, j)
  std::vector<double> seconds;                 // t(i)
  std::vector<std::vector<double>> bandwidth;  // BW(i, j), bytes/s
  double iteration_seconds = 0;                // the slowest node's t
};

// The model the tests and the engine-free runs use: every transfer of the schedule at the pair's
// bandwidth, each node's time the sum of what it sends and receives over the pairs' bandwidth.
AggMetrics ModelMetrics(const AggPlan& plan, const std::vector<std::vector<double>>& bandwidth);

// The same from a reduction the engine ran (AggEngine's per-node reports): BW(i, j) the bytes i
// sent to j over the time it had some of them outstanding (where it sent j nothing, `prior`'s),
// l(i) the payload bytes i sent and received, t(i) = sum_j D(i, j) / BW as the paper defines it
// (the RTT term left out: microseconds against milliseconds), and the iteration's time the
// reduction's latency (its first start to its last finish).
AggMetrics MeasuredMetrics(const std::vector<AggNodeReport>& reports,
                           const std::vector<std::vector<double>>& prior);

AggPlan Quicktune(const AggPlan& plan, const std::vector<std::vector<double>>& bandwidth);

struct AutotuneOptions {
  double trigger = 0.2;  // relative throughput change that runs Quicktune
  double beta = 1, gamma = 1, epsilon = 1.05;
  double balanced = 1.05;  // max/min load under which Finetune stops moving
};

class Autotune {
 public:
  explicit Autotune(AutotuneOptions options = {}) : options_(options) {}
  // One step: given the current plan and what it measured, the plan for the next step. Returns
  // the masters moved (0: none).
  uint32_t Step(AggPlan& plan, const AggMetrics& metrics,
                const std::vector<std::vector<double>>& bandwidth);
  uint32_t quicktunes() const { return quicktunes_; }

 private:
  uint32_t Finetune(AggPlan& plan, const AggMetrics& metrics);
  AutotuneOptions options_;
  double last_iteration_ = 0;
  int32_t last_blamed_ = -1;
  uint32_t streak_ = 0;
  uint32_t quicktunes_ = 0;
};

}  // namespace swemu
