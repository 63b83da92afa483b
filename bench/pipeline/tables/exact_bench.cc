// Exact-match lookups: a 104-bit 5-tuple key and a 48-bit MAC key, table sizes 1K, 64K and 1M,
// random hitting keys in bursts of 32; batched (prefetching) and one Lookup at a time.
#include <random>

#include "bench/pipeline/tables/table_bench_util.h"

namespace swemu::bench {
namespace {

MatchKey FiveTuple(std::mt19937_64& rng) {
  return KeyPacker()
      .Push(rng(), 32)
      .Push(rng(), 32)
      .Push(rng(), 16)
      .Push(rng(), 16)
      .Push(rng() % 2 ? 6 : 17, 8)
      .key();
}

Fixture Build(uint32_t size, bool five_tuple) {
  Fixture f;
  std::vector<KeyField> fields = {{"dst_mac", 48}};
  if (five_tuple) fields = {{"src", 32}, {"dst", 32}, {"sport", 16}, {"dport", 16}, {"proto", 8}};
  f.table = MustMakeTable(BenchSpec(MatchKind::kExact, fields, size));
  std::mt19937_64 rng(size);
  std::vector<MatchKey> added;
  while (added.size() < size) {
    TableEntry e;
    e.key = five_tuple ? FiveTuple(rng) : MatchKey{{rng() & 0xFFFF'FFFF'FFFFULL, 0}};
    e.action = NhopAction(added.size());
    if (f.table->Add(e).ok()) added.push_back(e.key);
  }
  for (uint32_t i = 0; i < kKeyCount; ++i) f.keys.push_back(added[rng() % size]);
  return f;
}

void BM_ExactFiveTuple(benchmark::State& state) {
  auto n = static_cast<uint32_t>(state.range(0));
  RunLookups(state, CachedFixture("5tuple", n, [](uint32_t s) { return Build(s, true); }), true);
}
void BM_ExactFiveTupleUnbatched(benchmark::State& state) {
  auto n = static_cast<uint32_t>(state.range(0));
  RunLookups(state, CachedFixture("5tuple", n, [](uint32_t s) { return Build(s, true); }), false);
}
void BM_ExactMac(benchmark::State& state) {
  auto n = static_cast<uint32_t>(state.range(0));
  RunLookups(state, CachedFixture("mac", n, [](uint32_t s) { return Build(s, false); }), true);
}
void BM_ExactMacUnbatched(benchmark::State& state) {
  auto n = static_cast<uint32_t>(state.range(0));
  RunLookups(state, CachedFixture("mac", n, [](uint32_t s) { return Build(s, false); }), false);
}

BENCHMARK(BM_ExactFiveTuple)->Apply(TableSizes);
BENCHMARK(BM_ExactFiveTupleUnbatched)->Apply(TableSizes);
BENCHMARK(BM_ExactMac)->Apply(TableSizes);
BENCHMARK(BM_ExactMacUnbatched)->Apply(TableSizes);

}  // namespace
}  // namespace swemu::bench
