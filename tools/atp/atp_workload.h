#pragma once
// The workload swemu-atp runs: every iteration, each worker all-reduces one model's gradients
// layer by layer (one AllReduce per layer, all submitted at once, as BytePS pushes tensors),
// first with in-network aggregation (job 1), then the same gradients with it off (job 2: the
// switches forward, the PS aggregates everything). It checks every sum against the exact sum
// of the float inputs and reports time, goodput and where the aggregation happened.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/workload/model_layers.h"
#include "hostlib/workload/synthetic_gradients.h"
#include "pipeline/core/status.h"

namespace swemu {

struct WorkloadOptions {
  ModelLayers model;
  uint32_t iterations = 3;
  bool at_ps_passes = true;  // false: in-network passes only (loss sweeps)
  GradientSource gradients;
};

struct PassResult {
  std::string mode;  // "in-network" or "at-PS"
  uint32_t iteration = 0;
  double seconds = 0;       // from the first submit to the last completion
  double goodput_gbps = 0;  // gradient bytes per worker / seconds
  double in_switch = 0;     // fraction of elements the PS got fully aggregated by a switch
  double max_error = 0;     // max |result - exact float sum| over workers and elements
  double error_bound = 0;   // W * 0.5 / scale (int32 rounding), plus float rounding
  uint64_t packets = 0;     // the workers' gradient packets, retransmissions included
  uint64_t retransmissions = 0;
  uint64_t timeouts = 0;
  uint64_t ecn_halvings = 0;
  uint64_t spurious = 0;  // timeouts and fast retransmits found spurious (their cut undone)
  // Contention, in real time: the share of the pass the hosts' loop was runnable but off its
  // CPU, and the smallest share of one core any swemu got (busy polling wants all of it); < 0:
  // not measured.
  double host_lost = -1;
  double switch_cpu = -1;
  // The larger of what the hosts lost and what swemu missed of its core.
  double CpuLost() const;
};

// What a real-time driver can say about the machine at one instant (see PassResult).
struct LoadSample {
  uint64_t wall_ns = 0;
  uint64_t host_lost_ns = 0;
  // CPU time of each busy-polling swemu (empty: not measured; an entry < 0: unreadable).
  std::vector<int64_t> switch_cpu_ns;
};

// A pass that lost more than this share of its CPU time ran on a contended host.
inline constexpr double kContendedShare = 0.05;

// How a pass runs its hosts until `done`; returns an error after a timeout. `now_ns` is the
// clock the pass is timed with (virtual time offline, the host clock in real time).
struct WorkloadDriver {
  std::function<Status(const std::function<bool()>& done)> run_until;
  std::function<uint64_t()> now_ns;
  std::function<void()> wake;        // after submitting work (the engine needs a nudge)
  std::function<LoadSample()> load;  // real time only
};

// The PS's history (parameter packets kept for late retransmissions) must hold the current and
// the previous call: two of the model's largest layers, rounded up to a power of two.
uint32_t PsHistoryFor(const ModelLayers& model, uint16_t elements);

class AtpWorkload {
 public:
  // workers[i] is worker i's Context (already JoinJob-ed to both jobs); ps serves both jobs.
  AtpWorkload(WorkloadOptions options, std::vector<Context*> workers, Context* ps,
              uint16_t aggregate_job, uint16_t plain_job, double scale);

  // Runs every iteration in both modes; one line per pass on `out`.
  Result<std::vector<PassResult>> Run(const WorkloadDriver& driver, std::ostream& out);

  static void PrintHeader(std::ostream& out);
  static void PrintPass(const PassResult& pass, std::ostream& out);
  // After the passes: the share of packets retransmitted per mode, and a line when the host
  // was contended.
  static void PrintSummary(const std::vector<PassResult>& passes, std::ostream& out);

 private:
  Result<PassResult> RunPass(const WorkloadDriver& driver, uint16_t job, uint32_t iteration);
  void Fill(uint32_t iteration);
  void CheckResults(PassResult* pass) const;

  WorkloadOptions options_;
  std::vector<Context*> workers_;
  Context* ps_;
  uint16_t aggregate_job_;
  uint16_t plain_job_;
  double scale_;
  std::vector<std::vector<float>> in_;   // per worker, all layers back to back
  std::vector<std::vector<float>> out_;  // per worker
};

}  // namespace swemu
