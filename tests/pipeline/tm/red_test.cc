// RED with ECN (SetRedThreshold): from the threshold on, ECT packets are marked and kept, Not-ECT
// packets dropped as tm_red_not_ect; the queue's capacity still drops everything; runs that stay
// below take the batched path unchanged, runs that cross it are admitted packet by packet.
#include <gtest/gtest.h>

#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

class RedTest : public TmTest {
 protected:
  // A 100-byte packet whose IPv4 header (at 14) carries `ecn`; ecn < 0: not IPv4 at all.
  Packet* Ip(int ecn) {
    Packet* pkt = Make(100, 0, 3);
    if (ecn >= 0) {
      pkt->hdr.ipv4 = 14;
      pkt->data[15] = static_cast<uint8_t>(0xA0 | ecn);  // DSCP bits set: only ECN counts
    }
    return pkt;
  }
};

TEST_F(RedTest, AboveTheThresholdEctIsMarkedAndNotEctDropped) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetRedThresholdChecked(0, 3, 4).ok());
  EXPECT_EQ(tm_->RedThreshold(0, 3), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(tm_->Enqueue(Ip(0), 0), 1u);  // below: all kept
  EXPECT_EQ(tm_->Enqueue(Ip(0), 0), 0u);   // Not-ECT at 4 queued: dropped
  EXPECT_EQ(tm_->Enqueue(Ip(-1), 0), 0u);  // not IPv4: Not-ECT
  EXPECT_EQ(tm_->Enqueue(Ip(2), 0), 1u);   // ECT(0): kept, marked
  EXPECT_EQ(tm_->Enqueue(Ip(1), 0), 1u);   // ECT(1)
  EXPECT_EQ(tm_->Enqueue(Ip(3), 0), 1u);   // CE
  EXPECT_EQ(tm_->drops(DropReason::kTmRedNotEct), 2u);
  EXPECT_EQ(tm_->queue_counters(0, 3).dropped, 2u);
  const bool congested[] = {false, false, false, false, true, true, true};
  for (bool c : congested) {
    Packet* pkt = tm_->Dequeue(0, 0);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->meta.congested, c) << pkt->meta.enq_qdepth;
    pool_->Free(pkt);
  }
}

TEST_F(RedTest, TheCapacityDropsImportantPacketsToo) {
  TmConfig config;
  config.queue.depth_pkts = 6;
  Build(config);
  tm_->SetRedThreshold(0, 3, 4);
  for (int i = 0; i < 8; ++i) tm_->Enqueue(Ip(2), 0);
  EXPECT_EQ(tm_->DepthPkts(0, 3), 6u);
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 2u);
  EXPECT_EQ(tm_->drops(DropReason::kTmRedNotEct), 0u);
}

TEST_F(RedTest, BurstsCrossingTheThresholdAreJudgedPacketByPacket) {
  Build(TmConfig());
  tm_->SetRedThreshold(0, 3, 3);
  std::vector<Packet*> burst;
  for (int i = 0; i < 6; ++i) burst.push_back(Ip(i % 2 == 0 ? 0 : 2));  // Not-ECT, ECT, ...
  // Queued before each: 0 1 2 3 4 4: the Not-ECT packet that finds 4 (>= 3) queued is dropped;
  // the ECT one at 3 is kept (and marked).
  EXPECT_EQ(tm_->EnqueueBurst(burst.data(), 6, 0), 5u);
  EXPECT_EQ(tm_->drops(DropReason::kTmRedNotEct), 1u);
  tm_->SetRedThreshold(0, 3, 0);  // off: a burst goes in whole
  burst.clear();
  for (int i = 0; i < 6; ++i) burst.push_back(Ip(0));
  EXPECT_EQ(tm_->EnqueueBurst(burst.data(), 6, 0), 6u);
}

TEST_F(RedTest, ThresholdsOutOfRangeAreRefused) {
  Build(TmConfig());
  EXPECT_FALSE(tm_->SetRedThresholdChecked(9, 0, 4).ok());
  EXPECT_FALSE(tm_->SetRedThresholdChecked(0, 8, 4).ok());
  EXPECT_FALSE(tm_->SetRedThresholdChecked(0, 0, uint64_t{1} << 30).ok());
  EXPECT_EQ(tm_->RedThreshold(0, 0), 0u);
}

}  // namespace
}  // namespace swemu::tm_test
