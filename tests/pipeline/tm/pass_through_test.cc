// Cut-through (TrafficManager::PassThrough): a run for an idle plain port leaves with exactly the
// metadata and counters that EnqueueRun followed by DequeueBurst at the same time would give it,
// and the TM refuses (changing nothing) whenever the run would have to wait or be dropped.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

// The queue metadata a packet leaves the TM with.
struct Stamped {
  uint8_t queue;
  TimeNs enq_ts;
  uint32_t enq_qdepth;
  uint32_t enq_qdepth_bytes;
  bool congested;
  PortId egress_port;
  uint32_t deq_qdepth;
  uint32_t deq_qdepth_bytes;
  uint32_t deq_timedelta;
  bool operator==(const Stamped&) const = default;
};

Stamped StampOf(const Packet& pkt) {
  const Metadata& m = pkt.meta;
  return {m.queue_id,    m.enq_ts,     m.enq_qdepth,       m.enq_qdepth_bytes, m.congested,
          m.egress_port, m.deq_qdepth, m.deq_qdepth_bytes, m.deq_timedelta};
}

class PassThroughTest : public TmTest {
 public:
  static constexpr uint32_t kRun = 8;
  static constexpr TimeNs kNow = 5000;

  // A run of kRun packets of growing lengths for (port 1, queue 3); its bytes in `bytes`.
  std::vector<Packet*> MakeRun(uint64_t* bytes) {
    std::vector<Packet*> run;
    *bytes = 0;
    for (uint32_t i = 0; i < kRun; ++i) {
      run.push_back(Make(100 + 10 * i, 1, 3, static_cast<uint8_t>(i)));
      *bytes += run.back()->len;
    }
    return run;
  }
  // ECN threshold low enough that the run's later packets see it crossed.
  void BuildWithEcn() {
    Build(TmConfig());
    ASSERT_TRUE(tm_->SetEcnThresholdChecked(1, 3, 300).ok());
  }
  void FreeAll(const std::vector<Packet*>& pkts) {
    for (Packet* pkt : pkts) pool_->Free(pkt);
  }
};

TEST_F(PassThroughTest, StampsAndCountsAsEnqueueThenDequeueAtTheSameTime) {
  // Reference: the run queued, then taken in one burst at the same time.
  BuildWithEcn();
  uint64_t bytes = 0;
  std::vector<Packet*> run = MakeRun(&bytes);
  ASSERT_EQ(tm_->EnqueueRun(run.data(), kRun, bytes, kNow), kRun);
  Packet* out[kRun];
  ASSERT_EQ(tm_->DequeueBurst(1, kNow, out, kRun), kRun);
  std::vector<Stamped> queued;
  for (Packet* pkt : out) queued.push_back(StampOf(*pkt));
  FreeAll(std::vector<Packet*>(out, out + kRun));
  const QueueCounters expected = tm_->queue_counters(1, 3);

  BuildWithEcn();
  run = MakeRun(&bytes);
  ASSERT_TRUE(tm_->PassThrough(run.data(), kRun, bytes, kNow));
  std::vector<Stamped> passed;
  for (Packet* pkt : run) passed.push_back(StampOf(*pkt));
  EXPECT_EQ(passed, queued);
  // Some of the run saw the threshold crossed, so the comparison covers ECN too.
  EXPECT_FALSE(passed.front().congested);
  EXPECT_TRUE(passed.back().congested);
  const QueueCounters& c = tm_->queue_counters(1, 3);
  EXPECT_EQ(c.enqueued, expected.enqueued);
  EXPECT_EQ(c.dequeued, expected.dequeued);
  EXPECT_EQ(c.enq_bytes, expected.enq_bytes);
  EXPECT_EQ(c.deq_bytes, expected.deq_bytes);
  EXPECT_EQ(c.max_depth_pkts, expected.max_depth_pkts);
  EXPECT_EQ(c.max_depth_bytes, expected.max_depth_bytes);
  // Nothing stays behind: the packets are the caller's again.
  EXPECT_EQ(tm_->TotalQueued(), 0u);
  EXPECT_EQ(tm_->PortDepthBytes(1), 0u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 0u);
  EXPECT_EQ(pool_->InUse(), kRun);
  FreeAll(run);
}

TEST_F(PassThroughTest, RefusesWhenTheRunWouldWaitOrBeDropped) {
  struct Case {
    const char* what;
    std::function<void(TrafficManager&)> set;
  };
  const Case cases[] = {
      {"another queue of the port holds a packet", [this](TrafficManager&) { Send(64, 1, 0, 1); }},
      {"the port is shaped",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetPortRate(1, 10'000'000'000).ok()); }},
      {"a queue of the port has a packet rate",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetQueueRate(1, 5, 1000).ok()); }},
      {"the port is weighted",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetScheduler(1, SchedulerKind::kWeighted).ok()); }},
      {"the queue is shorter than the run",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetQueueDepth(1, 3, kRun - 1).ok()); }},
      {"the drop threshold is below the run",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetDropThresholdChecked(1, 3, 500).ok()); }},
      {"the port buffer is below the run",
       [](TrafficManager& tm) { ASSERT_TRUE(tm.SetPortBuffer(500).ok()); }},
      {"the shared buffer is nearly full",
       [this](TrafficManager& tm) {
         ASSERT_TRUE(tm.SetSharedBuffer(1500).ok());
         Send(1000, 2, 0, 1);  // another port's packet uses the shared buffer
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Build(TmConfig());
    c.set(*tm_);
    const uint64_t queued = tm_->TotalQueued();
    uint64_t bytes = 0;
    std::vector<Packet*> run = MakeRun(&bytes);
    EXPECT_FALSE(tm_->PassThrough(run.data(), kRun, bytes, kNow));
    // Nothing changed: no counter moved, nothing was stamped.
    EXPECT_EQ(tm_->queue_counters(1, 3).enqueued, 0u);
    EXPECT_EQ(tm_->queue_counters(1, 3).dequeued, 0u);
    EXPECT_EQ(tm_->TotalQueued(), queued);
    EXPECT_EQ(run.front()->meta.enq_ts, 0u);
    FreeAll(run);
  }
}

// Byte depths are 32 bits wide: a run of 4 GiB or more (a caller's count, as no real run is that
// big) takes the queued path, which saturates them, even where every limit would let it pass.
TEST_F(PassThroughTest, RefusesARunWhoseBytesDoNotFit32Bits) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetSharedBuffer(uint64_t{1} << 40).ok());
  Packet* pkt = Make(64, 1, 3);
  EXPECT_FALSE(tm_->PassThrough(&pkt, 1, uint64_t{1} << 32, kNow));
  EXPECT_EQ(tm_->queue_counters(1, 3).enqueued, 0u);
  EXPECT_TRUE(tm_->PassThrough(&pkt, 1, (uint64_t{1} << 32) - 1, kNow));
  pool_->Free(pkt);
}

TEST_F(PassThroughTest, RefusesAPortOutOfRange) {
  Build(TmConfig());
  Packet* pkt = Make(64, 99);
  EXPECT_FALSE(tm_->PassThrough(&pkt, 1, 64, kNow));
  pool_->Free(pkt);
}

}  // namespace
}  // namespace swemu::tm_test
