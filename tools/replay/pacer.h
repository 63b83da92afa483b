#pragma once
// swemu-replay's schedule: the deadline of every frame, in nanoseconds after the first frame was
// sent. Each deadline is computed from the first frame's (never from the previous frame's send
// time), so late sends and rounding never accumulate into drift.
#include <cstdint>

#include "pipeline/core/clock.h"

namespace swemu::replay {

enum class Pace : uint8_t {
  kCaptured,  // the pcap's own gaps, scaled by --multiplier (the default)
  kTopSpeed,  // every frame is due at once
  kPps,       // frame k is due at k / pps
  kMbps,      // frame k is due when the bits of frames 0..k-1 took their time at the rate
};

struct PaceSpec {
  Pace pace = Pace::kCaptured;
  double multiplier = 1;      // kCaptured: 2 replays twice as fast
  uint64_t micro_pps = 0;     // kPps: packets per 10^6 s (so 0.5 pps is 500000)
  uint64_t bits_per_sec = 0;  // kMbps
};

class Pacer {
 public:
  explicit Pacer(const PaceSpec& spec) : spec_(spec) {}

  // The deadline of the next frame, which has pcap timestamp `ts_ns` and `bytes` bytes.
  // Deadlines never go backwards (a capture whose timestamps do sends such a frame at once).
  TimeNs Next(TimeNs ts_ns, uint32_t bytes);
  // The pcap starts again (--loop): its first frame follows the last one of this pass with the
  // pass's mean gap, so a loop of a constant-rate capture stays at its rate.
  void EndPass();

  uint64_t frames() const { return frames_; }

 private:
  PaceSpec spec_;
  uint64_t frames_ = 0;  // frames scheduled so far
  uint64_t bits_ = 0;    // bits of the frames scheduled so far (kMbps)
  TimeNs last_due_ = 0;
  // kCaptured: where the current pass's frames sit on the capture's time line.
  bool have_first_ = false;
  TimeNs first_ts_ = 0;     // the first frame of the first pass
  TimeNs pass_offset_ = 0;  // capture time added to this pass's timestamps
  TimeNs pass_first_ts_ = 0;
  TimeNs pass_max_ts_ = 0;
  uint64_t pass_frames_ = 0;
};

}  // namespace swemu::replay
