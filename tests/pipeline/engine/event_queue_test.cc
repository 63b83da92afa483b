#include "pipeline/engine/event_queue.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "pipeline/engine/rng.h"

namespace swemu {
namespace {

Event At(TimeNs time, uint64_t cookie) {
  Event event;
  event.time = time;
  event.cookie = cookie;
  return event;
}

TEST(EventQueueTest, PopsByTimeThenInsertionOrder) {
  EventQueue queue;
  queue.Push(At(30, 1));
  queue.Push(At(10, 2));
  queue.Push(At(20, 3));
  queue.Push(At(10, 4));
  queue.Push(At(30, 5));
  queue.Push(At(10, 6));
  std::vector<uint64_t> order;
  while (!queue.empty()) order.push_back(queue.Pop().cookie);
  EXPECT_EQ(order, (std::vector<uint64_t>{2, 4, 6, 3, 1, 5}));
}

// The engine prefetches for after_top(): when no event is pushed between two pops, the second
// one popped is among them.
TEST(EventQueueTest, AfterTopHoldsTheEventDueAfterTheTop) {
  EventQueue queue;
  EXPECT_TRUE(queue.after_top().empty());
  SplitMix64 rng(7);
  for (uint64_t i = 0; i < 500; ++i) queue.Push(At(rng.Next() % 100, i));
  while (queue.size() > 1) {
    std::set<uint64_t> candidates;
    for (const Event& event : queue.after_top()) candidates.insert(event.cookie);
    EXPECT_LE(candidates.size(), 4u);
    queue.Pop();
    EXPECT_EQ(candidates.count(queue.top().cookie), 1u) << "at size " << queue.size();
  }
  EXPECT_TRUE(queue.after_top().empty());
}

TEST(EventQueueTest, SameTimeEventsKeepOrderAcrossManyPushes) {
  EventQueue queue;
  for (uint64_t i = 0; i < 1000; ++i) queue.Push(At(i % 3 == 0 ? 5 : 7, i));
  uint64_t last_cookie = 0;
  TimeNs last_time = 0;
  bool first = true;
  while (!queue.empty()) {
    Event event = queue.Pop();
    if (!first && event.time == last_time) {
      EXPECT_GT(event.cookie, last_cookie);
    }
    EXPECT_GE(event.time, last_time);
    last_time = event.time;
    last_cookie = event.cookie;
    first = false;
  }
}

// Pushes and pops interleaved as a run does them, times drawn from a small range so that many
// tie: every pop is the earliest (time, push order) of what is queued, as an ordered set says.
TEST(EventQueueTest, InterleavedPushesAndPopsComeOutInTimeThenPushOrder) {
  EventQueue queue;
  std::set<std::pair<TimeNs, uint64_t>> expected;  // (time, push number)
  SplitMix64 rng(5);
  uint64_t pushed = 0;
  TimeNs now = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (expected.empty() || rng.Next() % 8 < 5) {
      const TimeNs at = now + static_cast<TimeNs>(rng.Next() % 64);
      queue.Push(At(at, pushed));
      expected.insert({at, pushed++});
    } else {
      ASSERT_EQ(queue.size(), expected.size());
      Event event = queue.Pop();
      ASSERT_EQ(std::make_pair(event.time, event.cookie), *expected.begin()) << "step " << step;
      expected.erase(expected.begin());
      now = event.time;
    }
  }
  EXPECT_GT(expected.size(), 1000u);  // the heap grew deep, not just a few levels
  EXPECT_EQ(sizeof(Event), 32u);
}

TEST(SplitMix64Test, SameSeedSameStreamDifferentSeedDifferentStream) {
  SplitMix64 a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(SplitMix64Test, BernoulliMatchesItsProbabilityAndZeroDrawsNothing) {
  SplitMix64 rng(1), untouched(1);
  int hits = 0;
  for (int i = 0; i < 100000; ++i) hits += rng.Bernoulli(0.25) ? 1 : 0;
  EXPECT_NEAR(hits / 100000.0, 0.25, 0.01);
  SplitMix64 zero(1);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(zero.Bernoulli(0));
  EXPECT_EQ(zero.Next(), untouched.Next());
  SplitMix64 one(3);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(one.Bernoulli(1.0));
}

}  // namespace
}  // namespace swemu
