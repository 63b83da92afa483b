#include "pipeline/tables/ternary_table.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::Fwd;
using table_testing::Key;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;
using table_testing::TernaryEntry;

std::unique_ptr<MatchTable> Acl(uint32_t size = 64) {
  return MustMake(MakeSpec("acl", MatchKind::kTernary, {{"dst", 16}}, size));
}

EntryHandle Match(MatchTable& t, uint64_t key) { return t.Lookup(Key(key)).handle; }

TEST(TernaryTableTest, LowerPriorityValueWins) {
  auto t = Acl();
  EntryHandle broad = MustAdd(*t, TernaryEntry(0x1200, 0xFF00, 1, 1));
  EntryHandle narrow = MustAdd(*t, TernaryEntry(0x1234, 0xFFFF, 5, 2));
  // BMv2 order: priority 1 beats priority 5 even though the other entry is more specific.
  EXPECT_EQ(Match(*t, 0x1234), broad);
  EXPECT_EQ(*t->Lookup(Key(0x1234)).action, Fwd(1));
  ASSERT_TRUE(t->Delete(broad).ok());
  EXPECT_EQ(Match(*t, 0x1234), narrow);
  EXPECT_FALSE(t->Lookup(Key(0x1299)).hit);
}

TEST(TernaryTableTest, OverlappingMasksPickTheBestMatchingEntry) {
  auto t = Acl();
  EntryHandle low_nibble = MustAdd(*t, TernaryEntry(0x0005, 0x000F, 10, 1));
  EntryHandle high_byte = MustAdd(*t, TernaryEntry(0xAB00, 0xFF00, 20, 2));
  EntryHandle any = MustAdd(*t, TernaryEntry(0, 0, 100, 3));
  EntryHandle exact = MustAdd(*t, TernaryEntry(0xABCD, 0xFFFF, 15, 4));
  EXPECT_EQ(Match(*t, 0xAB05), low_nibble);  // matches all but exact; 10 is best
  EXPECT_EQ(Match(*t, 0xABCD), exact);       // 15 beats 20 and 100
  EXPECT_EQ(Match(*t, 0xAB11), high_byte);
  EXPECT_EQ(Match(*t, 0x1111), any);
  EXPECT_EQ(static_cast<TernaryTable*>(t.get())->masks(), 4u);
}

TEST(TernaryTableTest, EqualPrioritiesGoToTheLowerHandle) {
  auto t = Acl();
  EntryHandle first = MustAdd(*t, TernaryEntry(0x00FF, 0x00FF, 7, 1));
  EntryHandle second = MustAdd(*t, TernaryEntry(0xFF00, 0xFF00, 7, 2));
  EXPECT_EQ(Match(*t, 0xFFFF), first);
  ASSERT_TRUE(t->Delete(first).ok());
  EXPECT_EQ(Match(*t, 0xFFFF), second);
  // The reused handle 0 is lower again.
  EXPECT_EQ(MustAdd(*t, TernaryEntry(0x000F, 0x000F, 7, 3)), first);
  EXPECT_EQ(Match(*t, 0xFFFF), first);
}

TEST(TernaryTableTest, SameValueAndMaskIsADuplicateWhateverThePriority) {
  auto t = Acl();
  MustAdd(*t, TernaryEntry(0x1200, 0xFF00, 1, 1));
  EXPECT_EQ(t->Add(TernaryEntry(0x1200, 0xFF00, 2, 1)).message(), "table acl: duplicate key");
  // Value bits outside the mask are cleared first, so this is the same entry too.
  EXPECT_EQ(t->Add(TernaryEntry(0x12FF, 0xFF00, 3, 1)).message(), "table acl: duplicate key");
  EXPECT_TRUE(t->Add(TernaryEntry(0x1200, 0xFFF0, 1, 1)).ok());
}

TEST(TernaryTableTest, ValueBitsOutsideTheMaskAreCleared) {
  auto t = Acl();
  EntryHandle h = MustAdd(*t, TernaryEntry(0x12FF, 0xFF00, 1, 1));
  EXPECT_EQ(t->Get(h)->key, Key(0x1200));
  EXPECT_EQ(t->Get(h)->mask, Key(0xFF00));
  EXPECT_EQ(t->Get(h)->priority, 1);
  EXPECT_EQ(Match(*t, 0x1277), h);
}

TEST(TernaryTableTest, MaskBeyondTheWidthIsRefused) {
  auto t = Acl();
  EXPECT_EQ(t->Add(TernaryEntry(0, 0x10000, 1, 1)).message(),
            "table acl: mask has bits beyond the declared 16-bit width");
}

TEST(TernaryTableTest, EmptyMaskGroupsAreDropped) {
  auto t = Acl();
  auto* tt = static_cast<TernaryTable*>(t.get());
  EntryHandle a = MustAdd(*t, TernaryEntry(0x1, 0xF, 1, 1));
  EntryHandle b = MustAdd(*t, TernaryEntry(0x2, 0xF, 2, 1));
  MustAdd(*t, TernaryEntry(0x10, 0xF0, 3, 1));
  EXPECT_EQ(tt->masks(), 2u);
  ASSERT_TRUE(t->Delete(a).ok());
  EXPECT_EQ(tt->masks(), 2u);
  ASSERT_TRUE(t->Delete(b).ok());
  EXPECT_EQ(tt->masks(), 1u);
  t->Clear();
  EXPECT_EQ(tt->masks(), 0u);
  EXPECT_FALSE(t->Lookup(Key(0x10)).hit);
}

