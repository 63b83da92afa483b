// Dynamic thresholds and guaranteed minimums: admission against the formula, the drop reason,
// the run path, the control calls and `show queues`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using DynamicThresholdTest = TmTest;

TmConfig OnePort(uint64_t buffer, double alpha, uint64_t min = 0) {
  TmConfig config;
  config.num_ports = 1;
  config.shared_buffer_bytes = buffer;
  config.queue.depth_pkts = 4096;
  config.queue.alpha = alpha;
  config.queue.guaranteed_min_bytes = min;
  return config;
}

uint32_t SendUntilRefused(TmTest& t, uint32_t len, uint8_t queue) {
  uint32_t admitted = 0;
  while (t.Send(len, 0, queue, 0) == 1) ++admitted;
  return admitted;
}

TEST(AlphaSpelling, PowersFractionsAndDecimalsReadBack) {
  EXPECT_EQ(*ParseAlpha("1/8"), 0.125);
  EXPECT_EQ(*ParseAlpha("2^-3"), 0.125);
  EXPECT_EQ(*ParseAlpha("0.125"), 0.125);
  EXPECT_EQ(*ParseAlpha("2^1"), 2.0);
  EXPECT_EQ(*ParseAlpha("4"), 4.0);
  EXPECT_EQ(*ParseAlpha("0"), 0.0);
  EXPECT_EQ(*ParseAlpha("off"), 0.0);
  EXPECT_EQ(FormatAlpha(0.125), "1/8");
  EXPECT_EQ(FormatAlpha(0.5), "1/2");
  EXPECT_EQ(FormatAlpha(2), "2");
  EXPECT_EQ(FormatAlpha(0), "0");
  EXPECT_EQ(FormatAlpha(0.3), "0.3");
  for (double alpha : {0.0, 1.0 / 1024, 0.125, 0.3, 1.0 / 3, 1.0, 7.5, 1024.0}) {
    Result<double> back = ParseAlpha(FormatAlpha(alpha));
    ASSERT_TRUE(back.ok()) << FormatAlpha(alpha) << ": " << back.message();
    EXPECT_EQ(*back, alpha) << FormatAlpha(alpha);
  }
  for (const char* bad : {"", "-1", "1/0", "3^2", "2^", "2^x", "abc", "1/8x", "2^-11", "2048",
                          "0.0001", "nan", "inf"}) {
    EXPECT_FALSE(ParseAlpha(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseAlpha("2^-11").message(), "alpha 1/2048 out of range: 0 (off) or 2^-10 .. 2^10");
}

// One queue of 1000-byte packets in a 100000-byte buffer: a packet goes in while
// Q + 1000 <= alpha x (100000 - Q), Q the bytes queued before it.
TEST_F(DynamicThresholdTest, OneQueueStopsWhereTheFormulaSays) {
  Build(OnePort(100'000, 1.0));
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 50u);  // Q = 49000: 50000 <= 51000; 50000: no
  EXPECT_EQ(tm_->drops(DropReason::kTmDynamicThreshold), 1u);
  EXPECT_EQ(tm_->queue_counters(0, 0).dropped, 1u);
  EXPECT_EQ(DropReasonName(DropReason::kTmDynamicThreshold), "tm_dynamic_threshold");
  Build(OnePort(100'000, 0.125));
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 11u);  // Q = 10000: 11000 <= 11250; 11000: no
  EXPECT_EQ(tm_->DepthBytes(0, 0), 11'000u);
  EXPECT_EQ(tm_->DynamicLimit(0, 0), 11'125u);  // (100000 - 11000) / 8
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 0u);
}

// Without alpha the static buffer takes all of it; with alpha 2 the pool's end comes first.
TEST_F(DynamicThresholdTest, StaticBufferAndLargeAlphaStopAtThePool) {
  Build(OnePort(100'000, 0));
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 100u);
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 1u);
  Build(OnePort(100'000, 2.0));  // Q + 1000 <= 2 (100000 - Q): Q <= 66333
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 67u);
  EXPECT_EQ(tm_->drops(DropReason::kTmDynamicThreshold), 1u);
}

// Two queues: the second sees the pool the first left free.
TEST_F(DynamicThresholdTest, ASecondQueueGetsAlphaOfWhatIsLeft) {
  Build(OnePort(100'000, 1.0));
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 50u);  // 50000 queued
  // Q1 + 1000 <= 100000 - 50000 - Q1: Q1 <= 24500, 25 packets.
  EXPECT_EQ(SendUntilRefused(*this, 1000, 1), 25u);
  EXPECT_EQ(tm_->drops(DropReason::kTmDynamicThreshold), 2u);
}

// Minimums are reserved out of the buffer and used first: with 8 queues x 5000 B reserved the
// pool is 60000 B. Queue 1 (alpha off) fills the pool; queue 0 still gets its 5000 B, no more.
TEST_F(DynamicThresholdTest, GuaranteedMinimumIsReservedAndUsedFirst) {
  TmConfig config = OnePort(100'000, 0, 5000);
  config.port_queues[0].alpha = 1.0;
  Build(config);
  EXPECT_EQ(tm_->PoolBytes(), 60'000u);
  // Queue 0 alone: 5 packets in its minimum, then its pool part P: P + 1000 <= 60000 - P.
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 5u + 30u);
  EXPECT_EQ(tm_->PoolUsedBytes(), 30'000u);
  tm_->FreeAll();
  EXPECT_EQ(tm_->PoolUsedBytes(), 0u);
  ASSERT_TRUE(tm_->SetQueueAlpha(0, 1, 0).ok());
  EXPECT_EQ(SendUntilRefused(*this, 1000, 1), 65u);  // its 5000 B and the whole pool
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 1u);
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 5u);  // the reserve is still there
  EXPECT_EQ(tm_->drops(DropReason::kTmSharedBufferFull), 2u);
  EXPECT_EQ(tm_->SharedUsedBytes(), 70'000u);
}

// A packet straddling the minimum: its part beyond it is what the pool and alpha see.
TEST_F(DynamicThresholdTest, PacketStraddlingTheMinimumCountsOnlyItsPoolPart) {
  TmConfig config = OnePort(100'000, 0.125, 2500);  // pool 80000
  Build(config);
  EXPECT_EQ(tm_->PoolBytes(), 80'000u);
  // Packets 1 and 2 fit the minimum; packet 3 puts 500 B in the pool. Packet k's pool part
  // 1000 k - 2500 must stay <= (80000 - (1000 (k - 1) - 2500)) / 8: k <= 11.5.
  EXPECT_EQ(SendUntilRefused(*this, 1000, 0), 11u);  // 8500 <= (80000 - 7500) / 8 = 9062
  EXPECT_EQ(tm_->PoolUsedBytes(), 8'500u);
}

// An independent model of the rule, fed random sizes, queues, bursts and dequeues: the TM
// (its run path and its per-packet path) must admit exactly the packets the model admits.
struct Model {
  struct Q {
    uint64_t bytes = 0;
    double alpha = 0;
    uint64_t min = 0;
    std::vector<uint32_t> lens;
  };
  uint64_t buffer;
  std::vector<Q> queues;
  uint64_t Pool() const {
    uint64_t reserved = 0;
    for (const Q& q : queues) reserved += q.min;
    return buffer - reserved;
  }
  static uint64_t PoolPart(const Q& q, uint64_t bytes) { return bytes > q.min ? bytes - q.min : 0; }
  bool Admit(int qid, uint32_t len) {
    Q& q = queues[qid];
    uint64_t used = 0;
    for (const Q& other : queues) used += PoolPart(other, other.bytes);
    const uint64_t after = PoolPart(q, q.bytes + len);
    const uint64_t grow = after - PoolPart(q, q.bytes);
    const bool ok = grow == 0 || (used + grow <= Pool() &&
                                  (q.alpha == 0 ||
                                   after <= std::floor(q.alpha * double(Pool() - used))));
    if (ok) {
      q.bytes += len;
      q.lens.push_back(len);
    }
    return ok;
  }
  void Dequeue(int qid, uint32_t n) {
    Q& q = queues[qid];
    for (uint32_t i = 0; i < n && !q.lens.empty(); ++i) {
      q.bytes -= q.lens.front();
      q.lens.erase(q.lens.begin());
    }
  }
};

TEST_F(DynamicThresholdTest, RandomTrafficMatchesTheModel) {
  const double alphas[kQueuesPerPort] = {0.125, 0.5, 1, 2, 0.25, 0, 1.0 / 64, 4};
  const uint64_t mins[kQueuesPerPort] = {0, 3000, 0, 10'000, 0, 2000, 0, 0};
  for (bool bursts : {false, true}) {
    TmConfig config = OnePort(200'000, 0);
    config.queue.depth_pkts = 1u << 16;
    Build(config, 8192);
    Model model{200'000, std::vector<Model::Q>(kQueuesPerPort)};
    for (int q = 0; q < kQueuesPerPort; ++q) {
      ASSERT_TRUE(tm_->SetQueueAlpha(0, q, alphas[q]).ok());
      ASSERT_TRUE(tm_->SetGuaranteedMin(0, q, mins[q]).ok());
      model.queues[q].alpha = alphas[q];
      model.queues[q].min = mins[q];
    }
    std::mt19937 rng(7);
    uint64_t refused = 0;
    for (int round = 0; round < 400; ++round) {
      const int qid = static_cast<int>(rng() % kQueuesPerPort);
      const uint32_t n = 1 + rng() % 32;
      std::vector<Packet*> pkts;
      uint32_t expected = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t len = 64 + rng() % 1437;
        pkts.push_back(Make(len, 0, static_cast<uint8_t>(qid)));
        expected += model.Admit(qid, len) ? 1 : 0;
      }
      refused += n - expected;
      uint32_t got = 0;
      if (bursts) {
        got = tm_->EnqueueBurst(pkts.data(), n, 0);
      } else {
        for (Packet* pkt : pkts) got += tm_->Enqueue(pkt, 0);
      }
      ASSERT_EQ(got, expected) << "round " << round;
      ASSERT_EQ(tm_->DepthBytes(0, qid), model.queues[qid].bytes) << "round " << round;
      if (round % 3 == 0) {
        const uint32_t k = rng() % 24;
        Packet* taken[24];
        // Whatever the scheduler takes, the model takes from the same queues.
        const uint32_t got_out = tm_->DequeueBurst(0, 0, taken, k);
        for (uint32_t i = 0; i < got_out; ++i) {
          model.Dequeue(taken[i]->meta.queue_id, 1);
          pool_->Free(taken[i]);
        }
      }
    }
    EXPECT_GT(refused, 100u);  // the rule was exercised, not just the happy path
    EXPECT_EQ(tm_->drops(DropReason::kTmDynamicThreshold) +
                  tm_->drops(DropReason::kTmSharedBufferFull),
              refused);
    uint64_t reserved_in_use = 0;
    for (const Model::Q& q : model.queues) reserved_in_use += std::min(q.bytes, q.min);
    EXPECT_EQ(tm_->PoolUsedBytes(), tm_->SharedUsedBytes() - reserved_in_use);
  }
}

TEST_F(DynamicThresholdTest, ControlRefusesBadValuesAndChangesNothing) {
  Build(OnePort(100'000, 0));
  EXPECT_FALSE(tm_->SetQueueAlpha(0, 0, 5000).ok());
  EXPECT_FALSE(tm_->SetQueueAlpha(0, 8, 1).ok());
  EXPECT_EQ(tm_->QueueAlpha(0, 0), 0.0);
  ASSERT_TRUE(tm_->SetQueueAlpha(std::nullopt, std::nullopt, 0.25).ok());
  EXPECT_EQ(tm_->QueueAlpha(0, 7), 0.25);
  // 8 x 12500 = 100000 fits; one byte more on every queue does not.
  ASSERT_TRUE(tm_->SetGuaranteedMin(std::nullopt, std::nullopt, 12'500).ok());
  EXPECT_EQ(tm_->PoolBytes(), 0u);
  Status over = tm_->SetGuaranteedMin(std::nullopt, std::nullopt, 12'501);
  EXPECT_FALSE(over.ok());
  EXPECT_EQ(tm_->GuaranteedMin(0, 3), 12'500u);
  EXPECT_FALSE(tm_->SetSharedBuffer(99'999).ok());
  ASSERT_TRUE(tm_->SetGuaranteedMin(0, 3, 0).ok());
  EXPECT_EQ(tm_->PoolBytes(), 12'500u);
  TmConfig bad = OnePort(100'000, 0, 12'501);
  EXPECT_FALSE(bad.Validate().ok());
  bad.queue.guaranteed_min_bytes = 0;
  bad.port_queues[0].alpha = 2048;
  EXPECT_FALSE(bad.Validate().ok());
}

TEST_F(DynamicThresholdTest, ShowQueuesNamesAlphaAndLimitOnlyWhereSet) {
  Build(OnePort(100'000, 0));
  Send(1000, 0, 1, 0);
  Send(1000, 0, 2, 0);
  ASSERT_TRUE(tm_->SetQueueAlpha(0, 2, 0.5).ok());
  const std::string text = tm_->DescribeQueues();
  EXPECT_NE(text.find("port 0 queue 1: depth 1/4096 pkts 1000 B"), std::string::npos) << text;
  EXPECT_EQ(text.find("queue 1: depth 1/4096 pkts 1000 B, max 1 pkts 1000 B, enq 1 deq 0 drop 0 "
                      "mark 0, ecn 0 B drop-thr 0 B rate 0 pps\n"),
            text.find("queue 1:"));
  // Limit: alpha x the free pool = (100000 - 2000) / 2.
  EXPECT_NE(text.find("rate 0 pps, alpha 1/2 min 0 B limit 49000 B\n"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace swemu::tm_test
