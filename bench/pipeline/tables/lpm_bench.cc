// LPM lookups on 32-bit addresses, table sizes 1K, 64K and 1M prefixes with a routing-table-like
// mix of lengths (60% /24, 30% /17../23, 8% /8../16, 2% /25../32), random addresses that hit.
#include <random>

#include "bench/pipeline/tables/table_bench_util.h"

namespace swemu::bench {
namespace {

uint8_t RandomLength(std::mt19937_64& rng) {
  uint64_t r = rng() % 100;
  if (r < 60) return 24;
  if (r < 90) return static_cast<uint8_t>(17 + rng() % 7);
  if (r < 98) return static_cast<uint8_t>(8 + rng() % 9);
  return static_cast<uint8_t>(25 + rng() % 8);
}

Fixture Build(uint32_t size) {
  Fixture f;
  f.table = MustMakeTable(BenchSpec(MatchKind::kLpm, {{"dst_addr", 32}}, size));
  std::mt19937_64 rng(size);
  std::vector<TableEntry> added;
  while (added.size() < size) {
    TableEntry e;
    e.prefix_len = RandomLength(rng);
    uint32_t mask = e.prefix_len == 32 ? ~uint32_t{0} : ~(~uint32_t{0} >> e.prefix_len);
    e.key.w[0] = static_cast<uint32_t>(rng()) & mask;
    e.action = NhopAction(added.size());
    if (f.table->Add(e).ok()) added.push_back(e);
  }
  for (uint32_t i = 0; i < kKeyCount; ++i) {
    const TableEntry& e = added[rng() % size];
    uint32_t host = e.prefix_len == 32 ? 0 : static_cast<uint32_t>(rng()) >> e.prefix_len;
    f.keys.push_back(MatchKey{{e.key.w[0] | host, 0}});
  }
  return f;
}

void BM_LpmIpv4(benchmark::State& state) {
  RunLookups(state, CachedFixture("lpm", static_cast<uint32_t>(state.range(0)), Build), true);
}

void BM_LpmIpv4Unbatched(benchmark::State& state) {
  RunLookups(state, CachedFixture("lpm", static_cast<uint32_t>(state.range(0)), Build), false);
}

BENCHMARK(BM_LpmIpv4)->Apply(TableSizes);
BENCHMARK(BM_LpmIpv4Unbatched)->Apply(TableSizes);

}  // namespace
}  // namespace swemu::bench
