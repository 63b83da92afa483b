#pragma once
// A GOAT job on a GoatFabric in the virtual-time engine, packet by packet: the plan of one
// scheme published to the switches, workers sending a round's gradients (deterministic
// pseudo-random int32 values), the PS completing fragments, rounds one after another. It
// measures what the paper compares (section VII): the PS's aggregation traffic (gradient
// fragments that reach the PS) and the total communication (every link traversal of a gradient
// fragment; results are counted apart), the time per round, and checks every result against the
// exact sum of the workers it says it counted.
//
// Schemes: GOAT (GINA's LP in Clp, KRGS's rounding, goat_node entries per switch), ATP-style
// sharing (the paper's ATP baseline: first switch on the path with a free slot, VII-A), and
// PS-only (Geryon's baseline without in-network aggregation).
//
// Network dynamics (VII-A: workers' sending rates "ratio x 10 Gbps" with standard deviation
// 0.2; the mean is not given): each round each worker draws ratio ~ N(rate_mean, rate_std),
// clipped to [0.05, 1], and paces its fragments at ratio x link rate.
//
// Asynchronous mode (Algorithm 2): from the second round on, the PS's K is chosen from the
// previous round's arrival intervals (ChooseK; round 0 waits for every worker), the K fastest by
// that history are the participants, and each switch's goat_node fan-in for (g, s) becomes K^s,
// the participants the plan sends there (table_modify, once per round, as the paper's PS
// publishes K each epoch). A straggler's fragments are late: the PS answers them with the
// round's result, flagged excluded.
#include <cstdint>
#include <string>
#include <vector>

#include "hostlib/goat/fabric.h"
#include "hostlib/goat/ps.h"
#include "hostlib/goat/worker.h"
#include "pipeline/programs/goat.h"

namespace swemu {

enum class GoatScheme { kGoat, kAtpStyle, kPsOnly };
std::string_view GoatSchemeName(GoatScheme scheme);

struct GoatRunOptions {
  GoatScheme scheme = GoatScheme::kGoat;
  uint16_t job_id = 1;
  uint16_t elements = kGoatDefaultElements;
  std::vector<uint32_t> fragments;  // per sub-model; each at most a switch's memory
  uint32_t rounds = 1;
  uint64_t seed = 1;  // KRGS, gradients, rates
  bool async = false;
  uint32_t fixed_k = 0;  // async: this K every round instead of Algorithm 2's
  double noise = 1.0;    // Algorithm 2's r = sigma^2 / eps
  GoatNetOptions net;
  double rate_mean = 0;  // 0: workers send unpaced
  double rate_std = 0;
  std::vector<TimeNs> start_delay;  // per worker (missing: 0), every round
  GoatWorkerOptions worker;
  TimeNs round_timeout_ns = 10'000'000'000;
};

struct GoatRoundStats {
  // From the round's start to the last result of a worker the round counted (the K fastest in
  // the asynchronous mode), and to the last result of any worker (a straggler's included).
  TimeNs duration_ns = 0;
  TimeNs all_done_ns = 0;
  uint32_t k = 0;  // workers the PS waited for
  uint64_t ps_gradients = 0;
};

struct GoatRunResult {
  std::vector<GoatRoundStats> rounds;
  uint64_t frame_bytes = 0;      // every GOAT frame of this job
  uint64_t ps_gradients = 0;     // fragments that reached the PS, all rounds
  uint64_t gradient_frames = 0;  // link traversals of gradient fragments
  uint64_t result_frames = 0;    // link traversals of results
  uint64_t checked = 0;          // result elements compared with the exact sum
  uint64_t mismatches = 0;
  uint64_t excluded = 0;  // results a worker got without being counted
  uint64_t retransmissions = 0;
  uint64_t events = 0;  // the engine's, the whole run
  GoatPsStats ps;
  GoatCounters switches;                    // summed over the switches
  KrgsStats krgs;                           // GOAT only
  std::vector<std::vector<uint16_t>> node;  // the published node per worker and sub-model
};

Result<GoatRunResult> RunGoatJob(const GoatFabric& fabric, const GoatRunOptions& options);

// A round's gradients, computed on demand (deterministic pseudo-random int32 values of at most
// 10^6 in magnitude, from the seed, the round, the worker and the element), and the check of
// every result against the exact sum of the workers it counted: the sum over every worker, kept
// per element, less the workers a result did not count. 4 B per element of the model instead
// of the 8 B per element and worker that gradients and results held in memory take (AlexNet at
// full size, 35 workers: 245 MB instead of 17 GB); RunGoatJob's workers read and check through it.
class GoatRoundTruth {
 public:
  GoatRoundTruth(uint64_t seed, uint32_t workers, uint16_t elements, uint64_t total_elements)
      : seed_(seed), workers_(workers), elements_(elements), all_(total_elements) {}
  // The next round's values and sums.
  void Start(uint32_t round);
  // Worker w's values of a fragment (elements of them).
  void Gradient(uint32_t w, uint64_t fragment, int32_t* values) const;
  // Counts the fragment's elements as checked, and those that differ from the exact sum of the
  // contributors' values (all of them when a contributor is no worker) as mismatches.
  void Check(uint64_t fragment, const int32_t* values, uint64_t contributors);
  uint64_t checked() const { return checked_; }
  uint64_t mismatches() const { return mismatches_; }

 private:
  const uint64_t seed_;
  const uint32_t workers_;
  const uint16_t elements_;
  uint32_t round_ = 0;
  std::vector<int32_t> all_;  // |sum| <= 64 x 10^6: fits
  uint64_t checked_ = 0;
  uint64_t mismatches_ = 0;
};

}  // namespace swemu
