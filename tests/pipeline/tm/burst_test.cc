// The burst calls (EnqueueBurst, DequeueBurst) give exactly what the per-packet calls give: the
// same packets in the same order, the same queue metadata, the same counters.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

// What one dequeued packet carried, for comparing two runs.
struct Seen {
  uint8_t tag;
  uint8_t queue;
  uint32_t deq_qdepth;
  uint32_t deq_qdepth_bytes;
  uint32_t deq_timedelta;
  PortId egress_port;
  bool operator==(const Seen&) const = default;
};

class BurstTest : public TmTest {
 public:
  // Fills port 1's queues with a seeded mix of lengths and queues (tags in arrival order).
  void Fill(int packets, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < packets; ++i) {
      const auto queue = static_cast<uint8_t>(rng() % kQueuesPerPort);
      Send(64 + rng() % 1400, 1, queue, 100 + i, static_cast<uint8_t>(i));
    }
  }
  Seen Record(Packet* pkt) {
    Seen seen{pkt->data[0],
              pkt->meta.queue_id,
              pkt->meta.deq_qdepth,
              pkt->meta.deq_qdepth_bytes,
              pkt->meta.deq_timedelta,
              pkt->meta.egress_port};
    pool_->Free(pkt);
    return seen;
  }
  // Everything port 1 sends by single Dequeue calls at times 1000, 1001, ...
  std::vector<Seen> DrainSingly() {
    std::vector<Seen> seen;
    for (TimeNs now = 1000;; ++now) {
      Packet* pkt = tm_->Dequeue(1, now);
      if (pkt == nullptr) break;
      seen.push_back(Record(pkt));
    }
    return seen;
  }
  // The same by DequeueBurst calls of `burst` packets, each call at one time.
  std::vector<Seen> DrainInBursts(uint32_t burst) {
    std::vector<Seen> seen;
    Packet* out[64];
    for (TimeNs now = 1000;; ++now) {
      const uint32_t n = tm_->DequeueBurst(1, now, out, burst);
      EXPECT_LE(n, burst);
      if (n == 0) break;
      for (uint32_t i = 0; i < n; ++i) seen.push_back(Record(out[i]));
    }
    return seen;
  }
};

TEST_F(BurstTest, PlainPortBurstDequeueMatchesSingleDequeues) {
  Build(TmConfig());
  Fill(300, 7);
  const std::vector<Seen> singly = DrainSingly();
  ASSERT_EQ(singly.size(), 300u);
  Fill(300, 7);
  // Times differ between the two drains only where a burst spans several packets; compare
  // everything else, and the time from the burst's own clock.
  std::vector<Seen> bursts = DrainInBursts(1);
  EXPECT_EQ(bursts, singly);
  Fill(300, 7);
  bursts = DrainInBursts(32);
  ASSERT_EQ(bursts.size(), singly.size());
  for (std::size_t i = 0; i < singly.size(); ++i) {
    EXPECT_EQ(bursts[i].tag, singly[i].tag) << i;
    EXPECT_EQ(bursts[i].queue, singly[i].queue) << i;
    EXPECT_EQ(bursts[i].deq_qdepth, singly[i].deq_qdepth) << i;
    EXPECT_EQ(bursts[i].deq_qdepth_bytes, singly[i].deq_qdepth_bytes) << i;
    EXPECT_EQ(bursts[i].egress_port, 1);
  }
  // Strict priority: queue 7's packets leave first, whatever the burst size.
  EXPECT_EQ(bursts.front().queue, 7);
  EXPECT_EQ(tm_->TotalQueued(), 0u);
  EXPECT_EQ(tm_->PortDepthBytes(1), 0u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 0u);
}

