#pragma once
// The real-time TM clock: the TSC scaled to nanoseconds since the clock was made. Reading it is
// one rdtsc and a multiply by ns-per-cycle held as a whole part and a 0.64 fixed-point fraction
// (no division, no system call); the fraction's relative error is below 2^-64, so no drift.
#include <rte_cycles.h>

#include "pipeline/core/clock.h"

namespace swemu {

class TscClock final : public Clock {
 public:
  TscClock()
      : start_(rte_rdtsc()),
        hz_(rte_get_tsc_hz()),
        whole_(kNsPerSecond / hz_),
        fraction_(static_cast<uint64_t>((static_cast<unsigned __int128>(kNsPerSecond % hz_) << 64) /
                                        hz_)) {}

  TimeNs NowNs() const noexcept override { return AtTsc(rte_rdtsc()); }
  // The clock's time at TSC value `tsc` (taken after the clock was made).
  TimeNs AtTsc(uint64_t tsc) const noexcept { return CyclesToNs(tsc - start_); }
  TimeNs CyclesToNs(uint64_t cycles) const noexcept {
    return cycles * whole_ +
           static_cast<TimeNs>((static_cast<unsigned __int128>(cycles) * fraction_) >> 64);
  }
  uint64_t hz() const noexcept { return hz_; }

 private:
  static constexpr uint64_t kNsPerSecond = 1'000'000'000ull;
  uint64_t start_;
  uint64_t hz_;
  uint64_t whole_;     // whole nanoseconds per cycle (0 above 1 GHz)
  uint64_t fraction_;  // the rest, as a 0.64 fixed-point fraction of a nanosecond
};

// One lcore's switch clock: the TscClock's time at the start of the lcore's current loop, which
// the datapath latches from the one TSC read it makes per loop. An rdtsc costs about 50 cycles on
// a virtual machine, as much as a packet's TM work, and a loop lasts a few microseconds at most,
// which the TM's pacers absorb (a late dequeue keeps the exact pace).
class LoopClock final : public Clock {
 public:
  explicit LoopClock(const TscClock& tsc) : tsc_(tsc), now_(tsc.NowNs()) {}
  TimeNs NowNs() const noexcept override { return now_; }
  void Latch(uint64_t tsc) noexcept { now_ = tsc_.AtTsc(tsc); }

 private:
  const TscClock& tsc_;
  TimeNs now_;
};

}  // namespace swemu
