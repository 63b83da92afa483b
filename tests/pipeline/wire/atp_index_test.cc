// The aggregator index hash (pipeline/wire/atp.h): the same on every switch, a job's
// consecutive seqs on distinct aggregators within an epoch, offsets drawn anew per epoch.
#include <gtest/gtest.h>

#include <set>

#include "pipeline/wire/atp.h"

namespace swemu {
namespace {

// A job alone on a switch never collides with its own packets in flight: any run of seqs no
// longer than the array within one epoch takes distinct aggregators.
TEST(AtpIndexTest, AnEpochOfOneJobsSeqsTakesEveryAggregatorOnce) {
  for (const uint32_t n : {128u, 16384u, 1000u}) {
    for (const uint32_t epoch : {0u, 1u, 7u}) {
      std::set<uint32_t> seen;
      for (uint32_t seq = epoch * n; seq < (epoch + 1) * n; ++seq) {
        const uint32_t index = AtpAggregatorIndex(3, seq, n);
        EXPECT_LT(index, n);
        seen.insert(index);
      }
      EXPECT_EQ(seen.size(), n) << n << " epoch " << epoch;
    }
  }
}

// Consecutive seqs take consecutive aggregators (mod the array) from the epoch's offset.
TEST(AtpIndexTest, ConsecutiveSeqsTakeConsecutiveAggregators) {
  const uint32_t n = 16384;
  const uint32_t first = AtpAggregatorIndex(1, 100, n);
  for (uint32_t k = 1; k < 500; ++k) {
    EXPECT_EQ(AtpAggregatorIndex(1, 100 + k, n), (first + k) % n) << k;
  }
}

// Offsets differ between jobs and between a job's epochs, so no job keeps a place that
// another job's packets always hit first.
TEST(AtpIndexTest, OffsetsDifferBetweenJobsAndEpochs) {
  const uint32_t n = 128;
  std::set<uint32_t> offsets;
  for (uint16_t job = 1; job <= 4; ++job) {
    for (uint32_t epoch = 0; epoch < 8; ++epoch) {
      offsets.insert(AtpAggregatorIndex(job, epoch * n, n));
    }
  }
  EXPECT_GT(offsets.size(), 20u);  // 32 draws from 128
}

}  // namespace
}  // namespace swemu
