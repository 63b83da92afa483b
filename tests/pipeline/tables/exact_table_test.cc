#include "pipeline/tables/exact_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::ExactEntry;
using table_testing::Fwd;
using table_testing::Key;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;

std::unique_ptr<MatchTable> MacTable(uint32_t size) {
  return MustMake(MakeSpec("dmac", MatchKind::kExact, {{"dst_mac", 48}}, size));
}

TEST(ExactTableTest, HitReturnsTheEntryActionAndMissTheDefault) {
  auto t = MacTable(16);
  EntryHandle h = MustAdd(*t, ExactEntry(Key(0x001122334455), 7));
  LookupResult hit = t->Lookup(Key(0x001122334455));
  EXPECT_TRUE(hit.hit);
  EXPECT_EQ(hit.handle, h);
  EXPECT_EQ(*hit.action, Fwd(7));
  LookupResult miss = t->Lookup(Key(0x001122334456));
  EXPECT_FALSE(miss.hit);
  EXPECT_EQ(miss.handle, kNoEntry);
  EXPECT_EQ(miss.action, &t->default_action());
  EXPECT_EQ(miss.action->action, 0);  // drop
}

TEST(ExactTableTest, CountsTableAndEntryHits) {
  auto t = MacTable(16);
  EntryHandle a = MustAdd(*t, ExactEntry(Key(1), 1));
  EntryHandle b = MustAdd(*t, ExactEntry(Key(2), 2));
  for (int i = 0; i < 3; ++i) t->Lookup(Key(1));
  t->Lookup(Key(2));
  t->Lookup(Key(3));
  t->Lookup(Key(4));
  EXPECT_EQ(t->hits(), 4u);
  EXPECT_EQ(t->misses(), 2u);
  EXPECT_EQ(t->EntryHits(a), 3u);
  EXPECT_EQ(t->EntryHits(b), 1u);
  t->ResetCounters();
  EXPECT_EQ(t->hits(), 0u);
  EXPECT_EQ(t->misses(), 0u);
  EXPECT_EQ(t->EntryHits(a), 0u);
}

TEST(ExactTableTest, DuplicateKeyIsRefused) {
  auto t = MacTable(16);
  MustAdd(*t, ExactEntry(Key(5), 1));
  Result<EntryHandle> again = t->Add(ExactEntry(Key(5), 2));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "table dmac: duplicate key");
  EXPECT_EQ(t->entries(), 1u);
  EXPECT_EQ(*t->Lookup(Key(5)).action, Fwd(1));
}

TEST(ExactTableTest, FullTableIsRefused) {
  auto t = MacTable(4);
  for (uint64_t k = 0; k < 4; ++k) MustAdd(*t, ExactEntry(Key(k), 1));
  Result<EntryHandle> fifth = t->Add(ExactEntry(Key(99), 1));
  ASSERT_FALSE(fifth.ok());
  EXPECT_EQ(fifth.message(), "table dmac is full (4 entries)");
  EXPECT_FALSE(t->Lookup(Key(99)).hit);
}

