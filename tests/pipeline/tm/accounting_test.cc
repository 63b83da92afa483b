// Queue metadata for the egress pipeline, counters, and packet conservation.
#include <gtest/gtest.h>

#include <random>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using AccountingTest = TmTest;

TEST_F(AccountingTest, EnqueueAndDequeueMetadata) {
  Build(TmConfig());
  Send(100, 2, 4, 1000);
  Send(300, 2, 4, 1500);
  Send(500, 2, 4, 1700);
  const uint32_t enq_depth[] = {0, 1, 2};
  const uint32_t enq_bytes[] = {0, 100, 400};
  const uint32_t deq_depth[] = {2, 1, 0};
  const uint32_t deq_bytes[] = {800, 500, 0};
  const TimeNs enq_ts[] = {1000, 1500, 1700};
  for (int i = 0; i < 3; ++i) {
    Packet* pkt = tm_->Dequeue(2, 2000 + i);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->meta.egress_port, 2);
    EXPECT_EQ(pkt->meta.enq_ts, enq_ts[i]);
    EXPECT_EQ(pkt->meta.enq_qdepth, enq_depth[i]);
    EXPECT_EQ(pkt->meta.enq_qdepth_bytes, enq_bytes[i]);
    EXPECT_EQ(pkt->meta.deq_qdepth, deq_depth[i]);
    EXPECT_EQ(pkt->meta.deq_qdepth_bytes, deq_bytes[i]);
    EXPECT_EQ(pkt->meta.deq_timedelta, 2000 + i - enq_ts[i]);
    pool_->Free(pkt);
  }
}

TEST_F(AccountingTest, QueueCountersAndMaxDepth) {
  Build(TmConfig());
  for (int i = 0; i < 4; ++i) Send(250, 0, 6, 0);
  pool_->Free(tm_->Dequeue(0, 0));
  const QueueCounters& c = tm_->queue_counters(0, 6);
  EXPECT_EQ(c.enqueued, 4u);
  EXPECT_EQ(c.enq_bytes, 1000u);
  EXPECT_EQ(c.dequeued, 1u);
  EXPECT_EQ(c.deq_bytes, 250u);
  EXPECT_EQ(c.max_depth_pkts, 4u);
  EXPECT_EQ(c.max_depth_bytes, 1000u);
  EXPECT_EQ(tm_->DepthPkts(0, 6), 3u);
  EXPECT_EQ(tm_->DepthBytes(0, 6), 750u);
  std::string text = tm_->DescribeQueues();
  EXPECT_NE(text.find("port 0 queue 6: depth 3/1024 pkts 750 B"), std::string::npos) << text;
  EXPECT_EQ(text.find("port 1"), std::string::npos) << text;  // idle queues are left out
  tm_->ResetCounters();
  EXPECT_EQ(c.enqueued, 0u);
  EXPECT_EQ(c.max_depth_pkts, 3u);  // restarts from the current depth
  EXPECT_EQ(c.max_depth_bytes, 750u);
  EXPECT_EQ(tm_->queue_counters(9, 0).enqueued, 0u);  // out of range reads as zero
}

TEST_F(AccountingTest, ResetCountersClearsDropsAndCopies) {
  Build(TmConfig());
  Send(100, 9, 0, 0);
  EXPECT_EQ(tm_->drops(DropReason::kBadEgressPort), 1u);
  tm_->ResetCounters();
  EXPECT_EQ(tm_->drops(DropReason::kBadEgressPort), 0u);
  EXPECT_EQ(tm_->multicast_copies(), 0u);
}

