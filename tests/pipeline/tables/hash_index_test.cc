#include "pipeline/tables/hash_index.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace swemu {
namespace {

// Hashes that crowd into a few home buckets, so buckets overflow into their neighbours (and
// across the wrap-around) and deletions must move overflowed entries back.
uint64_t CrowdedHash(uint32_t index) {
  const uint64_t home = (index % 3 == 0) ? 0 : (index % 3 == 1 ? 5 : 7);  // 8 buckets for 32
  return (Mix64(index) << 32) | home;
}

TEST(HashIndexTest, OverflowedEntriesStayFindableThroughDeletes) {
  HashIndex index(32);
  ASSERT_EQ(index.capacity(), 64u);
  std::mt19937 rng(3);
  std::set<uint32_t> live;
  auto find = [&](uint32_t i) {
    return index.Find(CrowdedHash(i), [&](uint32_t e) { return e == i; });
  };
  for (int op = 0; op < 20000; ++op) {
    uint32_t i = rng() % 64;
    if (live.count(i) != 0) {
      index.Erase(CrowdedHash(i), i, CrowdedHash);
      live.erase(i);
    } else if (live.size() < 32) {
      index.Insert(CrowdedHash(i), i);
      live.insert(i);
    }
    for (uint32_t k = 0; k < 64; ++k) {
      ASSERT_EQ(find(k), live.count(k) != 0 ? k : HashIndex::kNone) << "op " << op << " key " << k;
    }
  }
}

TEST(HashIndexTest, FindTagReturnsTheFirstTagMatch) {
  HashIndex index(16);
  const uint64_t h = 0xABCD'0000'0000'0003ULL;
  index.Insert(h, 7);
  index.Insert(h, 9);  // same tag and home: a collision the caller resolves with Find
  EXPECT_EQ(index.FindTag(h), 7u);
  EXPECT_EQ(index.Find(h, [](uint32_t e) { return e == 9; }), 9u);
  EXPECT_EQ(index.FindTag(0x1234'0000'0000'0003ULL), HashIndex::kNone);
  index.Clear();
  EXPECT_EQ(index.FindTag(h), HashIndex::kNone);
}

}  // namespace
}  // namespace swemu
