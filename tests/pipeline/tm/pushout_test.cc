// pFabric's priority drop (TmConfig::pushout): a full port admits a higher-priority arrival by
// dropping the tails of its lower queues, counted as tm_pushout, with exact accounting.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using PushoutTest = TmTest;

TmConfig PortBufferConfig(uint64_t port_buffer, bool pushout) {
  TmConfig config;
  config.num_ports = 2;
  config.port_buffer_bytes = port_buffer;
  config.pushout = pushout;
  return config;
}

// Dequeues port's packets and returns their tags in order.
std::vector<int> Drain(TrafficManager& tm, HeapPacketPool& pool, PortId port) {
  std::vector<int> tags;
  while (Packet* pkt = tm.Dequeue(port, 0)) {
    tags.push_back(pkt->data[0]);
    pool.Free(pkt);
  }
  return tags;
}

TEST_F(PushoutTest, HigherArrivalDropsTheLowQueuesTail) {
  Build(PortBufferConfig(1000, true));
  for (uint8_t tag = 1; tag <= 4; ++tag) ASSERT_EQ(Send(200, 0, 0, 0, tag), 1u);
  ASSERT_EQ(Send(100, 0, 2, 0, 5), 1u);  // 900 bytes queued
  ASSERT_EQ(Send(300, 0, 7, 0, 6), 1u);  // needs 200 more: queue 0's newest packet goes
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 0u);
  EXPECT_EQ(tm_->queue_counters(0, 0).dropped, 1u);
  EXPECT_EQ(tm_->DepthPkts(0, 0), 3u);
  EXPECT_EQ(tm_->DepthBytes(0, 0), 600u);
  EXPECT_EQ(tm_->PortDepthBytes(0), 1000u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 1000u);
  // 450 more for queue 5: queue 0's two newest (400) are not enough, so queue 0 empties (600)
  // before queue 2 is touched; queue 2 stays.
  ASSERT_EQ(Send(450, 0, 5, 0, 7), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 4u);
  EXPECT_EQ(tm_->DepthPkts(0, 0), 0u);
  EXPECT_EQ(tm_->DepthPkts(0, 2), 1u);
  EXPECT_EQ(tm_->PortDepthBytes(0), 850u);
  EXPECT_EQ(tm_->TotalQueued(), 3u);
  EXPECT_EQ(pool_->InUse(), 3u);
  EXPECT_EQ(Drain(*tm_, *pool_, 0), (std::vector<int>{6, 7, 5}));
  const QueueCounters& low = tm_->queue_counters(0, 0);
  EXPECT_EQ(low.enqueued, 4u);
  EXPECT_EQ(low.dequeued, 0u);
  EXPECT_EQ(low.dropped, 4u);
}

TEST_F(PushoutTest, LowestArrivalIsDroppedAndNothingQueuedIs) {
  Build(PortBufferConfig(1000, true));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Send(200, 0, 3, 0, static_cast<uint8_t>(i)), 1u);
  EXPECT_EQ(Send(100, 0, 0, 0), 0u);  // lower than everything queued
  EXPECT_EQ(Send(100, 0, 3, 0), 0u);  // equal: not pushed out either
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 2u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 0u);
  EXPECT_EQ(tm_->DepthPkts(0, 3), 5u);
  // Lower queues hold too little for the arrival: it is dropped and they keep their packets.
  ASSERT_EQ(Send(200, 1, 0, 0), 1u);  // another port's bytes do not count
  pool_->Free(tm_->Dequeue(0, 0));
  ASSERT_EQ(Send(100, 0, 1, 0), 1u);  // 900 bytes: 800 in queue 3, 100 in queue 1
  EXPECT_EQ(Send(300, 0, 2, 0), 0u);  // would need 200, queue 1 has 100
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 3u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 0u);
  EXPECT_EQ(tm_->DepthPkts(0, 1), 1u);
}

TEST_F(PushoutTest, OffDropsTheArrival) {
  Build(PortBufferConfig(1000, false));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Send(200, 0, 0, 0), 1u);
  EXPECT_EQ(Send(200, 0, 7, 0), 0u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 0u);
  EXPECT_EQ(tm_->DepthPkts(0, 0), 5u);
  EXPECT_FALSE(tm_->pushout());
}

TEST_F(PushoutTest, SharedBufferFreesOnlyTheArrivalsPort) {
  TmConfig config;
  config.num_ports = 2;
  config.shared_buffer_bytes = 1000;
  config.pushout = true;
  Build(config);
  ASSERT_EQ(Send(600, 1, 0, 0), 1u);
  ASSERT_EQ(Send(200, 0, 0, 0, 1), 1u);
  ASSERT_EQ(Send(200, 0, 0, 0, 2), 1u);
  ASSERT_EQ(Send(300, 0, 4, 0, 3), 1u);  // 300 over: both of port 0's low packets go
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 2u);
  EXPECT_EQ(tm_->DepthPkts(1, 0), 1u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 900u);
  EXPECT_EQ(Send(500, 0, 7, 0), 0u);  // port 1's 600 are not port 0's to drop
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 1u);
  EXPECT_EQ(Drain(*tm_, *pool_, 0), (std::vector<int>{3}));
}

