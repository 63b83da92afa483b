#pragma once
// Drift-free pacing for the TM's shapers (port link rate in bits/s, queue rate in packets/s).
// The end of the last event is kept as ns plus an exact remainder in 1/rate ns, so a long run at
// 819.2 ns per frame stays at exactly that pace instead of rounding every frame.
#include <cstdint>

#include "pipeline/core/clock.h"

namespace swemu {

class Pacer {
 public:
  static constexpr uint64_t kNsPerSec = 1'000'000'000;

  uint64_t rate() const noexcept { return rate_; }
  bool enabled() const noexcept { return rate_ != 0; }
  // The first whole nanosecond at which the previous event is over.
  TimeNs ReadyAt() const noexcept { return free_ns_ + (free_rem_ != 0 ? 1 : 0); }
  // The previous event's end, rounded down.
  TimeNs FreeFloor() const noexcept { return free_ns_; }

  // Starts an event of `units` (bits, or packets) at the later of `earliest` and the exact end of
  // the previous event; returns that start rounded up to a nanosecond. Precondition: enabled().
  TimeNs Start(TimeNs earliest, uint64_t units) noexcept {
    if (earliest > free_ns_) {
      free_ns_ = earliest;
      free_rem_ = 0;
    }
    TimeNs start = ReadyAt();
    uint64_t total = free_rem_ + units * kNsPerSec;
    free_ns_ += total / rate_;
    free_rem_ = total % rate_;
    return start;
  }

  // Control path. The remainder is in units of the old rate, so round the free time up first.
  void SetRate(uint64_t rate) noexcept {
    free_ns_ = ReadyAt();
    free_rem_ = 0;
    rate_ = rate;
  }

 private:
  uint64_t rate_ = 0;  // units per second; 0 = no pacing
  TimeNs free_ns_ = 0;
  uint64_t free_rem_ = 0;  // < rate_
};

}  // namespace swemu
