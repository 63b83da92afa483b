#include "pipeline/tables/lpm_table.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::Fwd;
using table_testing::Key;
using table_testing::LpmEntry;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;

constexpr uint32_t Ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::unique_ptr<MatchTable> RouteTable(uint32_t size = 64) {
  return MustMake(MakeSpec("ipv4_lpm", MatchKind::kLpm, {{"dst_addr", 32}}, size));
}

EntryHandle Route(MatchTable& t, uint32_t addr) { return t.Lookup(Key(addr)).handle; }

TEST(LpmTableTest, LongestPrefixWins) {
  auto t = RouteTable();
  EntryHandle p8 = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 0), 8, 1));
  EntryHandle p16 = MustAdd(*t, LpmEntry(Ip(10, 1, 0, 0), 16, 2));
  EntryHandle p24 = MustAdd(*t, LpmEntry(Ip(10, 1, 2, 0), 24, 3));
  EntryHandle p28 = MustAdd(*t, LpmEntry(Ip(10, 1, 2, 16), 28, 4));
  EXPECT_EQ(Route(*t, Ip(10, 9, 9, 9)), p8);
  EXPECT_EQ(Route(*t, Ip(10, 1, 9, 9)), p16);
  EXPECT_EQ(Route(*t, Ip(10, 1, 2, 9)), p24);
  EXPECT_EQ(Route(*t, Ip(10, 1, 2, 17)), p28);
  EXPECT_EQ(Route(*t, Ip(10, 1, 2, 32)), p24);
  EXPECT_EQ(*t->Lookup(Key(Ip(10, 1, 2, 31))).action, Fwd(4));
  EXPECT_FALSE(t->Lookup(Key(Ip(11, 0, 0, 1))).hit);
}

TEST(LpmTableTest, ShorterPrefixAddedLaterDoesNotOverrideLongerOnes) {
  auto t = RouteTable();
  EntryHandle p24 = MustAdd(*t, LpmEntry(Ip(10, 1, 2, 0), 24, 3));
  EntryHandle p30 = MustAdd(*t, LpmEntry(Ip(10, 1, 3, 4), 30, 3));
  EntryHandle p8 = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 0), 8, 1));
  EXPECT_EQ(Route(*t, Ip(10, 1, 2, 200)), p24);
  EXPECT_EQ(Route(*t, Ip(10, 1, 3, 5)), p30);
  EXPECT_EQ(Route(*t, Ip(10, 1, 3, 8)), p8);
}

TEST(LpmTableTest, SlashZeroIsTheDefaultRoute) {
  auto t = RouteTable();
  EntryHandle any = MustAdd(*t, LpmEntry(0, 0, 9));
  EntryHandle p16 = MustAdd(*t, LpmEntry(Ip(192, 168, 0, 0), 16, 2));
  EXPECT_EQ(Route(*t, Ip(1, 2, 3, 4)), any);
  EXPECT_EQ(Route(*t, Ip(255, 255, 255, 255)), any);
  EXPECT_EQ(Route(*t, Ip(192, 168, 7, 7)), p16);
  ASSERT_TRUE(t->Delete(any).ok());
  EXPECT_FALSE(t->Lookup(Key(Ip(1, 2, 3, 4))).hit);
}

TEST(LpmTableTest, Slash32MatchesOneAddress) {
  auto t = RouteTable();
  EntryHandle host = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 1), 32, 5));
  EXPECT_EQ(Route(*t, Ip(10, 0, 0, 1)), host);
  EXPECT_FALSE(t->Lookup(Key(Ip(10, 0, 0, 0))).hit);
  EXPECT_FALSE(t->Lookup(Key(Ip(10, 0, 0, 2))).hit);
}

