// DpdkPortTransport's own cost per frame: Send (allocate an mbuf, copy the frame) for a burst of
// 32, Flush, then Poll the 32 back, on a net_ring port (it loops TX to RX; no peer process, no
// swemu), so the figure is the host library's part of a frame's trip. 64 B frames and 318 B
// (an ATP packet carrying 64 elements).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "bench/hostlib/dpdk/bench_eal.h"
#include "hostlib/dpdk/dpdk_host.h"

namespace swemu {
namespace {

using bench::EalReady;

void BM_SendFlushPoll(benchmark::State& state) {
  if (!EalReady()) {
    state.SkipWithError("EAL did not start");
    return;
  }
  DpdkHostConfig config;
  config.ports = {"net_ring0"};
  config.mbufs = 1023;
  config.mbuf_cache = 64;
  auto host = DpdkHost::Open(config);
  if (!host.ok()) {
    state.SkipWithError(host.message().c_str());
    return;
  }
  DpdkPortTransport& port = (*host)->port(0);
  std::vector<uint8_t> frame(static_cast<std::size_t>(state.range(0)), 0x5a);
  uint64_t bytes_seen = 0;
  auto on_frame = [&](std::span<const uint8_t> f) { bytes_seen += f[f.size() - 1]; };
  constexpr uint32_t kBurst = DpdkPortTransport::kBurst;
  for (auto _ : state) {
    for (uint32_t i = 0; i < kBurst; ++i) port.Send(frame);
    port.Flush();
    benchmark::DoNotOptimize(port.Poll(on_frame, kBurst));
  }
  benchmark::DoNotOptimize(bytes_seen);
  const int64_t frames = static_cast<int64_t>(state.iterations()) * kBurst;
  state.SetItemsProcessed(frames);
  state.SetBytesProcessed(frames * state.range(0));
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(frames), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  if (port.counters().rx_frames != port.counters().tx_frames) {
    state.SkipWithError("frames were lost on the ring");
  }
  if (!(*host)->Close().ok()) state.SkipWithError("mbufs leaked");
}
BENCHMARK(BM_SendFlushPoll)->Arg(64)->Arg(318)->Arg(1500);

}  // namespace
}  // namespace swemu
