#pragma once
// The real-time TM clock: the TSC scaled to nanoseconds since the clock was made. Reading it is
// one rdtsc and two divisions by a constant, with no system call.
#include <rte_cycles.h>

#include "pipeline/core/clock.h"

namespace swemu {

class TscClock final : public Clock {
 public:
  TscClock() : start_(rte_rdtsc()), hz_(rte_get_tsc_hz()) {}

  TimeNs NowNs() const noexcept override { return CyclesToNs(rte_rdtsc() - start_); }
  // Whole seconds and the remainder separately, so cycles * 1e9 cannot overflow.
  TimeNs CyclesToNs(uint64_t cycles) const noexcept {
    return cycles / hz_ * 1'000'000'000ull + cycles % hz_ * 1'000'000'000ull / hz_;
  }
  uint64_t hz() const noexcept { return hz_; }

 private:
  uint64_t start_;
  uint64_t hz_;
};

}  // namespace swemu