TEST_F(BurstTest, BurstCountersMatchSingleCounters) {
  Build(TmConfig());
  Fill(200, 3);
  DrainSingly();
  std::vector<QueueCounters> singly;
  for (int q = 0; q < kQueuesPerPort; ++q) singly.push_back(tm_->queue_counters(1, q));
  tm_->ResetCounters();
  Fill(200, 3);
  DrainInBursts(32);
  for (int q = 0; q < kQueuesPerPort; ++q) {
    EXPECT_EQ(tm_->queue_counters(1, q).dequeued, singly[q].dequeued) << q;
    EXPECT_EQ(tm_->queue_counters(1, q).deq_bytes, singly[q].deq_bytes) << q;
    EXPECT_EQ(tm_->DepthPkts(1, q), 0u) << q;
    EXPECT_EQ(tm_->DepthBytes(1, q), 0u) << q;
  }
}

TEST_F(BurstTest, ShapedPortBurstStopsAtTheLinkRate) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetPortRate(1, 1'000'000'000).ok());  // 1 Gbps
  for (int i = 0; i < 10; ++i) Send(1000, 1, 0, 0, static_cast<uint8_t>(i));
  Packet* out[32];
  // The first frame leaves at once; the next one only when its predecessor is on the wire.
  ASSERT_EQ(tm_->DequeueBurst(1, 0, out, 32), 1u);
  EXPECT_EQ(out[0]->data[0], 0);
  pool_->Free(out[0]);
  EXPECT_EQ(tm_->DequeueBurst(1, 1, out, 32), 0u);
  // 8 us later: the frames whose starts fit (each 1000 B + 20 B of overhead = 8.16 us).
  const uint32_t n = tm_->DequeueBurst(1, 8'200, out, 32);
  EXPECT_EQ(n, 1u);
  for (uint32_t i = 0; i < n; ++i) pool_->Free(out[i]);
}

TEST_F(BurstTest, WeightedPortBurstMatchesSingleDequeues) {
  // A fresh TM for each drain: the DRR turn and deficits carry over between drains.
  auto weighted = [this] {
    Build(TmConfig());
    ASSERT_TRUE(tm_->SetScheduler(1, SchedulerKind::kWeighted).ok());
    ASSERT_TRUE(tm_->SetQueueWeight(1, 2, 3).ok());
    Fill(200, 11);
  };
  weighted();
  const std::vector<Seen> singly = DrainSingly();
  ASSERT_EQ(singly.size(), 200u);
  weighted();
  EXPECT_EQ(DrainInBursts(1), singly);
}

TEST_F(BurstTest, EnqueueBurstMatchesSingleEnqueues) {
  Build(TmConfig());
  ASSERT_TRUE(tm_->SetQueueDepth(1, 0, 5).ok());
  Packet* pkts[8];
  for (int i = 0; i < 8; ++i) pkts[i] = Make(100, 1, 0, static_cast<uint8_t>(i));
  // Five fit the queue; the other three are tm_queue_full drops, counted and freed.
  EXPECT_EQ(tm_->EnqueueBurst(pkts, 8, 50), 5u);
  EXPECT_EQ(tm_->DepthPkts(1, 0), 5u);
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 3u);
  EXPECT_EQ(pool_->InUse(), 5u);
  for (int i = 0; i < 5; ++i) {
    Packet* pkt = tm_->Dequeue(1, 60);
    ASSERT_NE(pkt, nullptr);
    EXPECT_EQ(pkt->data[0], i);
    EXPECT_EQ(pkt->meta.enq_ts, 50u);
    EXPECT_EQ(pkt->meta.enq_qdepth, static_cast<uint32_t>(i));
    pool_->Free(pkt);
  }
}

