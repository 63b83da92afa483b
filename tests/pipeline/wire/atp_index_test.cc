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

// Across an epoch boundary too: any two seqs of one job fewer than N/2 apart take different
// aggregators, so a job's packets in flight never collide with each other.
TEST(AtpIndexTest, SeqsOfOneJobLessThanHalfTheArrayApartNeverCollide) {
  for (const uint32_t n : {128u, 1000u, 16384u}) {
    for (const uint16_t job : {uint16_t{1}, uint16_t{2}, uint16_t{777}}) {
      for (uint32_t boundary : {n, 2 * n, 5 * n}) {
        for (uint32_t a = boundary - n / 2 + 1; a < boundary; ++a) {
          for (uint32_t b = boundary; b < a + n / 2; ++b) {
            ASSERT_NE(AtpAggregatorIndex(job, a, n), AtpAggregatorIndex(job, b, n))
                << "n " << n << " job " << job << " seqs " << a << " " << b;
          }
          if (n > 1000) a += 97;  // sample the large array
        }
      }
    }
  }
}

// Offsets drift apart between jobs from epoch to epoch, so no job keeps a place that another
// job's packets always hit first.
TEST(AtpIndexTest, OffsetsBetweenJobsChangeFromEpochToEpoch) {
  const uint32_t n = 128;
  std::set<uint32_t> gaps;
  for (uint32_t epoch = 0; epoch < 16; ++epoch) {
    const uint32_t a = AtpAggregatorIndex(1, epoch * n, n);
    const uint32_t b = AtpAggregatorIndex(2, epoch * n, n);
    gaps.insert((b + n - a) % n);
  }
  EXPECT_GT(gaps.size(), 8u);
}

}  // namespace
}  // namespace swemu
