// Register read-modify-write per packet, bursts of 32 at random indices: a 32-bit counter
// array, and ATP-style aggregators (one index, 64 int32 lanes summed with a packet's payload).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "pipeline/registers/register_array.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;
constexpr uint32_t kIndexCount = 1u << 16;

std::unique_ptr<RegisterArray> MustCreate(const RegisterSpec& spec) {
  Result<std::unique_ptr<RegisterArray>> r = RegisterArray::Create(spec, 0);
  if (!r.ok()) std::abort();
  return std::move(*r);
}

std::vector<uint32_t> RandomIndices(uint32_t size) {
  std::mt19937 rng(1);
  std::vector<uint32_t> out(kIndexCount);
  for (uint32_t& i : out) i = rng() % size;
  return out;
}

void Report(benchmark::State& state) {
  const auto pkts = static_cast<double>(state.iterations() * kBurst);
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.counters["ns_per_pkt"] =
      benchmark::Counter(pkts, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RegisterRmw32(benchmark::State& state) {
  const auto size = static_cast<uint32_t>(state.range(0));
  auto reg = MustCreate({"counts", size, 32});
  const std::vector<uint32_t> indices = RandomIndices(size);
  Packet pkts[kBurst];
  uint32_t pos = 0;
  for (auto _ : state) {
    for (uint32_t i = 0; i < kBurst; ++i) {
      pkts[i].meta.register_access_mask = 0;  // a new pass
      reg->Rmw(pkts[i], indices[(pos + i) & (kIndexCount - 1)],
               [](std::span<uint64_t> c) { c[0] += 1; });
    }
    pos += kBurst;
  }
  benchmark::DoNotOptimize(*reg->Read(0));
  Report(state);
}

void BM_RegisterRmw64Lanes(benchmark::State& state) {
  const auto size = static_cast<uint32_t>(state.range(0));
  auto reg = MustCreate({"aggregators", size, 32, 64});
  const std::vector<uint32_t> indices = RandomIndices(size);
  int32_t payload[64];
  for (int i = 0; i < 64; ++i) payload[i] = i - 32;
  Packet pkts[kBurst];
  uint32_t pos = 0;
  for (auto _ : state) {
    for (uint32_t i = 0; i < kBurst; ++i) {
      pkts[i].meta.register_access_mask = 0;
      reg->Rmw(pkts[i], indices[(pos + i) & (kIndexCount - 1)], [&](std::span<uint64_t> lanes) {
        for (std::size_t l = 0; l < lanes.size(); ++l) {
          lanes[l] = FromInt32(AsInt32(lanes[l]) + payload[l]);
        }
      });
    }
    pos += kBurst;
  }
  benchmark::DoNotOptimize(*reg->Read(0));
  Report(state);
}

BENCHMARK(BM_RegisterRmw32)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(BM_RegisterRmw64Lanes)->Arg(1 << 10)->Arg(1 << 14);

}  // namespace
}  // namespace swemu