// What a TM holds after a seeded mix of packets: per queue of ports 0-2, the counters, the
// depth and every queued packet's tag and enqueue metadata; and the drops by reason.
std::vector<uint64_t> Snapshot(TrafficManager& tm, PacketPool& pool) {
  std::vector<uint64_t> out;
  for (PortId port = 0; port < 3; ++port) {
    for (int q = 0; q < kQueuesPerPort; ++q) {
      const QueueCounters& c = tm.queue_counters(port, q);
      out.insert(out.end(), {c.enqueued, c.enq_bytes, c.dropped, c.max_depth_pkts,
                             c.max_depth_bytes, tm.DepthPkts(port, q), tm.DepthBytes(port, q)});
    }
    while (Packet* pkt = tm.Dequeue(port, 0)) {
      out.insert(out.end(), {pkt->data[0], pkt->meta.enq_qdepth, pkt->meta.enq_qdepth_bytes,
                             pkt->meta.congested ? 1u : 0u, pkt->meta.queue_id});
      pool.Free(pkt);
    }
  }
  for (std::size_t r = 0; r < kDropReasonCount; ++r) {
    out.push_back(tm.drops(static_cast<DropReason>(r)));
  }
  return out;
}

TEST_F(BurstTest, EnqueueBurstRunsMatchSingleEnqueuesAtEveryLimit) {
  // Runs of one queue, mixed queues and ports and an out-of-range port, with each limit in turn
  // reached part-way through a run; ECN marks throughout.
  struct Limit {
    DropReason reason;
    std::function<Status(TrafficManager&)> set;
  };
  const Limit limits[] = {
      {DropReason::kTmQueueFull, [](TrafficManager& tm) { return tm.SetQueueDepth(2, 2, 5); }},
      {DropReason::kTmDropThreshold,
       [](TrafficManager& tm) { return tm.SetDropThresholdChecked(1, 0, 9000); }},
      {DropReason::kTmPortBufferFull, [](TrafficManager& tm) { return tm.SetPortBuffer(14000); }},
      {DropReason::kTmSharedBufferFull,
       [](TrafficManager& tm) { return tm.SetSharedBuffer(36000); }},
  };
  auto make_bursts = [this](uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<Packet*>> bursts;
    uint8_t tag = 0;
    for (int b = 0; b < 12; ++b) {
      std::vector<Packet*> burst;
      PortId port = static_cast<PortId>(rng() % 3);
      uint8_t queue = 0;
      for (int i = 0; i < 32; ++i) {
        if (rng() % 6 == 0) port = static_cast<PortId>(rng() % 4);  // 3 is out of range
        if (rng() % 8 == 0) queue = static_cast<uint8_t>(rng() % 3);
        burst.push_back(Make(64 + rng() % 900, port, queue, tag++));
      }
      bursts.push_back(burst);
    }
    return bursts;
  };
  for (const Limit& limit : limits) {
    SCOPED_TRACE(DropReasonName(limit.reason));
    auto configure = [&] {
      TmConfig config;
      config.num_ports = 3;
      Build(config, 4096);
      ASSERT_TRUE(tm_->SetQueueDepth(std::nullopt, std::nullopt, 40).ok());
      ASSERT_TRUE(tm_->SetEcnThresholdChecked(0, 0, 3000).ok());
      ASSERT_TRUE(limit.set(*tm_).ok());
    };
    configure();
    for (const std::vector<Packet*>& burst : make_bursts(5)) {
      for (Packet* pkt : burst) tm_->Enqueue(pkt, 10);
    }
    const std::vector<uint64_t> singly = Snapshot(*tm_, *pool_);
    configure();
    for (const std::vector<Packet*>& burst : make_bursts(5)) {
      tm_->EnqueueBurst(burst.data(), static_cast<uint32_t>(burst.size()), 10);
    }
    EXPECT_EQ(Snapshot(*tm_, *pool_), singly);
    EXPECT_GT(tm_->drops(limit.reason), 0u);  // the mix did reach the limit
    EXPECT_GT(tm_->drops(DropReason::kBadEgressPort), 0u);
  }
}

TEST_F(BurstTest, OutOfRangePortDequeuesNothing) {
  Build(TmConfig());
  Packet* out[4];
  EXPECT_EQ(tm_->DequeueBurst(99, 0, out, 4), 0u);
}

}  // namespace
}  // namespace swemu::tm_test