// Random traffic on small limits, shaped links, paced queues and both schedulers: every packet
// that came in is queued, dequeued or dropped with exactly one reason, and the pool agrees.
TEST_F(AccountingTest, HostBytesFollowTheQueueRingsAndMulticastTables) {
  TmConfig config;
  config.num_ports = 4;
  config.queue.depth_pkts = 1000;  // rings round up to 1024 pointers
  Build(config);
  EXPECT_EQ(tm_->RingSlots(), 4u * 8 * 1024);
  const uint64_t base = tm_->HostBytes();
  EXPECT_GE(base, 4u * 8 * 1024 * sizeof(Packet*));
  // A deeper queue reallocates its ring; a shallower one keeps it.
  ASSERT_TRUE(tm_->SetQueueDepth(PortId{1}, 3, 3000).ok());
  EXPECT_EQ(tm_->RingSlots(), 4u * 8 * 1024 + 3072);
  EXPECT_EQ(tm_->HostBytes(), base + 3072 * sizeof(Packet*));
  ASSERT_TRUE(tm_->SetQueueDepth(PortId{1}, 3, 10).ok());
  EXPECT_EQ(tm_->HostBytes(), base + 3072 * sizeof(Packet*));
  const uint64_t before_mc = tm_->HostBytes();
  ASSERT_TRUE(tm_->McGroupCreate(1).ok());
  Result<uint32_t> node = tm_->McNodeCreate(0, {0, 1, 2});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(tm_->McNodeAssociate(1, *node).ok());
  EXPECT_GT(tm_->HostBytes(), before_mc);
}

TEST_F(AccountingTest, ConservationUnderRandomTraffic) {
  TmConfig config;
  config.queue.depth_pkts = 8;
  config.queue.drop_threshold_bytes = 6000;
  config.port_buffer_bytes = 12'000;
  config.shared_buffer_bytes = 30'000;
  config.port_rate_bps = 1'000'000'000;
  config.scheduler = SchedulerKind::kWeighted;
  Build(config, 1024);
  ASSERT_TRUE(tm_->SetScheduler(1, SchedulerKind::kStrict).ok());
  ASSERT_TRUE(tm_->SetQueueRate(2, 3, 200'000).ok());
  ASSERT_TRUE(tm_->McGroupCreate(1).ok());
  auto node = tm_->McNodeCreate(7, {0, 1, 3});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(tm_->McNodeAssociate(1, *node).ok());
  ASSERT_TRUE(tm_->McGroupCreate(2).ok());  // stays empty

  std::mt19937 rng(1234);
  uint64_t in = 0;
  uint64_t admitted = 0;
  uint64_t dequeued = 0;
  TimeNs now = 0;
  for (int step = 0; step < 20'000; ++step) {
    now += rng() % 2000;
    for (int n = rng() % 4; n > 0; --n) {
      Packet* pkt =
          Make(64 + rng() % 1400, static_cast<PortId>(rng() % 5), static_cast<uint8_t>(rng() % 8));
      if (rng() % 8 == 0) pkt->meta.mcast_grp = static_cast<uint16_t>(1 + rng() % 3);
      ++in;
      admitted += tm_->Enqueue(pkt, now);
    }
    for (PortId port = 0; port < 4; ++port) {
      for (;;) {  // NextDequeueTime and Dequeue agree on every port at every step
        TimeNs at = tm_->NextDequeueTime(port, now);
        Packet* pkt = tm_->Dequeue(port, now);
        ASSERT_EQ(pkt != nullptr, at <= now) << "port " << port << " now " << now;
        if (pkt == nullptr) break;
        ++dequeued;
        pool_->Free(pkt);
      }
    }
  }
  uint64_t dropped = 0;
  for (std::size_t r = 0; r < kDropReasonCount; ++r) {
    dropped += tm_->drops(static_cast<DropReason>(r));
  }
  uint64_t enqueued = 0;
  uint64_t queue_dropped = 0;
  for (PortId port = 0; port < 4; ++port) {
    for (int q = 0; q < kQueuesPerPort; ++q) {
      enqueued += tm_->queue_counters(port, q).enqueued;
      queue_dropped += tm_->queue_counters(port, q).dropped;
    }
  }
  EXPECT_GT(dropped, 0u);
  EXPECT_GT(tm_->multicast_copies(), 0u);
  EXPECT_EQ(in + tm_->multicast_copies(), admitted + dropped);
  EXPECT_EQ(enqueued, admitted);
  EXPECT_EQ(admitted, dequeued + tm_->TotalQueued());
  // Only drops with no queue to blame are missing from the per-queue counters.
  EXPECT_EQ(queue_dropped, dropped - tm_->drops(DropReason::kBadEgressPort) -
                               tm_->drops(DropReason::kMulticastEmptyGroup));
  EXPECT_EQ(pool_->InUse(), tm_->TotalQueued());
}

}  // namespace
}  // namespace swemu::tm_test
