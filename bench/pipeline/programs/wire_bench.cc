// The `wire` port patch through the switch at burst 32: the fixed cost of the pipeline frame
// (per-packet state reset, program calls, TM enqueue and dequeue, deparser) with no table and no
// parser. The real-time datapath adds the mbuf and port costs on top of this. BM_WireCutThrough
// is the same burst when the port is idle and the switch has a cut-through sink (as in real time):
// the run passes the TM without being queued.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;

// The `wire` switch (two unshaped ports) and a burst of 64-byte packets for port 0.
struct WireSwitch {
  WireSwitch() : pool(256) {
    SwitchConfig config;
    config.program = "wire";
    config.num_ports = 2;
    config.tm.port_rate_bps = 0;  // unshaped: plain ports
    sw = std::move(*Switch::Create(config, pool, clock));
    for (uint32_t i = 0; i < kBurst; ++i) {
      pkts.push_back(pool.Alloc());
      pkts.back()->Append(64);
    }
  }
  VirtualClock clock;
  HeapPacketPool pool;
  std::unique_ptr<Switch> sw;
  std::vector<Packet*> pkts;
};

void CountPackets(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.counters["ns_per_pkt"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBurst),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_WirePatch(benchmark::State& state) {
  WireSwitch wire;
  Packet* out[kBurst];
  for (auto _ : state) {
    wire.sw->ReceiveBurst(wire.pkts.data(), kBurst, 0);
    uint32_t n = wire.sw->TransmitBurst(1, out, kBurst);
    benchmark::DoNotOptimize(n);
    std::copy(out, out + n, wire.pkts.begin());
  }
  CountPackets(state);
}
BENCHMARK(BM_WirePatch);

// Keeps what the switch sends, as the datapath's TX would take it.
class KeepingSink final : public CutThroughSink {
 public:
  bool Ready(PortId /*port*/) noexcept override { return true; }
  void Send(PortId /*port*/, Packet** pkts, uint32_t n) noexcept override {
    std::copy(pkts, pkts + n, sent + count);
    count += n;
  }
  Packet* sent[kBurst] = {};
  uint32_t count = 0;
};

void BM_WireCutThrough(benchmark::State& state) {
  WireSwitch wire;
  KeepingSink sink;
  wire.sw->SetCutThroughSink(&sink);
  for (auto _ : state) {
    sink.count = 0;
    wire.sw->ReceiveBurst(wire.pkts.data(), kBurst, 0);
    benchmark::DoNotOptimize(sink.count);
    std::copy(sink.sent, sink.sent + sink.count, wire.pkts.begin());
  }
  if (sink.count != kBurst) state.SkipWithError("the burst did not cut through");
  CountPackets(state);
}
BENCHMARK(BM_WireCutThrough);

}  // namespace
}  // namespace swemu
