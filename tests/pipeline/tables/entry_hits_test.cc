// Batched lookups count each entry's hits as the same lookups one by one would: runs of one
// entry, alternations, misses, and runs that span the 32-key chunks of a batch.
#include <gtest/gtest.h>

#include <ostream>
#include <vector>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::ExactEntry;
using table_testing::Key;
using table_testing::LpmEntry;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;
using table_testing::TernaryEntry;

struct Case {
  const char* name;
  MatchKind kind;
  uint32_t size;  // LPM: 1 << 16 takes the prefetching batch, 64 the plain one
  TableEntry a;   // matches kKeyA only
  TableEntry b;   // matches kKeyB only
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr uint64_t kKeyA = 0x0a000001;
constexpr uint64_t kKeyB = 0x0b000001;
constexpr uint64_t kKeyMiss = 0x0c000001;

class EntryHitsTest : public ::testing::TestWithParam<Case> {};

TEST_P(EntryHitsTest, BatchCountsAsSingleLookups) {
  const Case& c = GetParam();
  auto batched = MustMake(MakeSpec("t", c.kind, {{"addr", 32}}, c.size));
  auto single = MustMake(MakeSpec("t", c.kind, {{"addr", 32}}, c.size));
  const EntryHandle a = MustAdd(*batched, c.a);
  const EntryHandle b = MustAdd(*batched, c.b);
  MustAdd(*single, c.a);
  MustAdd(*single, c.b);

  // A run of 30 a's across the first chunk boundary, alternations, misses, a run of b's.
  std::vector<MatchKey> keys(30, Key(kKeyA));
  for (uint64_t k : {kKeyB, kKeyA, kKeyB, kKeyMiss, kKeyA, kKeyMiss, kKeyMiss}) {
    keys.push_back(Key(k));
  }
  keys.insert(keys.end(), 12, Key(kKeyB));
  keys.push_back(Key(kKeyA));
  std::vector<LookupResult> out(keys.size());
  for (int round = 0; round < 2; ++round) {  // counts keep adding up
    batched->LookupBatch(keys.data(), out.data(), static_cast<uint32_t>(keys.size()));
    for (const MatchKey& key : keys) single->Lookup(key);
  }
  EXPECT_EQ(batched->EntryHits(a), single->EntryHits(a));
  EXPECT_EQ(batched->EntryHits(b), single->EntryHits(b));
  EXPECT_EQ(batched->EntryHits(a), 2u * 33);
  EXPECT_EQ(batched->EntryHits(b), 2u * 14);
  EXPECT_EQ(batched->hits(), 2u * 47);
  EXPECT_EQ(batched->misses(), 2u * 3);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, EntryHitsTest,
    ::testing::Values(
        Case{"Exact", MatchKind::kExact, 64, ExactEntry(Key(kKeyA), 1), ExactEntry(Key(kKeyB), 2)},
        Case{"LpmPrefetching", MatchKind::kLpm, 1u << 16, LpmEntry(0x0a000000, 8, 1),
             LpmEntry(0x0b000000, 8, 2)},
        Case{"LpmPlain", MatchKind::kLpm, 64, LpmEntry(0x0a000000, 8, 1),
             LpmEntry(0x0b000000, 8, 2)},
        Case{"Ternary", MatchKind::kTernary, 64, TernaryEntry(0x0a000000, 0xff000000, 1, 1),
             TernaryEntry(0x0b000000, 0xff000000, 1, 2)}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace swemu
