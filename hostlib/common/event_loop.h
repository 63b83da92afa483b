#pragma once
// The real-time driver of endpoints: polls each endpoint's FrameSource, fires its timers on a
// monotonic clock, pumps it after every event, and backs off when idle (pause, then sleeps of
// 10..200 us) so that it shares a small machine with swemu and other hosts. Several endpoints
// (e.g. a worker and a PS in one process) can share one loop. A due timer fires only once its
// source is drained (a frame still waiting may be the answer it would give up on).
#include <cstdint>
#include <functional>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/frame_source.h"
#include "pipeline/core/clock.h"

namespace swemu {

struct EventLoopOptions {
  uint32_t burst = 32;           // frames per Poll
  bool busy_poll = false;        // never sleep (benchmarks)
  uint32_t idle_spins = 256;     // idle rounds with a CPU pause before the first sleep
  TimeNs min_sleep_ns = 10'000;  // first sleep; doubles while idle
  TimeNs max_sleep_ns = 200'000;
};

struct EventLoopCounters {
  uint64_t rounds = 0;
  uint64_t frames = 0;
  uint64_t timers = 0;
  uint64_t timers_held = 0;  // due while frames were still waiting in the source
  uint64_t sleeps = 0;
};

// CLOCK_MONOTONIC in ns.
class MonotonicClock final : public Clock {
 public:
  TimeNs NowNs() const noexcept override;
};

class EventLoop {
 public:
  explicit EventLoop(EventLoopOptions options = {}) : options_(options) {}

  // Both must outlive the loop. `source` may be null for an endpoint that only sends.
  void Add(FrameSource* source, Endpoint* endpoint);

  // Runs until done() is true (checked after every round) or `timeout_ns` of real time passed.
  // True when done() became true.
  bool RunUntil(const std::function<bool()>& done, TimeNs timeout_ns);

  TimeNs Now() const { return clock_.NowNs(); }
  const EventLoopCounters& counters() const { return counters_; }

 private:
  struct Entry {
    FrameSource* source;
    Endpoint* endpoint;
  };
  // One pass over every endpoint; true when anything happened.
  bool Round();
  void Idle(TimeNs now, uint32_t* idle_rounds);

  EventLoopOptions options_;
  MonotonicClock clock_;
  std::vector<Entry> entries_;
  EventLoopCounters counters_;
};

}  // namespace swemu