TEST(ExactTableTest, KeyBitsBeyondTheWidthAreRefused) {
  auto t = MacTable(4);
  Result<EntryHandle> r = t->Add(ExactEntry(Key(1ULL << 48), 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "table dmac: key has bits beyond the declared 48-bit width");
}

TEST(ExactTableTest, BadActionCallsAreRefused) {
  auto t = MacTable(4);
  TableEntry e = ExactEntry(Key(1), 512);
  EXPECT_EQ(t->Add(e).message(), "table dmac: parameter port: 512 does not fit in 9 bits");
  e.action.num_params = 2;
  e.action.params[0] = 1;
  EXPECT_EQ(t->Add(e).message(), "table dmac: action fwd expects 1 parameters, got 2");
  e.action.action = 9;
  EXPECT_EQ(t->Add(e).message(), "table dmac: action index 9 out of range (3 actions)");
  EXPECT_EQ(t->entries(), 0u);
}

TEST(ExactTableTest, DeleteThenReAddReusesTheLowestHandle) {
  auto t = MacTable(8);
  EntryHandle a = MustAdd(*t, ExactEntry(Key(10), 1));
  EntryHandle b = MustAdd(*t, ExactEntry(Key(11), 2));
  MustAdd(*t, ExactEntry(Key(12), 3));
  ASSERT_TRUE(t->Delete(b).ok());
  ASSERT_TRUE(t->Delete(a).ok());
  EXPECT_FALSE(t->Lookup(Key(10)).hit);
  EXPECT_FALSE(t->Lookup(Key(11)).hit);
  EXPECT_TRUE(t->Lookup(Key(12)).hit);
  EXPECT_EQ(t->Delete(a).message(), "table dmac: no entry with handle 0");
  EXPECT_EQ(MustAdd(*t, ExactEntry(Key(11), 4)), a);
  EXPECT_EQ(*t->Lookup(Key(11)).action, Fwd(4));
  EXPECT_EQ(t->entries(), 2u);
}

TEST(ExactTableTest, ModifyChangesOnlyTheAction) {
  auto t = MacTable(8);
  EntryHandle h = MustAdd(*t, ExactEntry(Key(10), 1));
  ASSERT_TRUE(t->Modify(h, Fwd(9)).ok());
  EXPECT_EQ(*t->Lookup(Key(10)).action, Fwd(9));
  EXPECT_EQ(t->Modify(h, Fwd(600)).message(),
            "table dmac: parameter port: 600 does not fit in 9 bits");
  EXPECT_EQ(t->Modify(5, Fwd(1)).message(), "table dmac: no entry with handle 5");
}

TEST(ExactTableTest, SetDefaultChangesTheMissAction) {
  auto t = MacTable(8);
  ASSERT_TRUE(t->SetDefault(Fwd(3)).ok());
  EXPECT_EQ(*t->Lookup(Key(1)).action, Fwd(3));
  EXPECT_FALSE(t->SetDefault(Fwd(1000)).ok());
  EXPECT_EQ(t->default_action(), Fwd(3));
}

TEST(ExactTableTest, DumpIsSortedByHandleAndClearEmpties) {
  auto t = MacTable(8);
  for (uint64_t k = 0; k < 5; ++k) MustAdd(*t, ExactEntry(Key(100 + k), k));
  ASSERT_TRUE(t->Delete(2).ok());
  auto dump = t->Dump();
  ASSERT_EQ(dump.size(), 4u);
  EXPECT_EQ(dump[0].first, 0u);
  EXPECT_EQ(dump[2].first, 3u);
  EXPECT_EQ(dump[2].second.key, Key(103));
  EXPECT_EQ(dump[2].second.mask, LowBitsMask(48));
  EXPECT_EQ(dump[2].second.action, Fwd(3));
  t->Clear();
  EXPECT_EQ(t->entries(), 0u);
  EXPECT_TRUE(t->Dump().empty());
  EXPECT_FALSE(t->Lookup(Key(100)).hit);
  EXPECT_EQ(MustAdd(*t, ExactEntry(Key(100), 1)), 0u);
}

TEST(ExactTableTest, WideKeyUsesBothWords) {
  auto t = MustMake(MakeSpec("flows", MatchKind::kExact,
                             {{"src", 32}, {"dst", 32}, {"sport", 16}, {"dport", 16}, {"proto", 8}},
                             64));
  MatchKey k = KeyPacker().Push(1, 32).Push(2, 32).Push(3, 16).Push(4, 16).Push(6, 8).key();
  MatchKey other = KeyPacker().Push(9, 32).Push(2, 32).Push(3, 16).Push(4, 16).Push(6, 8).key();
  ASSERT_EQ(k.w[0], other.w[0]);  // differ only in the high word
  MustAdd(*t, ExactEntry(k, 1));
  EXPECT_TRUE(t->Lookup(k).hit);
  EXPECT_FALSE(t->Lookup(other).hit);
}

TEST(ExactTableTest, BatchLookupMatchesSingleLookups) {
  auto t = MacTable(128);
  for (uint64_t k = 0; k < 100; ++k) MustAdd(*t, ExactEntry(Key(k * 7919), k % 500));
  std::vector<MatchKey> keys;
  for (uint64_t k = 0; k < 70; ++k) keys.push_back(Key(k * 7919 + (k % 3 == 0 ? 1 : 0)));
  std::vector<LookupResult> out(keys.size());
  t->LookupBatch(keys.data(), out.data(), static_cast<uint32_t>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    LookupResult one = t->Lookup(keys[i]);
    EXPECT_EQ(out[i].hit, one.hit) << i;
    EXPECT_EQ(out[i].handle, one.handle) << i;
    EXPECT_EQ(out[i].action, one.action) << i;
  }
}

TEST(ExactTableTest, SramBytesFollowTheDeclaredSize) {
  // 48-bit key = 6 B, widest action set_nhop = 57 bits = 8 B, overhead 4 B.
  EXPECT_EQ(MacTable(1000)->SramBytes(), 1000u * (6 + 8 + 4));
  EXPECT_EQ(MacTable(1000)->TcamEntries(), 0u);
}

TEST(ExactTableTest, HostBytesCountTheIndexAndRecordsOfTheDeclaredSize) {
  // 1024 entries: 256 buckets of 64 B (2 slots per entry) and 1024 records of 64 B, reserved at
  // creation; the handle bookkeeping grows as entries arrive.
  auto t = MacTable(1024);
  const uint64_t empty = t->HostBytes();
  EXPECT_EQ(empty, sizeof(ExactTable) + 256 * 64 + 1024 * 64);
  for (uint64_t i = 0; i < 1000; ++i) MustAdd(*t, ExactEntry(Key(i), 1));
  EXPECT_GE(t->HostBytes(), empty + 1000);
  EXPECT_LT(t->HostBytes(), empty + 4096);
  EXPECT_EQ(MacTable(1 << 16)->HostBytes(), sizeof(ExactTable) + (uint64_t{1} << 16) * 80);
}

// Random adds, deletes and modifies against a std::map, on a table small enough to fill up,
// with keys from a small pool so duplicates, re-adds and probe-chain deletes are frequent.
TEST(ExactTableTest, RandomOperationsMatchAMapOracle) {
  constexpr uint32_t kSize = 512;
  auto t = MustMake(MakeSpec("r", MatchKind::kExact, {{"a", 64}, {"b", 40}}, kSize));
  std::mt19937_64 rng(7);
  std::vector<MatchKey> pool;
  for (int i = 0; i < 700; ++i) pool.push_back(Key(rng(), rng() & ((1ULL << 40) - 1)));
  std::map<std::pair<uint64_t, uint64_t>, std::pair<EntryHandle, uint64_t>> oracle;
  for (int op = 0; op < 40000; ++op) {
    const MatchKey& k = pool[rng() % pool.size()];
    auto id = std::make_pair(k.w[0], k.w[1]);
    auto it = oracle.find(id);
    switch (rng() % 4) {
      case 0:
      case 1: {
        uint64_t port = rng() % 512;
        Result<EntryHandle> h = t->Add(ExactEntry(k, port));
        ASSERT_EQ(h.ok(), it == oracle.end() && oracle.size() < kSize) << op;
        if (h.ok()) oracle[id] = {*h, port};
        break;
      }
      case 2:
        if (it != oracle.end()) {
          ASSERT_TRUE(t->Delete(it->second.first).ok());
          oracle.erase(it);
        }
        break;
      default:
        if (it != oracle.end()) {
          it->second.second = rng() % 512;
          ASSERT_TRUE(t->Modify(it->second.first, Fwd(it->second.second)).ok());
        }
    }
    const MatchKey& probe = pool[rng() % pool.size()];
    auto expect = oracle.find({probe.w[0], probe.w[1]});
    LookupResult r = t->Lookup(probe);
    ASSERT_EQ(r.hit, expect != oracle.end()) << op;
    if (r.hit) {
      ASSERT_EQ(r.handle, expect->second.first);
      ASSERT_EQ(*r.action, Fwd(expect->second.second));
    }
  }
  EXPECT_EQ(t->entries(), oracle.size());
  for (const auto& [id, value] : oracle) {
    EXPECT_EQ(t->Lookup(Key(id.first, id.second)).handle, value.first);
  }
}

TEST(ExactTableTest, HoldsAMillionEntries) {
  constexpr uint32_t kSize = 1u << 20;
  auto t = MacTable(kSize);
  // Multiplying by an odd constant is a bijection modulo 2^48: distinct keys.
  auto mac = [](uint64_t i) { return Key((i * 0x9E3779B97F4BULL) & 0xFFFFFFFFFFFFULL); };
  for (uint64_t i = 0; i < kSize; ++i) {
    ASSERT_TRUE(t->Add(ExactEntry(mac(i), i & 0x1FF)).ok()) << i;
  }
  EXPECT_EQ(t->Add(ExactEntry(Key(1ULL << 47), 1)).message(),
            "table dmac is full (1048576 entries)");
  for (uint64_t i = 0; i < kSize; i += 2) ASSERT_TRUE(t->Delete(static_cast<EntryHandle>(i)).ok());
  for (uint64_t i = 0; i < kSize; ++i) {
    LookupResult r = t->Lookup(mac(i));
    ASSERT_EQ(r.hit, i % 2 == 1) << i;
    if (r.hit) {
      ASSERT_EQ(r.handle, i);
    }
  }
}

}  // namespace
}  // namespace swemu
