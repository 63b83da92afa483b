#pragma once
// The GOAT parameter server (III-D step 5, "global aggregation"): it adds up whatever reaches
// it, the switches' aggregates (complete, or partial sums a retransmission flushed) and workers'
// fragments sent to it directly, and completes a fragment of a round when its contribution
// bitmap counts the job's target: every worker, or the K fastest in the asynchronous mode. It
// then sends the sums (int32, exact in 64 bits, clamped and flagged kGoatFlagOverflow if they do
// not fit) to each contributor. By bitmap, a packet is:
//   - ignored when it carries kGoatFlagOverflow (a switch sum overflowed; the workers'
//     retransmitted fragments complete the round);
//   - a duplicate when all its workers are in already;
//   - a partial overlap when some are (ignored; retransmissions bring the rest);
//   - otherwise added.
// A gradient for a fragment whose round is already complete (a retransmission after a lost
// result, or a straggler in the asynchronous mode) is answered with that fragment's newest
// result, unicast; when the sender was not counted, flagged kGoatFlagExcluded: its gradient is
// discarded, as K-SGD discards stragglers, and it takes the model the others made.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/udp_frame.h"
#include "hostlib/goat/goat_job.h"

namespace swemu {

struct GoatPsStats {
  uint64_t gradients = 0;            // valid gradient packets received (the PS's aggregation load)
  uint64_t gradient_bytes = 0;       // their frame bytes
  uint64_t originals = 0;            // one worker's fragment, not through a switch slot
  uint64_t aggregates = 0;           // written by a switch (kGoatFlagAggregate)
  uint64_t completed = 0;            // fragment-rounds
  uint64_t completed_by_switch = 0;  // completed by one packet already holding the target
  uint64_t duplicates = 0;
  uint64_t partial_overlaps = 0;
  uint64_t overflow_ignored = 0;
  uint64_t late = 0;            // for a completed round, a sender not counted (answered excluded)
  uint64_t result_resends = 0;  // for a completed round, every sender counted: result again
  uint64_t bad_packets = 0;     // not this job's shape: wrong elements, sub-model, fragment
  uint64_t results_sent = 0;
  uint64_t send_failures = 0;
};

class GoatPs final : public Endpoint {
 public:
  GoatPs(const GoatJob& job, Transport* transport);

  const GoatPsStats& stats() const { return stats_; }
  // Fragment-rounds still collecting.
  std::size_t pending() const { return pending_.size(); }
  void SetTransport(Transport* transport) { transport_ = transport; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs) noexcept override {}
  TimeNs NextTimer() const noexcept override { return kNever; }
  void Pump(TimeNs) noexcept override {}

 private:
  struct Pending {
    uint64_t bitmap = 0;
    std::vector<int64_t> sums;
  };
  struct Latest {  // a fragment's newest completed round
    bool valid = false;
    bool overflow = false;
    uint32_t round = 0;
    uint64_t bitmap = 0;
    std::vector<int32_t> values;
  };
  void OnGradient(const GoatHeader& h, std::size_t frame_len) noexcept;
  void Complete(uint64_t index, uint32_t round, Pending& slot, const GoatHeader& h) noexcept;
  void SendResult(uint64_t index, uint32_t round, uint32_t worker, bool excluded) noexcept;

  const GoatJob& job_;
  Transport* transport_;
  std::vector<UdpFrameTemplate> to_worker_;
  std::vector<uint64_t> first_;
  std::unordered_map<uint64_t, Pending> pending_;  // key: round << 32 | global fragment
  std::vector<Latest> latest_;
  std::vector<uint8_t> frame_;
  GoatPsStats stats_;
};

}  // namespace swemu
