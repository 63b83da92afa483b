#pragma once
// Shared pieces of the table benchmarks: a table with the usual actions, a cache so each
// (kind, size) table is built once per process, and the burst-of-32 lookup loop.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/tables/match_table.h"

namespace swemu::bench {

inline constexpr uint32_t kBurst = 32;
inline constexpr uint32_t kKeyCount = 1u << 20;  // random hitting keys, streamed in bursts

inline TableSpec BenchSpec(MatchKind kind, std::vector<KeyField> fields, uint32_t size) {
  TableSpec spec;
  spec.name = "bench";
  spec.kind = kind;
  spec.fields = std::move(fields);
  spec.actions = {{"drop", {}}, {"set_nhop", {{"dmac", 48}, {"port", 9}}}};
  spec.size = size;
  spec.default_action = "drop";
  return spec;
}

inline ActionCall NhopAction(uint64_t i) {
  ActionCall a;
  a.action = 1;
  a.num_params = 2;
  a.params[0] = i & 0xFFFF'FFFF'FFFFULL;
  a.params[1] = i & 0x1FF;
  return a;
}

inline std::unique_ptr<MatchTable> MustMakeTable(const TableSpec& spec) {
  Result<std::unique_ptr<MatchTable>> t = MakeTable(spec);
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", t.message().c_str());
    std::abort();
  }
  return std::move(*t);
}

// A filled table and keys that hit it.
struct Fixture {
  std::unique_ptr<MatchTable> table;
  std::vector<MatchKey> keys;
};

// Builds each (name, size) fixture once: building a 1M-entry table takes about a second and
// Google Benchmark calls a benchmark function several times.
template <typename Build>
Fixture& CachedFixture(const std::string& name, uint32_t size, Build&& build) {
  static std::map<std::pair<std::string, uint32_t>, std::unique_ptr<Fixture>> cache;
  auto& slot = cache[{name, size}];
  if (!slot) slot = std::make_unique<Fixture>(build(size));
  return *slot;
}

// Looks keys up in bursts of 32 (batched, or one Lookup call at a time) and reads each
// result's first action parameter, as the action would. Reports ns per lookup and the table's
// host memory (MatchTable::HostBytes), in all and per entry.
inline void RunLookups(benchmark::State& state, Fixture& f, bool batched) {
  LookupResult out[kBurst];
  uint64_t pos = 0, sum = 0;
  const uint64_t mask = f.keys.size() - 1;  // keys.size() is a power of two
  for (auto _ : state) {
    const MatchKey* keys = &f.keys[pos];
    if (batched) {
      f.table->LookupBatch(keys, out, kBurst);
    } else {
      for (uint32_t i = 0; i < kBurst; ++i) out[i] = f.table->Lookup(keys[i]);
    }
    for (uint32_t i = 0; i < kBurst; ++i) sum += out[i].action->params[1];
    pos = (pos + kBurst) & mask;
  }
  benchmark::DoNotOptimize(sum);
  if (f.table->misses() != 0) state.SkipWithError("a benchmark key missed");
  const auto pkts = static_cast<double>(state.iterations() * kBurst);
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.counters["ns_per_pkt"] =
      benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  const auto host_bytes = static_cast<double>(f.table->HostBytes());
  state.counters["host_bytes"] = benchmark::Counter(host_bytes, benchmark::Counter::kDefaults,
                                                    benchmark::Counter::OneK::kIs1024);
  state.counters["bytes_per_entry"] = host_bytes / f.table->entries();
}

// 1K, 64K and 1M entries: a table that fits L2, one that fits the LLC, one that does not.
inline void TableSizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1 << 10, 1 << 16, 1 << 20}) b->Arg(n);
  b->Unit(benchmark::kNanosecond);
}

}  // namespace swemu::bench
