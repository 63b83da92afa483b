#pragma once
// Cycle accounting of pipeline elements (`swemu --bench`, `show runtime`'s per-stage lines), in
// the manner of VPP's `show runtime`: an element's counter adds the cycles of each timed call and
// the packets it covered. A counter is reached through a pointer that is null while nobody
// measures, so an element's fast path pays one never-taken branch then (CycleScope).
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace swemu {

// The TSC (the clock DPDK's rte_rdtsc reads); nanoseconds of steady_clock elsewhere.
inline uint64_t ReadCycles() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// ReadCycles ticks per nanosecond, measured against steady_clock over about 20 ms once per
// process (the first call waits that long).
double CyclesPerNs();

struct CycleCounter {
  uint64_t cycles = 0;
  uint64_t calls = 0;    // timed calls
  uint64_t packets = 0;  // packets those calls covered (a batched lookup covers its burst)

  void Add(uint64_t c, uint64_t pkts) noexcept {
    cycles += c;
    ++calls;
    packets += pkts;
  }
  void Add(const CycleCounter& other) noexcept {
    cycles += other.cycles;
    calls += other.calls;
    packets += other.packets;
  }
};

// Times its own lifetime into `counter`; does nothing (no clock read) when counter is null.
class CycleScope {
 public:
  CycleScope(CycleCounter* counter, uint32_t packets) noexcept : counter_(counter) {
    if (counter_ != nullptr) [[unlikely]] {
      packets_ = packets;
      start_ = ReadCycles();
    }
  }
  ~CycleScope() {
    if (counter_ != nullptr) [[unlikely]]
      counter_->Add(ReadCycles() - start_, packets_);
  }
  CycleScope(const CycleScope&) = delete;
  CycleScope& operator=(const CycleScope&) = delete;

 private:
  CycleCounter* counter_;
  uint32_t packets_ = 0;
  uint64_t start_ = 0;
};

// What a timed call costs beyond the work it times, in cycles: `inside` is what an empty scope
// measures of itself (part of reading the clock twice), `whole` what it adds to an enclosing
// scope. Both are subtracted per call from the figures, as the minimum over several trials.
struct ScopeOverhead {
  double inside = 0;
  double whole = 0;
};
ScopeOverhead MeasureScopeOverhead();

}  // namespace swemu
