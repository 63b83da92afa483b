// Ternary lookups on a 64-bit (src, dst) key with 8 distinct masks, table sizes 1K, 64K and 1M,
// random keys that hit. Priorities follow specificity (as in an ACL), so a lookup stops after the
// mask group of its match: on average it visits half the groups.
#include <random>

#include "bench/pipeline/tables/table_bench_util.h"

namespace swemu::bench {
namespace {

constexpr uint64_t kMasks[] = {
    0xFFFFFFFF'FFFFFFFFULL, 0xFFFFFFFF'FFFFFF00ULL, 0xFFFFFF00'FFFFFFFFULL, 0xFFFFFF00'FFFFFF00ULL,
    0xFFFF0000'FFFFFF00ULL, 0xFFFFFF00'FFFF0000ULL, 0xFFFF0000'FFFF0000ULL, 0xFF000000'FFFF0000ULL,
};

Fixture Build(uint32_t size) {
  Fixture f;
  f.table = MustMakeTable(BenchSpec(MatchKind::kTernary, {{"src", 32}, {"dst", 32}}, size));
  std::mt19937_64 rng(size);
  std::vector<TableEntry> added;
  while (added.size() < size) {
    TableEntry e;
    uint32_t group = static_cast<uint32_t>(rng() % 8);
    e.mask.w[0] = kMasks[group];
    e.key.w[0] = rng() & e.mask.w[0];
    e.priority = static_cast<int32_t>(group * 1000 + rng() % 1000);
    e.action = NhopAction(added.size());
    if (f.table->Add(e).ok()) added.push_back(e);
  }
  for (uint32_t i = 0; i < kKeyCount; ++i) {
    const TableEntry& e = added[rng() % size];
    f.keys.push_back(MatchKey{{e.key.w[0] | (rng() & ~e.mask.w[0]), 0}});
  }
  return f;
}

void BM_Ternary8Masks(benchmark::State& state) {
  RunLookups(state, CachedFixture("ternary", static_cast<uint32_t>(state.range(0)), Build), true);
}

void BM_Ternary8MasksUnbatched(benchmark::State& state) {
  RunLookups(state, CachedFixture("ternary", static_cast<uint32_t>(state.range(0)), Build), false);
}

BENCHMARK(BM_Ternary8Masks)->Apply(TableSizes);
BENCHMARK(BM_Ternary8MasksUnbatched)->Apply(TableSizes);

}  // namespace
}  // namespace swemu::bench
