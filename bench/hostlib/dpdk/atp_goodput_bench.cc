// ATP hosts over the DPDK transport: one worker and its PS on one core, joined by a net_ring port
// that loops TX to RX (no switch: the PS aggregates). Each iteration all-reduces 1M floats
// (4 MB, one BytePS partition); the figure is gradient goodput in Gbps per core, for the worker
// and the PS together (packetise, quantise, send; receive, aggregate, multicast the parameter
// packet; receive it, write the sums), and ns per gradient packet.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench/hostlib/dpdk/bench_eal.h"
#include "hostlib/atp/context.h"
#include "hostlib/dpdk/dpdk_host.h"

namespace swemu {
namespace {

using bench::EalReady;

TimeNs NowNs() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

void BM_AtpWorkerAndPsGoodput(benchmark::State& state) {
  if (!EalReady()) {
    state.SkipWithError("EAL did not start");
    return;
  }
  const auto elements = static_cast<uint16_t>(state.range(0));
  AtpJobSpec spec;
  spec.job_id = 1;
  spec.group_ip = 0xEF010001;  // 239.1.0.1
  spec.elements = elements;
  spec.workers.push_back(AtpHost{"w0", MacAddr::FromU64(0x020000000001), 0x0A000001, "r"});
  spec.ps = AtpHost{"ps", MacAddr::FromU64(0x020000000010), 0x0A000010, "r"};
  auto job = MakeAtpJobConfig(spec);
  DpdkHostConfig config;
  config.ports = {"net_ring0"};
  config.mbufs = 8191;
  config.mbuf_cache = 256;
  auto host = DpdkHost::Open(config);
  if (!job.ok() || !host.ok()) {
    state.SkipWithError("set-up failed");
    return;
  }
  DpdkPortTransport& port = (*host)->port(0);
  Context worker(AtpHostConfig{spec.workers[0].mac, spec.workers[0].ip}, &port);
  Context ps(AtpHostConfig{spec.ps.mac, spec.ps.ip}, &port);
  AtpWorkerOptions options;
  options.lanes = 1;
  if (!worker.JoinJob(*job, options).ok() || !ps.ServeJob(*job).ok()) {
    state.SkipWithError("job set-up failed");
    return;
  }
  constexpr std::size_t kFloats = std::size_t{1} << 20;
  std::vector<float> in(kFloats, 0.001f), out(kFloats);
  const uint64_t ps_mac = spec.ps.mac.ToU64();
  auto deliver = [&](std::span<const uint8_t> frame) {
    MacAddr dst;
    std::copy(frame.begin(), frame.begin() + 6, dst.bytes.begin());
    (dst.ToU64() == ps_mac ? ps : worker).OnFrame(NowNs(), frame);
  };
  uint64_t packets = 0;
  for (auto _ : state) {
    AllReduceJob* call = worker.AllReduce(1, in.data(), out.data(), kFloats);
    while (!call->done()) {
      const TimeNs now = NowNs();
      worker.Pump(now);
      port.Flush();
      port.Poll(deliver, 64);
      if (worker.NextTimer() <= NowNs()) worker.OnTimer(NowNs());
    }
    packets += call->packets();
  }
  const double bytes = 4.0 * kFloats * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["Gbps"] = benchmark::Counter(bytes * 8e-9, benchmark::Counter::kIsRate);
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(packets), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["retx"] = static_cast<double>(worker.worker_stats(1)->retransmissions);
  if (out[kFloats - 1] < 0.0009f || out[kFloats - 1] > 0.0011f) {
    state.SkipWithError("wrong sum");
  }
  if (!(*host)->Close().ok()) state.SkipWithError("mbufs leaked");
}
BENCHMARK(BM_AtpWorkerAndPsGoodput)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(112)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace swemu
