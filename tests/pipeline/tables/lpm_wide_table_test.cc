// LPM on keys wider than 32 bits (IPv6 addresses): WideLpmTable behind MakeTable.
#include "pipeline/tables/lpm_wide_table.h"

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

// 2001:db8:<a>:<b>:: with host bits `low`.
MatchKey Ip6(uint64_t hi, uint64_t lo = 0) { return Key(lo, hi); }

TableEntry Lpm6(const MatchKey& prefix, uint8_t len, uint64_t port) {
  TableEntry e;
  e.key = prefix;
  e.prefix_len = len;
  e.action = Fwd(port);
  return e;
}

std::unique_ptr<MatchTable> Route6Table(uint32_t size = 64, uint8_t bits = 128) {
  return MustMake(MakeSpec("ipv6_lpm", MatchKind::kLpm, {{"dst_ip6", bits}}, size));
}

EntryHandle Route(MatchTable& t, const MatchKey& addr) { return t.Lookup(addr).handle; }

TEST(WideLpmTableTest, MakeTablePicksItAbove32Bits) {
  EXPECT_NE(dynamic_cast<WideLpmTable*>(Route6Table().get()), nullptr);
  EXPECT_NE(dynamic_cast<WideLpmTable*>(Route6Table(8, 33).get()), nullptr);
  EXPECT_EQ(dynamic_cast<WideLpmTable*>(Route6Table(8, 32).get()), nullptr);
}

