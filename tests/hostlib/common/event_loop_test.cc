// The real-time loop: timers on the monotonic clock, frames from a source, the stop conditions.
// Wall-clock speed is not asserted, only order and outcome.
#include "hostlib/common/event_loop.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace swemu {
namespace {

class FakeSource final : public FrameSource {
 public:
  uint32_t Poll(FrameHandler handler, uint32_t max) noexcept override {
    uint32_t n = 0;
    for (; n < max && !frames.empty(); ++n) {
      handler(frames.front());
      frames.pop_front();
    }
    return n;
  }
  std::deque<std::vector<uint8_t>> frames;
};

class CountingEndpoint final : public Endpoint {
 public:
  void OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept override {
    sizes.push_back(frame.size());
  }
  void OnTimer(TimeNs now) noexcept override {
    fired_at.push_back(now);
    next = fired_at.size() < 3 ? now + 200'000 : kNever;
  }
  TimeNs NextTimer() const noexcept override { return next; }
  void Pump(TimeNs) noexcept override { ++pumps; }
  TimeNs next = kNever;
  std::vector<std::size_t> sizes;
  std::vector<TimeNs> fired_at;
  int pumps = 0;
};

TEST(EventLoopTest, DeliversFramesInBurstsAndFiresTimersInOrder) {
  FakeSource source;
  for (std::size_t i = 0; i < 40; ++i) source.frames.emplace_back(i + 1, 0);
  CountingEndpoint e;
  EventLoopOptions options;
  options.burst = 16;
  EventLoop loop(options);
  loop.Add(&source, &e);
  e.next = loop.Now() + 100'000;
  ASSERT_TRUE(loop.RunUntil([&] { return e.fired_at.size() == 3; }, 10'000'000'000ull));
  ASSERT_EQ(e.sizes.size(), 40u);
  for (std::size_t i = 0; i < 40; ++i) EXPECT_EQ(e.sizes[i], i + 1);
  EXPECT_GE(e.fired_at[1], e.fired_at[0] + 200'000);
  EXPECT_GE(e.fired_at[2], e.fired_at[1] + 200'000);
  EXPECT_EQ(loop.counters().frames, 40u);
  EXPECT_EQ(loop.counters().timers, 3u);
  EXPECT_GT(e.pumps, 3);
}

// A due timer waits until the source is drained: 40 frames at 16 per poll arrive before the
// timer that was already due fires.
TEST(EventLoopTest, ADueTimerWaitsForTheFramesAlreadyWaiting) {
  FakeSource source;
  for (std::size_t i = 0; i < 40; ++i) source.frames.emplace_back(i + 1, 0);
  CountingEndpoint e;
  EventLoopOptions options;
  options.burst = 16;
  EventLoop loop(options);
  loop.Add(&source, &e);
  e.next = 0;  // due at once
  std::size_t seen_at_first_timer = 0;
  ASSERT_TRUE(loop.RunUntil(
      [&] {
        if (e.fired_at.size() == 1 && seen_at_first_timer == 0)
          seen_at_first_timer = e.sizes.size();
        return !e.fired_at.empty();
      },
      10'000'000'000ull));
  EXPECT_EQ(seen_at_first_timer, 40u);
  EXPECT_GE(loop.counters().timers_held, 2u);
}

TEST(EventLoopTest, StopsAtTheDeadlineWhenThePredicateNeverHoldsAndSleepsWhenIdle) {
  CountingEndpoint e;
  EventLoop loop;
  loop.Add(nullptr, &e);
  MonotonicClock clock;
  const TimeNs start = clock.NowNs();
  EXPECT_FALSE(loop.RunUntil([] { return false; }, 20'000'000));
  EXPECT_GE(clock.NowNs() - start, 20'000'000u);
  EXPECT_GT(loop.counters().sleeps, 0u);  // idle: it backed off instead of spinning
}

}  // namespace
}  // namespace swemu
