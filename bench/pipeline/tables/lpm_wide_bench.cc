// LPM lookups on 128-bit (IPv6) addresses, table sizes 1K, 64K and 1M prefixes with a routing
// table's mix of lengths (50% /48, 40% /64, 8% /32../47, 2% /128), random addresses that hit:
// WideLpmTable probes each length in use, longest first, so a hit on a /48 costs four probes.
#include <random>

#include "bench/pipeline/tables/table_bench_util.h"

namespace swemu::bench {
namespace {

uint8_t RandomLength(std::mt19937_64& rng) {
  const uint64_t r = rng() % 100;
  if (r < 50) return 48;
  if (r < 90) return 64;
  if (r < 98) return static_cast<uint8_t>(32 + rng() % 16);
  return 128;
}

Fixture Build(uint32_t size) {
  Fixture f;
  f.table = MustMakeTable(BenchSpec(MatchKind::kLpm, {{"dst_ip6", 128}}, size));
  std::mt19937_64 rng(size);
  std::vector<TableEntry> added;
  while (added.size() < size) {
    TableEntry e;
    e.prefix_len = RandomLength(rng);
    // 2001:db8::/32 and up: every prefix in the global unicast space.
    e.key = MatchKey{{rng(), 0x2001'0DB8'0000'0000ULL | (rng() & 0xFFFF'FFFF)}} &
            ~LowBitsMask(128 - e.prefix_len);
    e.action = NhopAction(added.size());
    if (f.table->Add(e).ok()) added.push_back(e);
  }
  for (uint32_t i = 0; i < kKeyCount; ++i) {
    const TableEntry& e = added[rng() % size];
    const MatchKey host = MatchKey{{rng(), rng()}} & LowBitsMask(128 - e.prefix_len);
    f.keys.push_back(e.key | host);
  }
  return f;
}

void BM_LpmIpv6(benchmark::State& state) {
  RunLookups(state, CachedFixture("lpm6", static_cast<uint32_t>(state.range(0)), Build), true);
}

void BM_LpmIpv6Unbatched(benchmark::State& state) {
  RunLookups(state, CachedFixture("lpm6", static_cast<uint32_t>(state.range(0)), Build), false);
}

BENCHMARK(BM_LpmIpv6)->Apply(TableSizes);
BENCHMARK(BM_LpmIpv6Unbatched)->Apply(TableSizes);

}  // namespace
}  // namespace swemu::bench
