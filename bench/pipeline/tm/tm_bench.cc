// Traffic manager fast path: enqueue a burst, then dequeue it, ns per packet.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "pipeline/core/packet_pool.h"
#include "pipeline/tm/traffic_manager.h"

namespace swemu {
namespace {

constexpr uint32_t kFrameBytes = 64;

struct Bench {
  explicit Bench(const TmConfig& config, std::size_t pool_size = 4096) : pool(pool_size) {
    auto created = TrafficManager::Create(config, pool);
    if (!created.ok()) std::abort();
    tm = std::move(created).value();
  }
  // `count` packets spread over `ports` egress ports and all 8 queues.
  std::vector<Packet*> Packets(int count, int ports) {
    std::vector<Packet*> packets;
    for (int i = 0; i < count; ++i) {
      Packet* pkt = pool.Alloc();
      pkt->Append(kFrameBytes);
      pkt->meta.egress_spec = static_cast<PortId>(i % ports);
      pkt->meta.queue_id = static_cast<uint8_t>(i % kQueuesPerPort);
      packets.push_back(pkt);
    }
    return packets;
  }
  HeapPacketPool pool;
  std::unique_ptr<TrafficManager> tm;
};

void SetRates(benchmark::State& state, int64_t packets) {
  state.SetItemsProcessed(packets);
  state.SetBytesProcessed(packets * kFrameBytes);
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(packets), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Drives `ports` ports: enqueue the burst, then dequeue round robin over the ports until empty.
void RunBursts(benchmark::State& state, const TmConfig& config, int ports, bool advance_time) {
  const int burst = static_cast<int>(state.range(0));
  Bench b(config);
  std::vector<Packet*> packets = b.Packets(burst, ports);
  TimeNs now = 0;
  int64_t total = 0;
  for (auto _ : state) {
    for (Packet* pkt : packets) b.tm->Enqueue(pkt, now);
    int left = burst;
    while (left > 0) {
      for (PortId port = 0; port < ports; ++port) {
        Packet* pkt = b.tm->Dequeue(port, now);
        benchmark::DoNotOptimize(pkt);
        left -= pkt != nullptr;
      }
      if (advance_time) now = b.tm->NextDequeueTime(0, now);
    }
    total += burst;
  }
  SetRates(state, total);
}

void BM_UnshapedPort(benchmark::State& state) { RunBursts(state, TmConfig(), 1, false); }
BENCHMARK(BM_UnshapedPort)->Arg(1)->Arg(8)->Arg(32)->Arg(64)->Arg(256);

// The same with dynamic thresholds on every queue (alpha 1/8, a 16 MB buffer: nothing dropped).
void BM_UnshapedPortAlpha(benchmark::State& state) {
  TmConfig config;
  config.queue.alpha = 0.125;
  RunBursts(state, config, 1, false);
}
BENCHMARK(BM_UnshapedPortAlpha)->Arg(32)->Arg(256);

void BM_EightPortsRoundRobin(benchmark::State& state) {
  TmConfig config;
  config.num_ports = 8;
  RunBursts(state, config, 8, false);
}
BENCHMARK(BM_EightPortsRoundRobin)->Arg(8)->Arg(32)->Arg(256);

void BM_WeightedScheduler(benchmark::State& state) {
  TmConfig config;
  config.scheduler = SchedulerKind::kWeighted;
  config.quantum_bytes = 256;
  RunBursts(state, config, 1, false);
}
BENCHMARK(BM_WeightedScheduler)->Arg(32)->Arg(256);

void BM_ShapedPort(benchmark::State& state) {
  TmConfig config;
  config.port_rate_bps = 100'000'000'000;  // every dequeue also runs the link pacer
  RunBursts(state, config, 1, true);
}
BENCHMARK(BM_ShapedPort)->Arg(32)->Arg(256);

// A burst of 32 for one queue: EnqueueBurst admits it as one run, DequeueBurst takes it as one.
// Arg: the queue's alpha as 2^-arg, 0 = off (the run check with dynamic thresholds on).
void BM_OneQueueRun(benchmark::State& state) {
  TmConfig config;
  if (state.range(0) != 0) config.queue.alpha = 1.0 / double(int64_t{1} << state.range(0));
  Bench b(config);
  std::vector<Packet*> packets = b.Packets(32, 1);
  for (Packet* pkt : packets) pkt->meta.queue_id = 0;
  Packet* out[32];
  int64_t total = 0;
  for (auto _ : state) {
    b.tm->EnqueueBurst(packets.data(), 32, 0);
    uint32_t n = b.tm->DequeueBurst(0, 0, out, 32);
    benchmark::DoNotOptimize(out[0]);
    total += n;
  }
  SetRates(state, total);
}
BENCHMARK(BM_OneQueueRun)->Arg(0)->Arg(3);

// Each original goes to 4 ports: 3 clones plus the original itself (last, on port 3).
void BM_MulticastFourPorts(benchmark::State& state) {
  const int burst = static_cast<int>(state.range(0));
  Bench b(TmConfig(), 8192);
  if (!b.tm->McGroupCreate(1).ok()) std::abort();
  auto node = b.tm->McNodeCreate(0, {0, 1, 2, 3});
  if (!node.ok() || !b.tm->McNodeAssociate(1, *node).ok()) std::abort();
  std::vector<Packet*> packets = b.Packets(burst, 1);
  for (Packet* pkt : packets) pkt->meta.mcast_grp = 1;
  int64_t copies = 0;
  for (auto _ : state) {
    for (Packet* pkt : packets) b.tm->Enqueue(pkt, 0);
    for (PortId port = 0; port < 4; ++port) {
      while (Packet* pkt = b.tm->Dequeue(port, 0)) {
        if (port != 3) b.pool.Free(pkt);
        ++copies;
      }
    }
  }
  SetRates(state, copies);
  state.counters["ns_per_original"] = benchmark::Counter(
      static_cast<double>(copies) / 4, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MulticastFourPorts)->Arg(8)->Arg(32);

}  // namespace
}  // namespace swemu