TEST(TernaryTableTest, ResourcesCountTcamEntriesOfTheDeclaredSize) {
  auto t = Acl(2048);
  EXPECT_EQ(t->TcamEntries(), 2048u);
  EXPECT_EQ(t->SramBytes(), 2048u * (8 + TernaryTable::kEntryOverheadBytes));
}

TEST(TernaryTableTest, HostBytesCountTheIndexRecordsAndMaskGroups) {
  auto t = Acl(2048);
  // 512 buckets of 64 B (2 slots per entry) and a record per declared entry (value, action,
  // hits, priority, group), reserved at creation.
  const uint64_t empty = t->HostBytes();
  EXPECT_GE(empty, 512 * 64 + 2048 * (16 + sizeof(ActionCall) + 8 + 8));
  EXPECT_GT(Acl(4096)->HostBytes(), empty);
  for (int32_t i = 0; i < 64; ++i) {
    MustAdd(*t, TernaryEntry(static_cast<uint64_t>(i) << 8, 0xFF00, 1, 1));
    MustAdd(*t, TernaryEntry(static_cast<uint64_t>(i), 0x00FF, i, 1));
  }
  EXPECT_GT(t->HostBytes(), empty);  // handles, two mask groups and their priorities
}

// Brute force as BMv2 does it: the matching entry with the lowest (priority, handle).
EntryHandle BruteForce(const std::vector<std::pair<EntryHandle, TableEntry>>& live, uint64_t k) {
  EntryHandle best = kNoEntry;
  int32_t best_priority = 0;
  for (const auto& [h, e] : live) {
    if ((k & e.mask.w[0]) != e.key.w[0]) continue;
    if (best == kNoEntry || e.priority < best_priority) {
      best = h;
      best_priority = e.priority;
    }
  }
  return best;
}

// The large declared size makes LookupBatch take its prefetching path; the small one, plain
// lookups.
class TernaryRandomTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(TernaryRandomTest, RandomOperationsMatchBruteForce) {
  auto t = Acl(GetParam());
  std::mt19937 rng(5);
  const uint64_t masks[] = {0xFFFF, 0xFF00, 0x00FF, 0xF0F0, 0x0F00, 0x8001, 0x0000, 0xFFF0};
  std::vector<EntryHandle> handles;
  for (int op = 0; op < 6000; ++op) {
    if (rng() % 3 != 0 || handles.empty()) {
      uint64_t mask = masks[rng() % 8];
      // Few distinct values and priorities: many overlaps and ties.
      Result<EntryHandle> h = t->Add(TernaryEntry(
          rng() % 64 * 0x0411, mask, static_cast<int32_t>(rng() % 12) - 3, rng() % 512));
      if (h.ok()) handles.push_back(*h);
    } else {
      std::size_t i = rng() % handles.size();
      ASSERT_TRUE(t->Delete(handles[i]).ok());
      handles.erase(handles.begin() + static_cast<std::ptrdiff_t>(i));
    }
    auto live = t->Dump();
    std::vector<MatchKey> probes;
    for (int probe = 0; probe < 40; ++probe) {
      probes.push_back(Key(rng() % 64 * 0x0411 ^ (rng() % 4 == 0 ? rng() & 0xFFFF : 0)));
    }
    std::vector<LookupResult> batch(probes.size());
    t->LookupBatch(probes.data(), batch.data(), static_cast<uint32_t>(probes.size()));
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const uint64_t k = probes[i].w[0];
      ASSERT_EQ(Match(*t, k), BruteForce(live, k)) << "op " << op << " key " << std::hex << k;
      ASSERT_EQ(batch[i].handle, BruteForce(live, k)) << "op " << op << " key " << std::hex << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DeclaredSizes, TernaryRandomTest, ::testing::Values(300u, 1u << 16));

TEST(TernaryTableTest, HoldsAMillionEntriesOverAFewMasks) {
  constexpr uint32_t kSize = 1u << 20;
  auto t = MustMake(MakeSpec("acl5", MatchKind::kTernary, {{"src", 32}, {"dst", 32}}, kSize));
  const uint64_t masks[] = {0xFFFFFFFF'FFFFFFFFULL, 0xFFFFFF00'FFFFFFFFULL, 0xFFFFFFFF'FFFFFF00ULL,
                            0xFFFF0000'FFFF0000ULL};
  // Bits 16..31 and 48..49 are in every mask: i / 4 there keeps the values of a mask distinct.
  auto value = [&](uint32_t i) {
    uint64_t j = i / 4;
    uint64_t v = Mix64(i) & ~0x0003'0000'FFFF'0000ULL;
    return (v | (j & 0xFFFF) << 16 | (j >> 16) << 48) & masks[i % 4];
  };
  for (uint32_t i = 0; i < kSize; ++i) {
    uint64_t v = value(i);
    Result<EntryHandle> h = t->Add(TernaryEntry(v, masks[i % 4], static_cast<int32_t>(i % 4), 1));
    ASSERT_TRUE(h.ok()) << i << ": " << h.message();
  }
  for (uint32_t i = 0; i < kSize; i += 101) {
    uint64_t v = value(i);
    LookupResult r = t->Lookup(Key(v));
    ASSERT_TRUE(r.hit);
    ASSERT_LE(t->Get(r.handle)->priority, static_cast<int32_t>(i % 4));
  }
}

}  // namespace
}  // namespace swemu