TEST(LpmTableTest, DeleteRestoresTheCoveringPrefixAtEveryLevel) {
  auto t = RouteTable();
  EntryHandle p8 = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 0), 8, 1));
  EntryHandle p12 = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 0), 12, 1));
  EntryHandle p20 = MustAdd(*t, LpmEntry(Ip(10, 0, 16, 0), 20, 1));
  EntryHandle p27 = MustAdd(*t, LpmEntry(Ip(10, 0, 16, 32), 27, 1));
  const uint32_t probe = Ip(10, 0, 16, 33);
  EXPECT_EQ(Route(*t, probe), p27);
  ASSERT_TRUE(t->Delete(p27).ok());
  EXPECT_EQ(Route(*t, probe), p20);
  ASSERT_TRUE(t->Delete(p20).ok());
  EXPECT_EQ(Route(*t, probe), p12);
  ASSERT_TRUE(t->Delete(p12).ok());
  EXPECT_EQ(Route(*t, probe), p8);
  ASSERT_TRUE(t->Delete(p8).ok());
  EXPECT_FALSE(t->Lookup(Key(probe)).hit);
}

TEST(LpmTableTest, DeletingACoveringPrefixKeepsTheLongerOnes) {
  auto t = RouteTable();
  EntryHandle p8 = MustAdd(*t, LpmEntry(Ip(10, 0, 0, 0), 8, 1));
  EntryHandle p24 = MustAdd(*t, LpmEntry(Ip(10, 0, 1, 0), 24, 2));
  ASSERT_TRUE(t->Delete(p8).ok());
  EXPECT_EQ(Route(*t, Ip(10, 0, 1, 1)), p24);
  EXPECT_FALSE(t->Lookup(Key(Ip(10, 0, 2, 1))).hit);
}

TEST(LpmTableTest, HostBitsAreClearedAndCountForDuplicates) {
  auto t = RouteTable();
  EntryHandle h = MustAdd(*t, LpmEntry(Ip(10, 1, 2, 3), 16, 1));
  EXPECT_EQ(t->Get(h)->key, Key(Ip(10, 1, 0, 0)));
  EXPECT_EQ(t->Get(h)->mask, Key(0xFFFF0000));
  EXPECT_EQ(t->Add(LpmEntry(Ip(10, 1, 0, 0), 16, 2)).message(), "table ipv4_lpm: duplicate key");
  EXPECT_TRUE(t->Add(LpmEntry(Ip(10, 1, 0, 0), 17, 2)).ok());
}

TEST(LpmTableTest, PrefixLongerThanTheKeyIsRefused) {
  auto t = RouteTable();
  EXPECT_EQ(t->Add(LpmEntry(0, 33, 1)).message(),
            "table ipv4_lpm: prefix length 33 exceeds the 32-bit key");
}

TEST(LpmTableTest, NarrowKeysAreLeftAligned) {
  auto t = MustMake(MakeSpec("narrow", MatchKind::kLpm, {{"id", 20}}, 16));
  EntryHandle p4 = MustAdd(*t, LpmEntry(0xA0000, 4, 1));
  EntryHandle p20 = MustAdd(*t, LpmEntry(0xA1234, 20, 2));
  EntryHandle p12 = MustAdd(*t, LpmEntry(0xA1200, 12, 3));
  EXPECT_EQ(Route(*t, 0xA1234), p20);
  EXPECT_EQ(Route(*t, 0xA1235), p12);
  EXPECT_EQ(Route(*t, 0xA5555), p4);
  EXPECT_FALSE(t->Lookup(Key(0xB0000)).hit);
  EXPECT_EQ(t->Get(p12)->key, Key(0xA1200));
  EXPECT_EQ(t->Add(LpmEntry(1u << 20, 20, 1)).message(),
            "table narrow: key has bits beyond the declared 20-bit width");
}

TEST(LpmTableTest, ResourcesCountTcamEntriesOfTheDeclaredSize) {
  auto t = RouteTable(4096);
  EXPECT_EQ(t->TcamEntries(), 4096u);
  EXPECT_EQ(t->SramBytes(), 4096u * (8 + LpmTable::kEntryOverheadBytes));
}

TEST(LpmTableTest, HostBytesGrowWithTheTrieChunksPrefixesNeed) {
  auto t = RouteTable(4096);
  // The first level (65536 words) and a record per declared entry, before any prefix.
  const uint64_t empty = t->HostBytes();
  EXPECT_GE(empty, (uint64_t{1} << 16) * 4 + 4096 * (sizeof(ActionCall) + 8));
  EXPECT_GT(RouteTable(8192)->HostBytes(), empty);
  // A /24 in each of 100 distinct /16s takes one 1 KiB chunk each.
  for (uint32_t i = 0; i < 100; ++i) MustAdd(*t, LpmEntry(Ip(10, i, 7, 0), 24, 1));
  EXPECT_EQ(static_cast<LpmTable*>(t.get())->trie_chunks(), 100u);
  EXPECT_GE(t->HostBytes(), empty + 100 * 1024);
}