TEST_F(PushoutTest, QueueLimitsAndMulticastAreNotPushedOut) {
  TmConfig config = PortBufferConfig(1000, true);
  config.queue.depth_pkts = 2;
  Build(config);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(Send(400, 0, 0, 0), 1u);
  ASSERT_EQ(Send(100, 0, 7, 0), 1u);
  ASSERT_EQ(Send(100, 0, 7, 0), 1u);
  EXPECT_EQ(Send(100, 0, 7, 0), 0u);  // its own queue is full: push-out cannot help
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 1u);
  ASSERT_TRUE(tm_->McGroupCreate(1).ok());
  auto node = tm_->McNodeCreate(0, {0});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(tm_->McNodeAssociate(1, *node).ok());
  Packet* copy = Make(300, 0, 6);
  copy->meta.mcast_grp = 1;
  EXPECT_EQ(tm_->Enqueue(copy, 0), 0u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPortBufferFull), 1u);
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 0u);
}

TEST_F(PushoutTest, OnlyWithStrictPriority) {
  Build(PortBufferConfig(1000, true));
  TmConfig config = PortBufferConfig(1000, true);
  config.scheduler = SchedulerKind::kWeighted;
  Result<std::unique_ptr<TrafficManager>> refused = TrafficManager::Create(config, *pool_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("pushout needs the strict scheduler"), std::string::npos);
  ASSERT_TRUE(tm_->SetScheduler(0, SchedulerKind::kWeighted).ok());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Send(200, 0, 0, 0), 1u);
  EXPECT_EQ(Send(200, 0, 7, 0), 0u);  // a weighted port drops the arrival
  EXPECT_EQ(tm_->drops(DropReason::kTmPushout), 0u);
}

// A brute-force model of a strict-priority TM with a port buffer, a shared buffer, queue limits
// and one queue per port with a guaranteed minimum (kManaged), with push-out: every packet's
// fate and every byte count must agree with the TM's.
constexpr int kManaged = 1;
constexpr uint64_t kMinBytes = 1000;

struct Model {
  struct Pkt {
    int id;
    uint32_t len;
  };
  std::vector<std::array<std::deque<Pkt>, kQueuesPerPort>> queues;
  uint64_t port_buffer = 0, shared_buffer = 0;
  uint32_t depth = 0;
  uint64_t pushed_out = 0, refused = 0;
  std::vector<std::array<uint64_t, kQueuesPerPort>> dropped;  // per queue, either way

  uint64_t Bytes(const std::deque<Pkt>& q) const {
    uint64_t b = 0;
    for (const Pkt& p : q) b += p.len;
    return b;
  }
  uint64_t PortBytes(PortId port) const {
    uint64_t b = 0;
    for (const auto& q : queues[port]) b += Bytes(q);
    return b;
  }
  uint64_t SharedBytes() const {
    uint64_t b = 0;
    for (PortId p = 0; p < queues.size(); ++p) b += PortBytes(p);
    return b;
  }
  static uint64_t Beyond(uint64_t bytes) { return bytes > kMinBytes ? bytes - kMinBytes : 0; }
  // The shared pool's bytes in use: every byte but those within a minimum.
  uint64_t PoolUsed() const {
    uint64_t used = SharedBytes();
    for (const auto& qs : queues) used -= std::min(Bytes(qs[kManaged]), kMinBytes);
    return used;
  }
  bool PortFits(PortId port, uint32_t len) const { return PortBytes(port) + len <= port_buffer; }
  bool SharedFits(PortId port, int qid, uint32_t len) const {
    const uint64_t pool = shared_buffer - kMinBytes * queues.size();
    if (qid != kManaged) return PoolUsed() + len <= pool;
    const uint64_t bytes = Bytes(queues[port][qid]);
    return PoolUsed() + Beyond(bytes + len) - Beyond(bytes) <= pool;
  }
  bool Fits(PortId port, int qid, uint32_t len) const {
    return PortFits(port, len) && SharedFits(port, qid, len);
  }
  bool Enqueue(PortId port, int qid, Pkt pkt) {
    auto& qs = queues[port];
    auto refuse = [&] {
      ++refused;
      ++dropped[port][qid];
      return false;
    };
    if (qs[qid].size() >= depth) return refuse();
    if (!Fits(port, qid, pkt.len)) {
      // The managed queue pushes out only for the port buffer, its share already fitting.
      if (qid == kManaged && !SharedFits(port, qid, pkt.len)) return refuse();
      // Would dropping every lower queue of the port make room? Then drop tails, lowest first.
      auto saved = qs;
      for (int q = 0; q < qid; ++q) qs[q].clear();
      const bool possible = Fits(port, qid, pkt.len);
      qs = saved;
      if (!possible) return refuse();
      int q = 0;
      while (!Fits(port, qid, pkt.len)) {
        while (qs[q].empty()) ++q;
        qs[q].pop_back();
        ++pushed_out;
        ++dropped[port][q];
      }
    }
    qs[qid].push_back(pkt);
    return true;
  }
  // Strict priority: the highest non-empty queue's head.
  int Dequeue(PortId port) {
    for (int q = kQueuesPerPort - 1; q >= 0; --q) {
      if (!queues[port][q].empty()) {
        const int id = queues[port][q].front().id;
        queues[port][q].pop_front();
        return id;
      }
    }
    return -1;
  }
};

