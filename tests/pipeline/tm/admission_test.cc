// Admission: ECN marking, drop threshold, queue depth, port and shared buffer limits.
#include <gtest/gtest.h>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using AdmissionTest = TmTest;

TEST_F(AdmissionTest, CongestedExactlyWhenDepthBeforeReachesEcnThreshold) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetEcnThresholdChecked(0, 2, 3000).ok());
  EXPECT_EQ(tm_->EcnThreshold(0, 2), 3000u);
  // Depth before each packet: 0, 1000, 2000, 3000, 4000 bytes.
  const bool expected[] = {false, false, false, true, true};
  for (int i = 0; i < 5; ++i) Send(1000, 0, 2, 0);
  for (bool congested : expected) {
    Packet* pkt = tm_->Dequeue(0, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->meta.congested, congested) << pkt->meta.enq_qdepth_bytes;
    pool_->Free(pkt);
  }
}

TEST_F(AdmissionTest, EcnOffNeverMarks) {
  Build(TmConfig());
  for (int i = 0; i < 100; ++i) Send(1500, 1, 0, 0);
  for (int i = 0; i < 100; ++i) {
    Packet* pkt = tm_->Dequeue(1, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_FALSE(pkt->meta.congested);
    pool_->Free(pkt);
  }
}

TEST_F(AdmissionTest, EcnThresholdChangeAppliesToTheNextPacket) {
  Build(TmConfig());
  tm_->SetEcnThreshold(0, 0, 10'000);
  Send(1000, 0, 0, 0);
  Send(1000, 0, 0, 0);               // depth 1000 < 10000
  tm_->SetEcnThreshold(0, 0, 2000);  // as PCN does from the dataplane
  Send(1000, 0, 0, 0);               // depth 2000 >= 2000
  tm_->SetEcnThreshold(0, 0, 0);
  Send(1000, 0, 0, 0);  // off
  const bool expected[] = {false, false, true, false};
  for (bool congested : expected) {
    Packet* pkt = tm_->Dequeue(0, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->meta.congested, congested);
    pool_->Free(pkt);
  }
  tm_->SetEcnThreshold(99, 0, 5);  // ignored, no crash
  tm_->SetEcnThreshold(0, 8, 5);
  EXPECT_EQ(tm_->EcnThreshold(0, 8), 0u);
  EXPECT_FALSE(tm_->SetEcnThresholdChecked(0, -1, 5).ok());
}

TEST_F(AdmissionTest, CountMarkedCountsOnlyRealMarks) {
  Build(TmConfig());
  tm_->CountMarked(1, 4);
  tm_->CountMarked(1, 4);
  tm_->CountMarked(7, 4);  // out of range: ignored
  EXPECT_EQ(tm_->queue_counters(1, 4).marked, 2u);
  EXPECT_EQ(tm_->queue_counters(1, 3).marked, 0u);
}

TEST_F(AdmissionTest, DropThresholdDropsWhenDepthPlusPacketExceedsIt) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetDropThresholdChecked(0, 1, 2500).ok());
  EXPECT_EQ(Send(1000, 0, 1, 0), 1u);
  EXPECT_EQ(Send(1000, 0, 1, 0), 1u);
  EXPECT_EQ(Send(1000, 0, 1, 0), 0u);  // 3000 > 2500
  EXPECT_EQ(Send(500, 0, 1, 0), 1u);   // 2500 is not > 2500
  EXPECT_EQ(Send(1, 0, 1, 0), 0u);
  EXPECT_EQ(Send(1000, 0, 2, 0), 1u);  // other queues unaffected
  EXPECT_EQ(tm_->drops(DropReason::kTmDropThreshold), 2u);
  EXPECT_EQ(tm_->queue_counters(0, 1).dropped, 2u);
  EXPECT_EQ(tm_->queue_counters(0, 1).enqueued, 3u);
  EXPECT_EQ(tm_->DepthBytes(0, 1), 2500u);
  EXPECT_EQ(pool_->InUse(), 4u);  // dropped packets went back to the pool
}

