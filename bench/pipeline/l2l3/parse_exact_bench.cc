// Parser plus one exact-match lookup on the destination MAC: the minimum per-packet work of a
// table-driven switch. Bursts of 32 frames, tables of 1K to 1M entries, all lookups hit.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "pipeline/core/packet_pool.h"
#include "pipeline/parser/parser.h"
#include "pipeline/tables/match_table.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

constexpr int kBurst = 32;

void BM_ParseExactMac(benchmark::State& state) {
  const auto entries = static_cast<uint32_t>(state.range(0));
  TableSpec spec{"dmac", MatchKind::kExact, {{"dst_mac", 48}}, {{"forward", {{"port", 16}}}},
                 entries, "forward", {0}};
  std::unique_ptr<MatchTable> table = std::move(*MakeTable(spec));
  std::mt19937_64 rng(3);
  std::vector<uint64_t> macs;
  while (macs.size() < entries) {
    uint64_t mac = rng() & 0xffffffffffffULL;
    TableEntry e;
    e.key = KeyPacker().Push(mac, 48).key();
    e.action = {0, 1, {mac & 3}};
    if (table->Add(e).ok()) macs.push_back(mac);
  }
  HeapPacketPool pool(4096);
  std::vector<Packet*> packets;
  for (int i = 0; i < 1024; ++i) {
    std::vector<uint8_t> frame = FrameBuilder()
                                     .Eth(MacAddr::FromU64(macs[rng() % macs.size()]),
                                          MacAddr::FromU64(0x0a))
                                     .Ipv4(0x0a000001, 0x0a000002)
                                     .Udp(1, 2)
                                     .PadTo(64)
                                     .Build();
    packets.push_back(pool.FromBytes(frame.data(), static_cast<uint32_t>(frame.size())));
  }
  Parser parser{ParserConfig{}};
  std::size_t next = 0;
  uint64_t ports = 0;
  MatchKey keys[kBurst];
  LookupResult results[kBurst];
  for (auto _ : state) {
    // As the switch does: parse the burst, then one batched (prefetching) lookup for it.
    for (int i = 0; i < kBurst; ++i) {
      Packet& p = *packets[(next + i) & 1023];
      p.ResetState();
      parser.Parse(p);
      const uint8_t* eth = p.data + p.hdr.eth;
      keys[i] = KeyPacker().Push((uint64_t{LoadBe16(eth)} << 32) | LoadBe32(eth + 2), 48).key();
    }
    next += kBurst;
    table->LookupBatch(keys, results, kBurst);
    for (int i = 0; i < kBurst; ++i) ports += results[i].action->params[0];
  }
  benchmark::DoNotOptimize(ports);
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kBurst),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseExactMac)->Arg(1024)->Arg(65536)->Arg(1 << 20);

}  // namespace
}  // namespace swemu