TEST_F(PushoutTest, RandomArrivalsAgreeWithAModel) {
  TmConfig config;
  config.num_ports = 3;
  config.port_buffer_bytes = 6000;
  config.shared_buffer_bytes = 14000;
  config.queue.depth_pkts = 6;
  config.pushout = true;
  Build(config, 4096);
  ASSERT_TRUE(tm_->SetGuaranteedMin(std::nullopt, kManaged, kMinBytes).ok());
  Model model;
  model.queues.resize(3);
  model.dropped.resize(3);
  model.port_buffer = 6000;
  model.shared_buffer = 14000;
  model.depth = 6;
  std::mt19937 rng(38);
  int next_id = 0;
  uint64_t in = 0, admitted = 0, dequeued = 0;
  for (int step = 0; step < 20'000; ++step) {
    for (int n = rng() % 4; n > 0; --n) {
      const uint32_t len = 64 + rng() % 1400;
      const auto port = static_cast<PortId>(rng() % 3);
      const auto qid = static_cast<uint8_t>(rng() % 8);
      const int id = next_id++;
      Packet* pkt = Make(len, port, qid);
      std::memcpy(pkt->data, &id, sizeof(id));
      ++in;
      const uint32_t got = tm_->Enqueue(pkt, 0);
      admitted += got;
      ASSERT_EQ(got == 1, model.Enqueue(port, qid, {id, len})) << "step " << step;
    }
    if (rng() % 3 == 0) {
      const auto port = static_cast<PortId>(rng() % 3);
      Packet* pkt = tm_->Dequeue(port, 0);
      const int want = model.Dequeue(port);
      ASSERT_EQ(pkt != nullptr, want >= 0);
      if (pkt != nullptr) {
        int id = 0;
        std::memcpy(&id, pkt->data, sizeof(id));
        ASSERT_EQ(id, want) << "step " << step;
        ++dequeued;
        pool_->Free(pkt);
      }
    }
    for (PortId port = 0; port < 3; ++port) {
      ASSERT_EQ(tm_->PortDepthBytes(port), model.PortBytes(port));
      for (int q = 0; q < kQueuesPerPort; ++q) {
        ASSERT_EQ(tm_->DepthPkts(port, q), model.queues[port][q].size());
        ASSERT_EQ(tm_->DepthBytes(port, q), model.Bytes(model.queues[port][q]));
      }
    }
    ASSERT_EQ(tm_->SharedUsedBytes(), model.SharedBytes());
    ASSERT_EQ(tm_->PoolUsedBytes(), model.PoolUsed());
  }
  const uint64_t pushed_out = tm_->drops(DropReason::kTmPushout);
  EXPECT_GT(pushed_out, 100u);
  EXPECT_EQ(pushed_out, model.pushed_out);
  uint64_t dropped = 0, queue_dropped = 0, enqueued = 0, queue_dequeued = 0;
  for (std::size_t r = 0; r < kDropReasonCount; ++r) dropped += tm_->drops(DropReason(r));
  for (PortId port = 0; port < 3; ++port) {
    for (int q = 0; q < kQueuesPerPort; ++q) {
      const QueueCounters& c = tm_->queue_counters(port, q);
      EXPECT_EQ(c.dropped, model.dropped[port][q]) << "port " << port << " queue " << q;
      enqueued += c.enqueued;
      queue_dequeued += c.dequeued;
      queue_dropped += c.dropped;
    }
  }
  EXPECT_EQ(dropped - pushed_out, model.refused);
  EXPECT_EQ(in, admitted + dropped - pushed_out);  // the TM's conservation with push-out
  EXPECT_EQ(enqueued, admitted);
  EXPECT_EQ(queue_dequeued, dequeued);
  EXPECT_EQ(queue_dropped, dropped);
  EXPECT_EQ(admitted, dequeued + pushed_out + tm_->TotalQueued());
  EXPECT_EQ(pool_->InUse(), tm_->TotalQueued());
}

}  // namespace
}  // namespace swemu::tm_test