TEST(WideLpmTableTest, LongestPrefixWinsAcrossBothWords) {
  auto t = Route6Table();
  const uint64_t net = 0x20010DB800010000;  // 2001:db8:1::/48
  EntryHandle p0 = MustAdd(*t, Lpm6(Ip6(0), 0, 1));
  EntryHandle p48 = MustAdd(*t, Lpm6(Ip6(net), 48, 2));
  EntryHandle p64 = MustAdd(*t, Lpm6(Ip6(net | 5), 64, 3));
  EntryHandle p96 = MustAdd(*t, Lpm6(Ip6(net | 5, 0xABCD'0000'0000'0000), 96, 4));
  EntryHandle p128 = MustAdd(*t, Lpm6(Ip6(net | 5, 0xABCD'0000'0000'0001), 128, 5));
  EXPECT_EQ(Route(*t, Ip6(0x3000'0000'0000'0000, 9)), p0);
  EXPECT_EQ(Route(*t, Ip6(net | 0x77, 9)), p48);
  EXPECT_EQ(Route(*t, Ip6(net | 5, 9)), p64);
  EXPECT_EQ(Route(*t, Ip6(net | 5, 0xABCD'0000'0000'0002)), p96);
  EXPECT_EQ(Route(*t, Ip6(net | 5, 0xABCD'0000'0000'0001)), p128);
  EXPECT_EQ(*t->Lookup(Ip6(net | 5, 1)).action, Fwd(3));
  ASSERT_TRUE(t->Delete(p64).ok());
  EXPECT_EQ(Route(*t, Ip6(net | 5, 9)), p48);
  EXPECT_EQ(Route(*t, Ip6(net | 5, 0xABCD'0000'0000'0002)), p96);
  ASSERT_TRUE(t->Delete(p0).ok());
  EXPECT_FALSE(t->Lookup(Ip6(0x3000'0000'0000'0000, 9)).hit);
  EXPECT_EQ((std::vector<uint8_t>{128, 96, 48}), static_cast<WideLpmTable*>(t.get())->lengths());
}

TEST(WideLpmTableTest, HostBitsAreClearedAndDuplicatesRefused) {
  auto t = Route6Table();
  EntryHandle h = MustAdd(*t, Lpm6(Ip6(0x20010DB800010000, 77), 64, 1));
  EXPECT_EQ(t->Get(h)->key, Ip6(0x20010DB800010000));
  EXPECT_EQ(t->Get(h)->mask, Ip6(~uint64_t{0}));
  EXPECT_EQ(t->Add(Lpm6(Ip6(0x20010DB800010000), 64, 2)).message(),
            "table ipv6_lpm: duplicate key");
  EXPECT_TRUE(t->Add(Lpm6(Ip6(0x20010DB800010000), 63, 2)).ok());  // same bits, other length
  EXPECT_FALSE(t->Add(Lpm6(Ip6(0), 129, 2)).ok());
}

TEST(WideLpmTableTest, NarrowerThan128BitKeysUseTheirTopBits) {
  auto t = Route6Table(8, 40);
  EntryHandle h = MustAdd(*t, Lpm6(Key(0xAB'0000'0000), 8, 1));
  EXPECT_EQ(Route(*t, Key(0xAB'1234'5678)), h);
  EXPECT_FALSE(t->Lookup(Key(0xAC'0000'0000)).hit);
}

TEST(WideLpmTableTest, ClearEmptiesEveryLength) {
  auto t = Route6Table();
  MustAdd(*t, Lpm6(Ip6(0x20010DB800010000), 64, 1));
  t->Clear();
  EXPECT_FALSE(t->Lookup(Ip6(0x20010DB800010000, 1)).hit);
  EXPECT_TRUE(static_cast<WideLpmTable*>(t.get())->lengths().empty());
  EXPECT_TRUE(t->Add(Lpm6(Ip6(0x20010DB800010000), 64, 1)).ok());
}

// Longest live prefix covering `addr` (lowest handle among equals cannot happen: keys unique).
EntryHandle BruteForce(const std::vector<std::pair<EntryHandle, TableEntry>>& live,
                       const MatchKey& addr) {
  EntryHandle best = kNoEntry;
  int best_len = -1;
  for (const auto& [h, e] : live) {
    if ((addr & e.mask) == e.key && e.prefix_len > best_len) {
      best = h;
      best_len = e.prefix_len;
    }
  }
  return best;
}

// Prefixes of every length in a few /32s, so they nest across the two 64-bit words; lookups
// one by one and in bursts against a brute-force search after every add or delete. The large
// declared size makes LookupBatch take its prefetching path; the small one, plain lookups.
class WideLpmRandomTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(WideLpmRandomTest, RandomOperationsMatchBruteForce) {
  auto t = Route6Table(GetParam());
  std::mt19937_64 rng(13);
  auto random_addr = [&] {
    static constexpr uint64_t kBases[] = {0x20010DB8'00000000, 0x20010DB8'FFFF0000,
                                          0xFD00'0000'0000'0000};
    const uint64_t hi = kBases[rng() % 3] | (rng() % 2 == 0 ? rng() & 0xF : rng() & 0xFFFF'FFFF);
    const uint64_t lo = rng() % 2 == 0 ? rng() & 0xFF : rng();
    return Ip6(hi, lo);
  };
  std::vector<EntryHandle> handles;
  for (int op = 0; op < 4000; ++op) {
    if (rng() % 3 != 0 || handles.empty()) {
      const auto len = static_cast<uint8_t>(rng() % 129);
      Result<EntryHandle> h = t->Add(Lpm6(random_addr(), len, rng() % 512));
      if (h.ok()) handles.push_back(*h);
    } else {
      const std::size_t i = rng() % handles.size();
      ASSERT_TRUE(t->Delete(handles[i]).ok());
      handles.erase(handles.begin() + static_cast<std::ptrdiff_t>(i));
    }
    const auto live = t->Dump();
    std::vector<MatchKey> probes;
    for (int probe = 0; probe < 32; ++probe) probes.push_back(random_addr());
    std::vector<LookupResult> batch(probes.size());
    t->LookupBatch(probes.data(), batch.data(), static_cast<uint32_t>(probes.size()));
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const EntryHandle want = BruteForce(live, probes[i]);
      ASSERT_EQ(Route(*t, probes[i]), want) << "op " << op;
      ASSERT_EQ(batch[i].handle, want) << "op " << op;
    }
  }
  for (EntryHandle h : handles) ASSERT_TRUE(t->Delete(h).ok());
  EXPECT_TRUE(static_cast<WideLpmTable*>(t.get())->lengths().empty());
}

INSTANTIATE_TEST_SUITE_P(DeclaredSizes, WideLpmRandomTest, ::testing::Values(2000u, 1u << 16));

}  // namespace
}  // namespace swemu
