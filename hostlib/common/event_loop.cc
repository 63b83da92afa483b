#include "hostlib/common/event_loop.h"

#include <time.h>

#include <algorithm>

namespace swemu {
namespace {

inline void CpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

TimeNs MonotonicClock::NowNs() const noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000ull + static_cast<TimeNs>(ts.tv_nsec);
}

void EventLoop::Add(FrameSource* source, Endpoint* endpoint) {
  entries_.push_back({source, endpoint});
  endpoint->Pump(Now());
}

bool EventLoop::Round() {
  bool busy = false;
  for (const Entry& e : entries_) {
    bool drained = true;
    if (e.source != nullptr) {
      Endpoint* endpoint = e.endpoint;
      const TimeNs now = Now();
      auto deliver = [endpoint, now](std::span<const uint8_t> frame) {
        endpoint->OnFrame(now, frame);
      };
      const uint32_t n = e.source->Poll(deliver, options_.burst);
      counters_.frames += n;
      busy |= n > 0;
      drained = n < options_.burst;
    }
    const TimeNs now = Now();
    // A timer fires only once the source is drained: a frame still waiting may be the answer
    // it would give up on (HostRunner does the same).
    if (e.endpoint->NextTimer() <= now) {
      if (drained) {
        e.endpoint->OnTimer(now);
        ++counters_.timers;
      } else {
        ++counters_.timers_held;
      }
      busy = true;
    }
    e.endpoint->Pump(now);
  }
  ++counters_.rounds;
  return busy;
}

void EventLoop::Idle(TimeNs now, uint32_t* idle_rounds) {
  ++*idle_rounds;
  if (options_.busy_poll || *idle_rounds <= options_.idle_spins) {
    CpuPause();
    return;
  }
  // Sleep longer the longer we are idle, but never past the next timer.
  const uint32_t doublings = std::min<uint32_t>(*idle_rounds - options_.idle_spins - 1, 16);
  TimeNs sleep = std::min(options_.max_sleep_ns, options_.min_sleep_ns << doublings);
  for (const Entry& e : entries_) {
    const TimeNs next = e.endpoint->NextTimer();
    if (next != kNever) sleep = std::min(sleep, next > now ? next - now : 0);
  }
  if (sleep == 0) return;
  const timespec ts{static_cast<time_t>(sleep / 1'000'000'000ull),
                    static_cast<long>(sleep % 1'000'000'000ull)};
  nanosleep(&ts, nullptr);
  ++counters_.sleeps;
}

bool EventLoop::RunUntil(const std::function<bool()>& done, TimeNs timeout_ns) {
  const TimeNs deadline = Now() + timeout_ns;
  uint32_t idle_rounds = 0;
  while (!done()) {
    const TimeNs now = Now();
    if (now >= deadline) return false;
    if (Round()) {
      idle_rounds = 0;
    } else {
      Idle(now, &idle_rounds);
    }
  }
  return true;
}

}  // namespace swemu
