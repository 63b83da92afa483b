// The digest channel: learn filter, rate limit, queue bound, latency, counters.
#include "pipeline/program/digest.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

DigestRecord Rec(TimeNs t, uint64_t a, uint64_t b = 0) { return {t, {a, b}}; }

TEST(DigestChannel, TheLearnFilterDeduplicatesUntilTheControlPlaneDrains) {
  DigestChannel ch(DigestConfig{});
  ch.Emit(Rec(0, 1));
  ch.Emit(Rec(1, 1));  // same words, later: a duplicate
  ch.Emit(Rec(2, 2));
  EXPECT_EQ(ch.counters().emitted, 2u);
  EXPECT_EQ(ch.counters().deduplicated, 1u);
  std::vector<DigestRecord> got = ch.DrainAll();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Rec(0, 1));
  EXPECT_EQ(got[1], Rec(2, 2));
  ch.Emit(Rec(3, 1));  // the drain acknowledged the batch: the filter is empty again
  EXPECT_EQ(ch.counters().emitted, 3u);
  EXPECT_EQ(ch.counters().delivered, 2u);
}

TEST(DigestChannel, RecordsAreDueAFixedLatencyAfterTheirPacket) {
  DigestConfig config;
  config.latency_ns = 1000;
  DigestChannel ch(config);
  EXPECT_EQ(ch.NextDue(), kNever);
  ch.Emit(Rec(100, 1));
  ch.Emit(Rec(500, 2));
  EXPECT_EQ(ch.NextDue(), 1100u);
  EXPECT_TRUE(ch.Drain(1099).empty());
  ASSERT_EQ(ch.Drain(1100).size(), 1u);
  EXPECT_EQ(ch.NextDue(), 1500u);
  ASSERT_EQ(ch.Drain(2000).size(), 1u);
  EXPECT_EQ(ch.pending(), 0u);
}

TEST(DigestChannel, TheRateLimitPassesABurstThenTheRate) {
  DigestConfig config;
  config.max_per_second = 1000;  // one per millisecond
  config.burst = 4;
  DigestChannel ch(config);
  for (uint64_t i = 0; i < 10; ++i) ch.Emit(Rec(0, i));
  EXPECT_EQ(ch.counters().emitted, 4u);
  EXPECT_EQ(ch.counters().dropped_by_limit, 6u);
  ch.Emit(Rec(500'000, 100));  // half a token later: still refused
  EXPECT_EQ(ch.counters().emitted, 4u);
  ch.Emit(Rec(1'000'000, 101));  // one token after the start
  EXPECT_EQ(ch.counters().emitted, 5u);
  ch.Emit(Rec(1'000'001, 102));
  EXPECT_EQ(ch.counters().dropped_by_limit, 8u);
}

TEST(DigestChannel, AFullQueueOrFilterDropsAndCounts) {
  DigestConfig config;
  config.max_per_second = 0;
  config.queue = 3;
  config.filter_slots = 64;
  DigestChannel ch(config);
  for (uint64_t i = 0; i < 5; ++i) ch.Emit(Rec(i, i));
  EXPECT_EQ(ch.counters().emitted, 3u);
  EXPECT_EQ(ch.counters().dropped_by_limit, 2u);
  ch.DrainAll();
  config.queue = 1000;
  DigestChannel small(config);
  for (uint64_t i = 0; i < 64; ++i) small.Emit(Rec(i, i));
  EXPECT_EQ(small.counters().emitted, 32u);  // the filter stays at most half full
  EXPECT_EQ(small.counters().dropped_by_limit, 32u);
  EXPECT_EQ(small.Summary(), "digests: emitted 32, deduplicated 0, dropped by limit 32, delivered 0");
}

}  // namespace
}  // namespace swemu
