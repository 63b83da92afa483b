#include "pipeline/core/cycles.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace swemu {

double CyclesPerNs() {
  static const double per_ns = [] {
    using Steady = std::chrono::steady_clock;
    const Steady::time_point t0 = Steady::now();
    const uint64_t c0 = ReadCycles();
    Steady::time_point t1 = t0;
    while (t1 - t0 < std::chrono::milliseconds(20)) t1 = Steady::now();
    const uint64_t c1 = ReadCycles();
    const double ns =
        static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    return static_cast<double>(c1 - c0) / ns;
  }();
  return per_ns;
}

ScopeOverhead MeasureScopeOverhead() {
  constexpr int kCalls = 1000;
  constexpr int kTrials = 25;
  ScopeOverhead best{std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  for (int trial = 0; trial < kTrials; ++trial) {
    CycleCounter outer;
    CycleCounter inner;
    {
      CycleScope whole(&outer, 0);
      for (int i = 0; i < kCalls; ++i) {
        CycleScope empty(&inner, 1);
        asm volatile("" ::: "memory");  // keeps the loop and its scopes in place
      }
    }
    best.inside = std::min(best.inside, static_cast<double>(inner.cycles) / kCalls);
    best.whole = std::min(best.whole, static_cast<double>(outer.cycles) / kCalls);
  }
  return best;
}

}  // namespace swemu
