// Port link-rate shaping and per-queue packet-rate shaping, on virtual time.
#include <gtest/gtest.h>

#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using ShapingTest = TmTest;

TmConfig Shaped(uint64_t bps) {
  TmConfig config;
  config.port_rate_bps = bps;
  config.queue.depth_pkts = 4096;
  return config;
}

// Dequeues port 0 whenever NextDequeueTime says so, checking that nothing comes out a
// nanosecond earlier; returns the dequeue times.
std::vector<TimeNs> DrainOnSchedule(TrafficManager& tm, PacketPool& pool, TimeNs now) {
  std::vector<TimeNs> times;
  for (TimeNs at = tm.NextDequeueTime(0, now); at != kNever; at = tm.NextDequeueTime(0, at)) {
    if (at > now) {
      EXPECT_EQ(tm.Dequeue(0, at - 1), nullptr) << "early at " << at - 1;
    }
    Packet* pkt = tm.Dequeue(0, at);
    EXPECT_NE(pkt, nullptr) << "NextDequeueTime said " << at;
    if (pkt == nullptr) break;
    times.push_back(at);
    pool.Free(pkt);
    now = at;
  }
  return times;
}

TEST_F(ShapingTest, BurstDrainsInExactlyTheTimeItsRateImplies) {
  Build(Shaped(10'000'000'000));  // 10 Gb/s, 1000 B + 24 B overhead = 819.2 ns per frame
  const TimeNs t0 = 5000;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Send(1000, 0, 0, t0), 1u);
  std::vector<TimeNs> times = DrainOnSchedule(*tm_, *pool_, t0);
  ASSERT_EQ(times.size(), 100u);
  EXPECT_EQ(times.front(), t0);
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_EQ(times[k], t0 + (k * 8192 + 9) / 10) << k;  // ceil(k * 819.2)
  }
  // The link is busy until the whole burst is serialised: 100 * 1024 * 8 / 10 = 81920 ns.
  Send(1000, 0, 0, t0);
  EXPECT_EQ(tm_->NextDequeueTime(0, t0), t0 + 81920);
}

