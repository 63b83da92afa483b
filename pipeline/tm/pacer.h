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
    last_start_ = start;
    last_units_ = units;
    uint64_t total = free_rem_ + units * kNsPerSec;
    free_ns_ += total / rate_;
    free_rem_ = total % rate_;
    return start;
  }

  // Control path: the new rate applies from the next event. The event under way ends when it
  // would have at the old rate, or at the new one if that is sooner: a port slowed to 1 bit/s
  // and then sped up again does not stay silent for the one frame's 700 s.
  void SetRate(uint64_t rate) noexcept {
    free_ns_ = ReadyAt();  // the remainder is in units of the old rate: round up first
    free_rem_ = 0;
    if (rate != 0 && last_units_ != 0) {
      const unsigned __int128 ns = (static_cast<unsigned __int128>(last_units_) * kNsPerSec +
                                    rate - 1) / rate;
      if (last_start_ + ns < free_ns_) free_ns_ = last_start_ + static_cast<TimeNs>(ns);
    }
    rate_ = rate;
  }

 private:
  uint64_t rate_ = 0;  // units per second; 0 = no pacing
  TimeNs free_ns_ = 0;
  uint64_t free_rem_ = 0;  // < rate_
  TimeNs last_start_ = 0;  // the latest event: its start and size, for a rate change
  uint64_t last_units_ = 0;
};

}  // namespace swemu