TEST_F(AdmissionTest, QueueDepthLimitInPackets) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueDepth(2, 5, 3).ok());
  EXPECT_EQ(tm_->QueueDepthLimit(2, 5), 3u);
  EXPECT_EQ(tm_->QueueDepthLimit(2, 4), 1024u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Send(64, 2, 5, 0), 1u);
  EXPECT_EQ(Send(64, 2, 5, 0), 0u);
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 1u);
  EXPECT_EQ(tm_->queue_counters(2, 5).dropped, 1u);
  pool_->Free(tm_->Dequeue(2, 0));
  EXPECT_EQ(Send(64, 2, 5, 0), 1u);
  // Lowering below the occupancy refuses new packets; queued ones stay.
  ASSERT_TRUE(tm_->SetQueueDepth(2, 5, 1).ok());
  EXPECT_EQ(Send(64, 2, 5, 0), 0u);
  EXPECT_EQ(tm_->DepthPkts(2, 5), 3u);
}

TEST_F(AdmissionTest, RaisingDepthBeyondRingCapacityKeepsOrder) {
  TmConfig config;
  config.queue.depth_pkts = 4;
  Build(config, 2048);
  for (int i = 0; i < 3; ++i) Send(64, 0, 0, 0, static_cast<uint8_t>(i));
  pool_->Free(tm_->Dequeue(0, 0));  // the ring's head is now mid-buffer
  for (int i = 3; i < 5; ++i) Send(64, 0, 0, 0, static_cast<uint8_t>(i));
  ASSERT_TRUE(tm_->SetQueueDepth(0, 0, 1000).ok());
  for (int i = 5; i < 1001; ++i) ASSERT_EQ(Send(64, 0, 0, 0, static_cast<uint8_t>(i)), 1u);
  EXPECT_EQ(Send(64, 0, 0, 0), 0u);
  for (int i = 1; i < 1001; ++i) {
    Packet* pkt = tm_->Dequeue(0, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->data[0], static_cast<uint8_t>(i));
    pool_->Free(pkt);
  }
}

TEST_F(AdmissionTest, SetQueueDepthForPortOrAllPortsAndErrors) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueDepth(std::nullopt, std::nullopt, 64).ok());
  EXPECT_EQ(tm_->QueueDepthLimit(3, 7), 64u);
  ASSERT_TRUE(tm_->SetQueueDepth(1, std::nullopt, 16).ok());
  EXPECT_EQ(tm_->QueueDepthLimit(1, 0), 16u);
  EXPECT_EQ(tm_->QueueDepthLimit(1, 7), 16u);
  EXPECT_EQ(tm_->QueueDepthLimit(2, 7), 64u);
  Status bad_port = tm_->SetQueueDepth(4, 0, 10);
  ASSERT_FALSE(bad_port.ok());
  EXPECT_NE(bad_port.message().find("port 4"), std::string::npos) << bad_port.message();
  Status bad_depth = tm_->SetQueueDepth(0, 0, 0);
  ASSERT_FALSE(bad_depth.ok());
  EXPECT_NE(bad_depth.message().find("depth"), std::string::npos) << bad_depth.message();
  EXPECT_FALSE(tm_->SetQueueDepth(0, 0, kTmMaxQueueDepthPkts + 1).ok());
  EXPECT_EQ(tm_->QueueDepthLimit(0, 0), 64u);  // unchanged by the failures
}