TEST_F(ShapingTest, LongRunKeepsTheExactRate) {
  Build(Shaped(3'000'000'000), 4096);  // 1000 B frames: 8192 / 3 ns each, never a whole number
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(Send(1000, 0, 0, 0), 1u);
  std::vector<TimeNs> times = DrainOnSchedule(*tm_, *pool_, 0);
  ASSERT_EQ(times.size(), 3000u);
  EXPECT_EQ(times.back(), (2999 * 8192 + 2) / 3);
  Send(1000, 0, 0, 0);
  EXPECT_EQ(tm_->NextDequeueTime(0, 0), 3000u * 8192 / 3);
}

TEST_F(ShapingTest, LateCallerKeepsThePaceOfABackloggedPort) {
  Build(Shaped(10'000'000'000));
  for (int i = 0; i < 10; ++i) Send(1000, 0, 0, 0);
  // Polling every 1000 ns (slower than 819.2 ns per frame) lets frames out back to back until
  // the link schedule catches up, so 10 frames still leave by ceil(9 * 819.2).
  int got = 0;
  TimeNs now = 0;
  for (; got < 10; now += 1000) {
    while (Packet* pkt = tm_->Dequeue(0, now)) {
      pool_->Free(pkt);
      ++got;
    }
  }
  EXPECT_EQ(got, 10);
  EXPECT_EQ(now - 1000, 8000u);  // the last came out at the first poll after 7373 ns
  Send(1000, 0, 0, 9000);
  EXPECT_EQ(tm_->NextDequeueTime(0, 9000), 9000u);  // link idle since 8192 ns
}

TEST_F(ShapingTest, IdleLinkStartsAtTheArrival) {
  Build(Shaped(1'000'000'000));  // 1000 B -> 8192 ns
  Send(1000, 0, 0, 100);
  EXPECT_EQ(tm_->NextDequeueTime(0, 100), 100u);
  pool_->Free(tm_->Dequeue(0, 100));
  Send(1000, 0, 0, 50'000);
  EXPECT_EQ(tm_->NextDequeueTime(0, 50'000), 50'000u);
  pool_->Free(tm_->Dequeue(0, 50'000));
  Send(1000, 0, 0, 50'001);
  EXPECT_EQ(tm_->NextDequeueTime(0, 50'001), 58'192u);
}

TEST_F(ShapingTest, RateChangeAppliesToTheNextFrame) {
  Build(Shaped(10'000'000'000));
  for (int i = 0; i < 3; ++i) Send(1000, 0, 0, 0);
  pool_->Free(tm_->Dequeue(0, 0));  // busy until 819.2
  ASSERT_TRUE(tm_->SetPortRate(0, 1'000'000'000).ok());
  EXPECT_EQ(tm_->PortRate(0), 1'000'000'000u);
  EXPECT_EQ(tm_->NextDequeueTime(0, 0), 820u);
  pool_->Free(tm_->Dequeue(0, 820));
  EXPECT_EQ(tm_->NextDequeueTime(0, 820), 820u + 8192);
  ASSERT_TRUE(tm_->SetPortRate(0, 0).ok());  // unshaped: everything goes now
  EXPECT_EQ(tm_->NextDequeueTime(0, 820), 820u);
  EXPECT_FALSE(tm_->SetPortRate(9, 1).ok());
  EXPECT_FALSE(tm_->SetPortRate(0, kTmMaxPortRateBps + 1).ok());
}

// A frame sent at 1 bit/s would hold the link for 8192 s; sped up to 10G, the port sends the
// next frame when the first would have ended at the new rate (issue: 133 M frames dropped).
TEST_F(ShapingTest, SpeedingUpEndsTheFrameUnderWayAtTheNewRate) {
  Build(Shaped(1));
  for (int i = 0; i < 2; ++i) Send(1000, 0, 0, 0);
  pool_->Free(tm_->Dequeue(0, 0));
  EXPECT_EQ(tm_->NextDequeueTime(0, 0), 8192ull * 1'000'000'000);
  ASSERT_TRUE(tm_->SetPortRate(0, 10'000'000'000).ok());
  EXPECT_EQ(tm_->NextDequeueTime(0, 0), 820u);  // ceil(819.2)
  Packet* next = tm_->Dequeue(0, 820);
  ASSERT_NE(next, nullptr);
  pool_->Free(next);
}

TEST_F(ShapingTest, UnshapedPortDrainsAtOnce) {
  Build(TmConfig());
  for (int i = 0; i < 50; ++i) Send(1500, 2, 0, 0);
  EXPECT_EQ(tm_->NextDequeueTime(2, 7), 7u);
  for (int i = 0; i < 50; ++i) {
    Packet* pkt = tm_->Dequeue(2, 7);
    ASSERT_NE(pkt, nullptr);
    pool_->Free(pkt);
  }
  EXPECT_EQ(tm_->Dequeue(2, 7), nullptr);
  EXPECT_EQ(tm_->NextDequeueTime(2, 7), kNever);
}

TEST_F(ShapingTest, QueuePacketRateHolds) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueRate(0, 3, 3000).ok());  // 333333.3 ns apart
  EXPECT_EQ(tm_->QueueRate(0, 3), 3000u);
  for (int i = 0; i < 30; ++i) Send(100, 0, 3, 0);
  std::vector<TimeNs> times = DrainOnSchedule(*tm_, *pool_, 0);
  ASSERT_EQ(times.size(), 30u);
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_EQ(times[k], (k * 1'000'000'000 + 2999) / 3000) << k;
  }
}

TEST_F(ShapingTest, PacedQueueDoesNotBlockOtherQueues) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueRate(0, 7, 1000).ok());  // 1 ms apart
  Send(100, 0, 7, 0);
  Send(100, 0, 7, 0);
  Send(100, 0, 1, 0);
  Packet* first = tm_->Dequeue(0, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->meta.queue_id, 7);
  pool_->Free(first);
  // Queue 7 must wait 1 ms; the lower-priority queue 1 goes meanwhile.
  Packet* second = tm_->Dequeue(0, 10);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->meta.queue_id, 1);
  pool_->Free(second);
  EXPECT_EQ(tm_->Dequeue(0, 999'999), nullptr);
  EXPECT_EQ(tm_->NextDequeueTime(0, 10), 1'000'000u);
  Packet* third = tm_->Dequeue(0, 1'000'000);
  ASSERT_NE(third, nullptr);
  pool_->Free(third);
}

TEST_F(ShapingTest, SetQueueRateForAllPortsAndQueues) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueRate(std::nullopt, std::nullopt, 500).ok());
  for (PortId p = 0; p < tm_->num_ports(); ++p) {
    for (int q = 0; q < kQueuesPerPort; ++q) EXPECT_EQ(tm_->QueueRate(p, q), 500u);
  }
  ASSERT_TRUE(tm_->SetQueueRate(1, std::nullopt, 0).ok());
  EXPECT_EQ(tm_->QueueRate(1, 5), 0u);
  EXPECT_EQ(tm_->QueueRate(2, 5), 500u);
  Status bad = tm_->SetQueueRate(0, 8, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("queue 8"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace swemu::tm_test
