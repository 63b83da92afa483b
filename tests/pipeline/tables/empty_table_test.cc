// An empty table answers its default action without looking (MatchTable::Lookup, LookupBatch
// and MissAllIfEmpty), for every kind: the answer and the miss counters must be those of a real
// miss, and the table must match again as soon as it holds an entry.
#include <gtest/gtest.h>

#include <vector>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::ExactEntry;
using table_testing::Fwd;
using table_testing::Key;
using table_testing::LpmEntry;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;
using table_testing::TernaryEntry;

struct Kind {
  MatchKind kind;
  TableEntry entry;  // matches key 0x0a000001 and not key 0x0b000001
};

class EmptyTableTest : public ::testing::TestWithParam<Kind> {};

constexpr uint64_t kHitKey = 0x0a000001;
constexpr uint64_t kMissKey = 0x0b000001;

TEST_P(EmptyTableTest, AnswersTheDefaultActionUntilAnEntryIsAdded) {
  auto t = MustMake(MakeSpec("t", GetParam().kind, {{"addr", 32}}, 64));
  ASSERT_TRUE(t->SetDefault(Fwd(9)).ok());  // a default that differs from a zeroed action

  std::vector<MatchKey> keys(40, Key(kHitKey));
  std::vector<LookupResult> out(keys.size());
  t->LookupBatch(keys.data(), out.data(), static_cast<uint32_t>(keys.size()));
  for (const LookupResult& r : out) {
    EXPECT_FALSE(r.hit);
    EXPECT_EQ(r.handle, kNoEntry);
    EXPECT_EQ(r.action, &t->default_action());
    EXPECT_EQ(*r.action, Fwd(9));
  }
  EXPECT_EQ(t->Lookup(Key(kHitKey)).action, &t->default_action());
  EXPECT_EQ(t->misses(), 41u);
  EXPECT_EQ(t->hits(), 0u);

  EntryHandle h = MustAdd(*t, GetParam().entry);
  t->LookupBatch(keys.data(), out.data(), static_cast<uint32_t>(keys.size()));
  for (const LookupResult& r : out) {
    EXPECT_TRUE(r.hit);
    EXPECT_EQ(r.handle, h);
    EXPECT_EQ(*r.action, Fwd(3));
  }
  EXPECT_FALSE(t->Lookup(Key(kMissKey)).hit);
  EXPECT_EQ(t->hits(), 40u);
  EXPECT_EQ(t->misses(), 42u);
  EXPECT_EQ(t->EntryHits(h), 40u);

  // Empty again, by delete and by clear.
  ASSERT_TRUE(t->Delete(h).ok());
  EXPECT_FALSE(t->Lookup(Key(kHitKey)).hit);
  MustAdd(*t, GetParam().entry);
  EXPECT_TRUE(t->Lookup(Key(kHitKey)).hit);
  t->Clear();
  t->LookupBatch(keys.data(), out.data(), 1);
  EXPECT_FALSE(out[0].hit);
  EXPECT_EQ(t->misses(), 44u);
}

// MissAllIfEmpty: a program's way to skip building keys for an empty table.
TEST_P(EmptyTableTest, MissAllIfEmptyCountsMissesOnlyWhileEmpty) {
  auto t = MustMake(MakeSpec("t", GetParam().kind, {{"addr", 32}}, 64));
  ASSERT_TRUE(t->SetDefault(Fwd(9)).ok());
  const ActionCall* all = t->MissAllIfEmpty(32);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all, &t->default_action());
  EXPECT_EQ(*all, Fwd(9));
  EXPECT_EQ(t->misses(), 32u);

  MustAdd(*t, GetParam().entry);
  EXPECT_EQ(t->MissAllIfEmpty(32), nullptr);
  EXPECT_EQ(t->misses(), 32u);
  EXPECT_EQ(t->hits(), 0u);
  t->Clear();
  EXPECT_NE(t->MissAllIfEmpty(1), nullptr);
  EXPECT_EQ(t->misses(), 33u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EmptyTableTest,
                         ::testing::Values(Kind{MatchKind::kExact, ExactEntry(Key(kHitKey), 3)},
                                           Kind{MatchKind::kLpm, LpmEntry(0x0a000000, 8, 3)},
                                           Kind{MatchKind::kTernary,
                                                TernaryEntry(0x0a000000, 0xff000000, 1, 3)}),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           switch (info.param.kind) {
                             case MatchKind::kExact:
                               return "Exact";
                             case MatchKind::kLpm:
                               return "Lpm";
                             case MatchKind::kTernary:
                               return "Ternary";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace swemu
