// Strict priority and deficit round robin between the 8 queues of a port.
#include <gtest/gtest.h>

#include <array>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using SchedulerTest = TmTest;

TmConfig Weighted() {
  TmConfig config;
  config.scheduler = SchedulerKind::kWeighted;
  config.queue.depth_pkts = 4096;
  return config;
}

TEST_F(SchedulerTest, StrictPriorityServesHigherQueuesFirst) {
  Build(TmConfig());
  const uint8_t order_in[] = {0, 3, 7, 1, 3, 7, 0, 5};
  for (int i = 0; i < 8; ++i) Send(100, 1, order_in[i], 0, static_cast<uint8_t>(i));
  // Highest queue first, FIFO within a queue (the tag is the arrival index).
  const std::array<std::pair<int, int>, 8> expected = {
      {{7, 2}, {7, 5}, {5, 7}, {3, 1}, {3, 4}, {1, 3}, {0, 0}, {0, 6}}};
  for (auto [queue, tag] : expected) {
    Packet* pkt = tm_->Dequeue(1, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->meta.queue_id, queue);
    EXPECT_EQ(pkt->data[0], tag);
    pool_->Free(pkt);
  }
  EXPECT_EQ(tm_->Dequeue(1, 0), nullptr);
}

TEST_F(SchedulerTest, StrictPriorityPreemptsBetweenDequeues) {
  Build(TmConfig());
  Send(100, 0, 0, 0);
  Send(100, 0, 0, 0);
  Packet* low = tm_->Dequeue(0, 0);
  ASSERT_NE(low, nullptr);
  pool_->Free(low);
  Send(100, 0, 6, 1);
  Packet* high = tm_->Dequeue(0, 1);
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->meta.queue_id, 6);
  pool_->Free(high);
}

// Keeps queues a and b backlogged and returns the bytes each got out of `rounds` dequeues.
std::array<uint64_t, 2> ServeBacklogged(TmTest& t, int a, int b, uint32_t len_a, uint32_t len_b,
                                        int rounds) {
  std::array<uint64_t, 2> bytes = {0, 0};
  for (int i = 0; i < 64; ++i) {
    t.Send(len_a, 0, static_cast<uint8_t>(a), 0);
    t.Send(len_b, 0, static_cast<uint8_t>(b), 0);
  }
  for (int i = 0; i < rounds; ++i) {
    Packet* pkt = t.tm_->Dequeue(0, 0);
    EXPECT_NE(pkt, nullptr);
    if (pkt == nullptr) break;
    int queue = pkt->meta.queue_id;
    bytes[queue == a ? 0 : 1] += pkt->len;
    t.pool_->Free(pkt);
    t.Send(queue == a ? len_a : len_b, 0, static_cast<uint8_t>(queue), 0);  // stay backlogged
  }
  return bytes;
}

TEST_F(SchedulerTest, WeightedSharesBytesByWeight) {
  Build(Weighted());
  ASSERT_TRUE(tm_->SetQueueWeight(0, 2, 1).ok());
  ASSERT_TRUE(tm_->SetQueueWeight(0, 6, 3).ok());
  EXPECT_EQ(tm_->QueueWeight(0, 6), 3u);
  auto bytes = ServeBacklogged(*this, 2, 6, 1000, 1000, 4000);
  double share = static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]);
  EXPECT_NEAR(share, 3.0, 0.09);
}

TEST_F(SchedulerTest, WeightedSharesBytesNotPackets) {
  Build(Weighted());
  // Equal weights, 200 B against 1400 B packets: bytes stay equal, packet counts do not.
  auto bytes = ServeBacklogged(*this, 1, 4, 200, 1400, 8000);
  double share = static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]);
  EXPECT_NEAR(share, 1.0, 0.03);
}

TEST_F(SchedulerTest, WeightedHandlesFramesLargerThanManyQuanta) {
  TmConfig config = Weighted();
  config.quantum_bytes = 64;
  Build(config);
  auto bytes = ServeBacklogged(*this, 0, 1, 9000, 3000, 2000);
  double share = static_cast<double>(bytes[1]) / static_cast<double>(bytes[0]);
  EXPECT_NEAR(share, 1.0, 0.03);
}

TEST_F(SchedulerTest, WeightedIgnoresIdleQueues) {
  Build(Weighted());
  ASSERT_TRUE(tm_->SetQueueWeight(0, 0, 1).ok());
  ASSERT_TRUE(tm_->SetQueueWeight(0, 7, 100).ok());
  for (int i = 0; i < 5; ++i) Send(1000, 0, 0, 0);
  for (int i = 0; i < 5; ++i) {
    Packet* pkt = tm_->Dequeue(0, 0);
    ASSERT_NE(pkt, nullptr) << i;
    pool_->Free(pkt);
  }
}

TEST_F(SchedulerTest, SchedulerIsPerPort) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetScheduler(3, SchedulerKind::kWeighted).ok());
  EXPECT_EQ(tm_->Scheduler(3), SchedulerKind::kWeighted);
  EXPECT_EQ(tm_->Scheduler(2), SchedulerKind::kStrict);
  // Port 3 round-robins from queue 0; port 2 serves queue 7 first.
  for (PortId port : {PortId{2}, PortId{3}}) {
    Send(100, port, 0, 0);
    Send(100, port, 7, 0);
  }
  Packet* strict = tm_->Dequeue(2, 0);
  Packet* weighted = tm_->Dequeue(3, 0);
  ASSERT_NE(strict, nullptr);
  ASSERT_NE(weighted, nullptr);
  EXPECT_EQ(strict->meta.queue_id, 7);
  EXPECT_EQ(weighted->meta.queue_id, 0);
  pool_->Free(strict);
  pool_->Free(weighted);
  EXPECT_FALSE(tm_->SetScheduler(4, SchedulerKind::kStrict).ok());
  EXPECT_FALSE(tm_->SetQueueWeight(0, 0, 0).ok());
}

}  // namespace
}  // namespace swemu::tm_test