// Brute force: the live prefix with the longest length containing the address.
EntryHandle BruteForce(const std::vector<std::pair<EntryHandle, TableEntry>>& live, uint32_t a) {
  EntryHandle best = kNoEntry;
  int best_len = -1;
  for (const auto& [h, e] : live) {
    uint32_t mask = e.prefix_len == 0 ? 0 : ~uint32_t{0} << (32 - e.prefix_len);
    if ((a & mask) == e.key.w[0] && e.prefix_len > best_len) {
      best = h;
      best_len = e.prefix_len;
    }
  }
  return best;
}

// Prefixes of every length clustered in a few /12s so they nest at all three trie levels. The
// large declared size makes LookupBatch take its prefetching path; the small one, plain lookups.
class LpmRandomTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(LpmRandomTest, RandomOperationsMatchBruteForce) {
  auto t = RouteTable(GetParam());
  auto* lpm = static_cast<LpmTable*>(t.get());
  std::mt19937 rng(11);
  auto random_addr = [&] {
    static constexpr uint32_t kBases[] = {Ip(10, 0, 0, 0), Ip(10, 16, 0, 0), Ip(172, 16, 0, 0)};
    uint32_t spread = 1u << (rng() % 2 == 0 ? 12 : 20);
    return kBases[rng() % 3] | (rng() % spread);
  };
  std::vector<EntryHandle> handles;
  for (int op = 0; op < 6000; ++op) {
    if (rng() % 3 != 0 || handles.empty()) {
      uint8_t len = static_cast<uint8_t>(rng() % 33);
      uint32_t addr = random_addr() & (len == 0 ? 0 : ~uint32_t{0} << (32 - len));
      Result<EntryHandle> h = t->Add(LpmEntry(addr, len, rng() % 512));
      if (h.ok()) handles.push_back(*h);
    } else {
      std::size_t i = rng() % handles.size();
      ASSERT_TRUE(t->Delete(handles[i]).ok());
      handles.erase(handles.begin() + static_cast<std::ptrdiff_t>(i));
    }
    auto live = t->Dump();
    std::vector<MatchKey> probes;
    for (int probe = 0; probe < 40; ++probe) probes.push_back(Key(random_addr()));
    std::vector<LookupResult> batch(probes.size());
    const uint64_t lookups = t->hits() + t->misses();
    t->LookupBatch(probes.data(), batch.data(), static_cast<uint32_t>(probes.size()));
    ASSERT_EQ(t->hits() + t->misses(), lookups + probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const auto a = static_cast<uint32_t>(probes[i].w[0]);
      ASSERT_EQ(Route(*t, a), BruteForce(live, a)) << "op " << op << " addr " << std::hex << a;
      ASSERT_EQ(batch[i].handle, BruteForce(live, a)) << "op " << op << " addr " << std::hex << a;
    }
  }
  for (EntryHandle h : handles) ASSERT_TRUE(t->Delete(h).ok());
  EXPECT_EQ(lpm->trie_chunks(), 0u);  // every chunk folded back once its prefixes are gone
}

INSTANTIATE_TEST_SUITE_P(DeclaredSizes, LpmRandomTest, ::testing::Values(400u, 1u << 16));

TEST(LpmTableTest, HoldsAMillionPrefixes) {
  constexpr uint32_t kSize = 1u << 20;
  auto t = RouteTable(kSize);
  // Distinct /24s spread over 10.0.0.0/8 .. 25.0.0.0/8 (a routing table's typical length).
  auto prefix = [](uint32_t i) { return Ip(10, 0, 0, 0) + ((i * 2654435761u) & 0xFFFFF) * 256; };
  for (uint32_t i = 0; i < kSize; ++i) {
    ASSERT_TRUE(t->Add(LpmEntry(prefix(i), 24, i & 0x1FF)).ok()) << i;
  }
  for (uint32_t i = 0; i < kSize; i += 97) ASSERT_EQ(Route(*t, prefix(i) + 77), i);
}

}  // namespace
}  // namespace swemu
