#pragma once
// The ATP parameter server of section 5.4, for one job. Per in-progress seq: the bitmap of the
// workers whose gradients are in, an int64 accumulator per element (exact: no overflow for up
// to 2^32 int32 addends) and a double accumulator for float packets (the overflow path).
//
// A gradient packet (original, switch partial or switch-complete aggregate) is:
//   - ignored when it carries kAtpFlagOverflow (a switch sum overflowed: the values are
//     invalid; the workers' retransmitted originals complete the seq);
//   - a duplicate when its bitmap is a subset of the seq's bitmap (ignored);
//   - a replacement when its bitmap holds every worker the seq holds and more (section 5.4: "if
//     the incoming gradient packet is completely aggregated, ATP replaces the value"; swemu
//     does this for any superset, e.g. a switch's aggregate after a retransmitted original
//     reached the PS on its own): the seq's sums become the packet's;
//   - a partial overlap when it shares some but not all workers (ignored: retransmitted
//     originals bring the missing ones);
//   - otherwise added, bitmap |= its bitmap.
// When the bitmap holds all W workers the seq is complete: one parameter packet
// (kAtpFlagParam | kAtpFlagFloat, float32 sums, full bitmap, ECN flag if any contribution
// carried ECN/CE; kAtpFlagOverflow if a switch's sum for the seq overflowed and the PS redid it
// from the originals) goes to the job's multicast group. A gradient for a completed seq (its
// parameter packet was lost somewhere) re-sends that parameter packet.
//
// Memory is fixed at setup: `slots` in-progress seqs (seq mod slots; a gradient whose slot is
// held by another seq is dropped, counted, and retransmitted later by its worker) and the
// parameter packets of the last `history` seqs (enough for the job's current and previous
// AllReduce call when a call has at most history / 2 packets).
#include <cstdint>
#include <span>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/job_config.h"
#include "hostlib/common/endpoint.h"

namespace swemu {

struct AtpPsOptions {
  uint32_t slots = 8192;     // power of two
  uint32_t history = 32768;  // power of two
};

struct AtpPsStats {
  uint64_t gradients = 0;  // valid gradient packets received
  uint64_t originals = 0;  // one worker's bit (no switch aggregation)
  uint64_t partials = 0;   // 2 .. W-1 workers (partly aggregated in a switch)
  uint64_t full = 0;       // all W workers (fully aggregated in the switch)
  uint64_t float_packets = 0;
  uint64_t duplicates = 0;
  uint64_t partial_overlaps = 0;
  uint64_t replaced = 0;  // a superset aggregate took the place of what the seq held
  uint64_t overflow_ignored = 0;
  uint64_t bad_packets = 0;          // wrong element count or bitmap outside the job's workers
  uint64_t slot_busy = 0;            // dropped: the seq's slot holds another in-progress seq
  uint64_t history_misses = 0;       // for a completed seq older than the history
  uint64_t completed = 0;            // seqs
  uint64_t completed_by_switch = 0;  // completed by one packet already holding all workers
  uint64_t elements_by_switch = 0;   // E per seq (padding included)
  uint64_t elements_at_ps = 0;
  uint64_t params_sent = 0;
  uint64_t param_resends = 0;  // to the worker whose late gradient asked (unicast)
  uint64_t send_failures = 0;
};

// An Endpoint of its own (one job on one host port: frames that are not this job's gradients are
// ignored; it has no timers), or one of a Context's jobs (the Context parses each frame once and
// hands it to OnGradient).
class AtpPs final : public Endpoint {
 public:
  AtpPs(const AtpJobConfig& job, Transport* transport, AtpPsOptions options = {});

  // A gradient packet of this job, on its port.
  void OnGradient(const AtpHeader& header, bool ce) noexcept;

  // Endpoint
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs) noexcept override {}
  TimeNs NextTimer() const noexcept override { return kNever; }
  void Pump(TimeNs) noexcept override {}
  void SetTransport(Transport* transport) { transport_ = transport; }

  uint16_t job_id() const { return job_.spec.job_id; }
  uint16_t udp_port() const { return job_.spec.udp_port; }
  const AtpPsStats& stats() const { return stats_; }

 private:
  struct Slot {
    uint32_t seq = 0;
    uint32_t bitmap = 0;  // 0: free
    uint32_t packets = 0;
    bool ecn = false;
    bool has_float = false;
  };

  void Accumulate(Slot& slot, uint32_t index, const AtpHeader& header) noexcept;
  void Complete(Slot& slot, uint32_t index) noexcept;
  void SendParam(uint32_t history_index) noexcept;
  // A stored parameter packet again, to the one worker whose late gradient asked for it.
  void ResendParam(uint32_t history_index, uint32_t worker) noexcept;

  AtpJobConfig job_;
  Transport* transport_;
  uint32_t slot_mask_;
  uint32_t history_mask_;
  uint16_t elements_;
  AtpFrameTemplate tmpl_;
  std::vector<AtpFrameTemplate> unicast_;  // per worker: resends go to the asker only
  std::vector<uint8_t> resend_;            // one frame being built
  std::vector<Slot> slots_;
  std::vector<int64_t> sums_;         // slots x elements
  std::vector<double> fsums_;         // slots x elements, float packets only
  std::vector<uint32_t> done_seq_;    // history: seq + 1 of the stored parameter packet, 0 = none
  std::vector<uint32_t> overflowed_seq_;  // history: seq + 1 of a seq whose switch sum overflowed
  std::vector<uint8_t> done_frames_;  // history x frame_len
  uint32_t newest_done_ = 0;          // highest completed seq + 1 (0: none)
  AtpPsStats stats_;
};

}  // namespace swemu