TEST_F(AdmissionTest, PortBufferLimitsAllQueuesOfAPort) {
  TmConfig config;
  config.port_buffer_bytes = 3000;
  Build(config);
  EXPECT_EQ(Send(1000, 1, 0, 0), 1u);
  EXPECT_EQ(Send(1000, 1, 4, 0), 1u);
  EXPECT_EQ(Send(1000, 1, 7, 0), 1u);
  EXPECT_EQ(Send(1000, 1, 2, 0), 0u);
  EXPECT_EQ(Send(1000, 2, 2, 0), 1u);  // another port has its own budget
  EXPECT_EQ(tm_->PortDepthBytes(1), 3000u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 1u);
  EXPECT_EQ(tm_->queue_counters(1, 2).dropped, 1u);
  ASSERT_TRUE(tm_->SetPortBuffer(0).ok());  // no limit
  EXPECT_EQ(Send(1000, 1, 2, 0), 1u);
}

TEST_F(AdmissionTest, SharedBufferLimitsTheWholeSwitch) {
  TmConfig config;
  config.shared_buffer_bytes = 4000;
  Build(config);
  for (PortId p = 0; p < 4; ++p) EXPECT_EQ(Send(1000, p, 0, 0), 1u);
  EXPECT_EQ(Send(1, 3, 3, 0), 0u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 4000u);
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 1u);
  EXPECT_EQ(tm_->queue_counters(3, 3).dropped, 1u);
  pool_->Free(tm_->Dequeue(0, 0));
  EXPECT_EQ(tm_->SharedUsedBytes(), 3000u);
  EXPECT_EQ(Send(1000, 3, 3, 0), 1u);
  EXPECT_FALSE(tm_->SetSharedBuffer(0).ok());
  ASSERT_TRUE(tm_->SetSharedBuffer(10'000).ok());
  EXPECT_EQ(Send(1000, 3, 3, 0), 1u);
}

TEST_F(AdmissionTest, ChecksRunInTheDocumentedOrder) {
  TmConfig config;
  config.queue.depth_pkts = 1;
  config.queue.drop_threshold_bytes = 100;
  config.port_buffer_bytes = 100;
  config.shared_buffer_bytes = 100;
  Build(config);
  EXPECT_EQ(Send(100, 0, 0, 0), 1u);
  EXPECT_EQ(Send(100, 0, 0, 0), 0u);  // every limit is hit; the queue limit is checked first
  EXPECT_EQ(Send(100, 0, 1, 0), 0u);  // drop threshold 100 would be fine; port buffer is not
  EXPECT_EQ(Send(100, 1, 0, 0), 0u);  // port 1 is empty; the shared buffer is full
  EXPECT_EQ(Send(100, 9, 0, 0), 0u);  // bad port before anything
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kBadEgressPort), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmDropThreshold), 0u);
  EXPECT_EQ(Send(101, 2, 0, 0), 0u);  // empty queue, but 101 B > drop threshold
  EXPECT_EQ(tm_->drops(DropReason::kTmDropThreshold), 1u);
  EXPECT_EQ(pool_->InUse(), 1u);
}

TEST_F(AdmissionTest, QueueIdIsMaskedToThreeBits) {
  Build(TmConfig());
  EXPECT_EQ(Send(100, 0, 13, 0), 1u);  // 13 & 7 = 5
  EXPECT_EQ(tm_->DepthPkts(0, 5), 1u);
  Packet* pkt = tm_->Dequeue(0, 0);
  ASSERT_NE(pkt, nullptr);
  EXPECT_EQ(pkt->meta.queue_id, 5);
  pool_->Free(pkt);
}

TEST_F(AdmissionTest, FreeAllReturnsEveryQueuedPacket) {
  Build(TmConfig());
  for (int i = 0; i < 40; ++i) Send(100, static_cast<PortId>(i % 4), static_cast<uint8_t>(i), 0);
  EXPECT_EQ(pool_->InUse(), 40u);
  EXPECT_EQ(tm_->TotalQueued(), 40u);
  EXPECT_EQ(tm_->FreeAll(), 40u);
  EXPECT_EQ(pool_->InUse(), 0u);
  EXPECT_EQ(tm_->TotalQueued(), 0u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 0u);
  EXPECT_EQ(tm_->NextDequeueTime(0, 0), kNever);
}

}  // namespace
}  // namespace swemu::tm_test
