#pragma once
// The GOAT worker (III-D steps 2 and 5): each round it sends every fragment of its gradient with
// the aggregation node the plan gave its sub-model, and takes each fragment's sums from the PS's
// result. GOAT itself describes no loss recovery; swemu's is ATP's basic one: a window of
// fragments in flight, and a fragment whose result has not come within the RTO is sent again
// with kGoatFlagResend (the RTO doubles per try, capped), which makes the switch holding its
// slot flush the partial sum to the PS (pipeline/programs/goat.h). A result flagged
// kGoatFlagExcluded means this worker's gradient came too late to be counted (the asynchronous
// mode's K fastest): the values are still the round's model, and the worker takes them.
#include <cstdint>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/pacer.h"
#include "hostlib/common/udp_frame.h"
#include "hostlib/goat/goat_job.h"

namespace swemu {

struct GoatWorkerOptions {
  uint32_t window = 64;  // fragments in flight
  TimeNs rto_ns = 2'000'000;
  TimeNs max_rto_ns = 64'000'000;
  uint64_t rate_bps = 0;  // first transmissions paced to this rate (frame bytes); 0: unpaced
};

struct GoatWorkerStats {
  uint64_t fragments_sent = 0;  // including retransmissions
  uint64_t retransmissions = 0;
  uint64_t send_failures = 0;
  uint64_t results = 0;  // results that completed a fragment of the current round
  uint64_t duplicate_results = 0;
  uint64_t stale_results = 0;     // for another round, or not this job's
  uint64_t excluded = 0;          // results that did not count this worker (late, async mode)
  uint64_t overflow_results = 0;  // results whose sums the PS clamped to int32 (invalid values)
  uint64_t rounds_completed = 0;
};

// Where a worker's round reads its gradient and writes its results, one fragment at a time
// (`fragment` is the job's global fragment index, job.elements values each). The span form of
// StartRound keeps both in memory; a generator (hostlib/goat/experiment.cc at full model
// sizes) computes the gradient on demand and checks each result as it comes.
class GoatRoundValues {
 public:
  virtual ~GoatRoundValues() = default;
  virtual void Gradient(uint64_t fragment, int32_t* values) = 0;
  // Once per fragment and round: the first result (duplicates are dropped before).
  virtual void Result(uint64_t fragment, const int32_t* values, uint64_t contributors) = 0;
};

class GoatWorker final : public Endpoint {
 public:
  // `job` must be valid (GoatJob::Validate) and outlive the worker.
  GoatWorker(const GoatJob& job, uint32_t worker, Transport* transport,
             GoatWorkerOptions options = {});

  // Starts `round`: from `start_ns` on, sends `gradient` (job.total_elements() values) and writes
  // each fragment's sums into `out` as its result arrives. Both must outlive the round. Errors:
  // a round still running, spans of the wrong size.
  Status StartRound(uint32_t round, std::span<const int32_t> gradient, std::span<int32_t> out,
                    TimeNs start_ns);
  // The same with `values` (outliving the round) giving the gradient and taking the results.
  Status StartRound(uint32_t round, GoatRoundValues* values, TimeNs start_ns);
  bool done() const { return done_count_ == frags_.size() && started_; }
  TimeNs finish_ns() const { return finish_ns_; }
  // When the round's last fragment was first sent (0: not yet): the worker's arrival, as the
  // asynchronous mode's history (Algorithm 2's p_w) counts it.
  TimeNs sent_all_ns() const { return sent_all_ns_; }
  // Per global fragment of the last round: the workers its result counted (bitmap).
  uint64_t contributors(uint64_t fragment) const { return frags_[fragment].contributors; }
  // The pacing rate from the next transmission on (0: unpaced).
  void SetRate(uint64_t rate_bps) { options_.rate_bps = rate_bps; }
  const GoatWorkerStats& stats() const { return stats_; }
  void SetTransport(Transport* transport) { transport_ = transport; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  enum State : uint8_t { kUnsent, kInFlight, kDone };
  struct Fragment {
    State state = kUnsent;
    uint8_t tries = 0;
    uint64_t contributors = 0;
    TimeNs deadline = kNever;
  };
  void Send(uint64_t index, bool resend, TimeNs now) noexcept;

  const GoatJob& job_;
  uint32_t worker_;
  Transport* transport_;
  GoatWorkerOptions options_;
  UdpFrameTemplate tmpl_;
  std::vector<GoatFragmentRef> refs_;
  std::vector<uint64_t> first_;  // first global fragment per sub-model
  std::vector<Fragment> frags_;
  std::vector<uint8_t> frame_;
  std::priority_queue<std::pair<TimeNs, uint64_t>, std::vector<std::pair<TimeNs, uint64_t>>,
                      std::greater<>>
      deadlines_;
  // The span form's values: the gradient read, each fragment's result written.
  class SpanValues final : public GoatRoundValues {
   public:
    SpanValues(uint16_t elements, std::span<const int32_t> gradient, std::span<int32_t> out)
        : elements_(elements), gradient_(gradient), out_(out) {}
    void Gradient(uint64_t fragment, int32_t* values) override;
    void Result(uint64_t fragment, const int32_t* values, uint64_t contributors) override;

   private:
    uint16_t elements_;
    std::span<const int32_t> gradient_;
    std::span<int32_t> out_;
  };
  SpanValues spans_{0, {}, {}};
  GoatRoundValues* values_ = nullptr;
  std::vector<int32_t> buffer_;  // one fragment's values
  uint32_t round_ = 0;
  bool started_ = false;
  TimeNs start_ns_ = 0;
  TimeNs finish_ns_ = 0;
  TimeNs sent_all_ns_ = 0;
  uint64_t next_unsent_ = 0;
  HostPacer pacer_;  // first transmissions, on frame bytes
  uint64_t in_flight_ = 0;
  uint64_t done_count_ = 0;
  GoatWorkerStats stats_;
};

}  // namespace swemu
