// The cost of one ring crossing between lcores ([dpdk] workers > 1, swemu/dpdk/shard.h): Packet
// pointers through a ring of ShardRings itself (rte_ring, RING_F_SP_ENQ | RING_F_SC_DEQ, 4096
// slots), enqueued and dequeued a burst at a time as Scatter, ShardRouter::Flush and DrainPeers
// do, with swemu's own packets (MbufPacketPool: descriptors on their own cache lines, attached to
// mbufs).
//   BM_RingOneThread/burst/recycle   enqueue a burst and dequeue it on one thread.
//   BM_RingTwoCpus/burst/touch/recycle   producer on lcore 0 (CPU 0), consumer on lcore 1 (CPU 1):
//       the ring's indices and slots move between the cores once per burst.
//   touch = 1: the producer writes each packet's metadata and first frame byte before the
//       enqueue (as RX and the parser do), the consumer reads the byte and writes the metadata
//       (as ingress or the TM does), so the packet's lines move too.
//   recycle = 1 (touches too): the producer takes each burst's descriptors and mbufs from the
//       pool (as RX does) and the consumer gives them back (as TX does), through the per-lcore
//       caches (256, swemu's default) and the pool's ring: a packet received on one lcore and
//       sent by another. On one thread, the same work without a second core.
// Both CPUs must be idle for the two-CPU figures to mean anything (the consumer spins on CPU 1).
// EAL: --no-huge, -l 0,1, its own file prefix.
#include <benchmark/benchmark.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "swemu/dpdk/eal.h"
#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/shard.h"

namespace swemu {
namespace {

constexpr uint32_t kMaxBurst = 64;
// More packets than the ring holds, so a packet is reused only after the consumer took it.
constexpr uint32_t kPackets = 2 * ShardRings::kRingSize;
constexpr uint32_t kCache = 256;  // [dpdk] mbuf_cache's default

const std::string& Prefix() {
  static const std::string prefix = "swemu-bench-ring-" + std::to_string(getpid());
  return prefix;
}

void CleanupAtExit() {
  CleanupEal();
  std::error_code ignored;
  std::filesystem::remove_all("/var/run/dpdk/" + Prefix(), ignored);
}

bool EalReady() {
  static const bool ready = [] {
    EalArgs eal{{"--no-huge", "-m", "256", "--no-pci", "-l", "0,1", "--file-prefix", Prefix(),
                 "--log-level=notice"}};
    Status status = InitEal(eal, std::cerr);
    if (!status.ok()) std::cerr << status.message() << "\n";
    std::atexit(CleanupAtExit);
    return status.ok();
  }();
  return ready;
}

// What RX and the parser write on the lcore that received a packet, and what ingress or the TM
// read and write on the next.
void Produce(Packet* pkt, uint32_t i) noexcept {
  pkt->meta.ingress_port = 1;
  pkt->data[0] = static_cast<uint8_t>(i);
}
void Consume(Packet* pkt) noexcept { pkt->meta.egress_spec = pkt->data[0]; }

// RX's part: n packets (descriptor and mbuf) from the pool; false when it is dry.
bool Take(MbufPacketPool& pool, Packet** pkts, uint32_t n) noexcept {
  rte_mbuf* mbufs[kMaxBurst];
  if (rte_pktmbuf_alloc_bulk(pool.mempool(), mbufs, n) != 0) return false;
  if (!pool.GetDescriptors(pkts, n, pool.DescriptorCache())) {
    rte_pktmbuf_free_bulk(mbufs, n);
    return false;
  }
  for (uint32_t i = 0; i < n; ++i) MbufPacketPool::Attach(pkts[i], mbufs[i]);
  return true;
}

// TX's part (Datapath::Emit): descriptors back, then the mbufs, as a device frees them.
void Give(MbufPacketPool& pool, Packet** pkts, uint32_t n) noexcept {
  rte_mbuf* mbufs[kMaxBurst];
  for (uint32_t i = 0; i < n; ++i) mbufs[i] = MbufPacketPool::Detach(pkts[i]);
  pool.PutDescriptors(pkts, n, pool.DescriptorCache());
  rte_pktmbuf_free_bulk(mbufs, n);
}

// Two lcores' rings, a pool and, unless packets are recycled, packets taken from it once.
struct Fixture {
  std::unique_ptr<MbufPacketPool> pool;
  std::unique_ptr<ShardRings> rings;
  std::vector<Packet*> pkts;
  std::string error;

  explicit Fixture(bool recycle) {
    const int socket = static_cast<int>(rte_socket_id());
    Result<std::unique_ptr<MbufPacketPool>> made =
        MbufPacketPool::Create(kPackets + 1023, kCache, socket);
    if (!made.ok()) {
      error = made.message();
      return;
    }
    pool = std::move(*made);
    Result<std::unique_ptr<ShardRings>> created = ShardRings::Create(2, socket, *pool);
    if (!created.ok()) {
      error = created.message();
      return;
    }
    rings = std::move(*created);
    if (recycle) return;
    pkts.resize(kPackets);
    for (uint32_t at = 0; at < kPackets; at += kMaxBurst) {
      if (!Take(*pool, &pkts[at], kMaxBurst)) {
        pkts.resize(at);
        error = "packet pool exhausted";
        return;
      }
    }
  }
  ~Fixture() {
    rings.reset();  // frees what it still holds
    for (Packet* pkt : pkts) pool->Free(pkt);
  }
  rte_ring* ring() const { return rings->ingress(0, 1); }
};

void Report(benchmark::State& state, uint64_t packets) {
  state.SetItemsProcessed(static_cast<int64_t>(packets));
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(packets), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_RingOneThread(benchmark::State& state) {
  if (!EalReady()) return state.SkipWithError("EAL did not start");
  const auto burst = static_cast<uint32_t>(state.range(0));
  const bool recycle = state.range(1) != 0;
  Fixture f(recycle);
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Packet* pkts[kMaxBurst];
  void* objs[kMaxBurst];
  uint32_t at = 0;
  for (auto _ : state) {
    if (recycle) {
      if (!Take(*f.pool, pkts, burst)) return state.SkipWithError("packet pool exhausted");
      for (uint32_t i = 0; i < burst; ++i) Produce(pkts[i], i);
    }
    Packet** in = recycle ? pkts : &f.pkts[at];
    rte_ring_sp_enqueue_burst(f.ring(), reinterpret_cast<void* const*>(in), burst, nullptr);
    const uint32_t n = rte_ring_sc_dequeue_burst(f.ring(), objs, burst, nullptr);
    benchmark::DoNotOptimize(n);
    if (recycle) {
      for (uint32_t i = 0; i < n; ++i) Consume(static_cast<Packet*>(objs[i]));
      Give(*f.pool, reinterpret_cast<Packet**>(objs), n);
    }
    at = (at + burst) % (kPackets - kMaxBurst);
  }
  Report(state, state.iterations() * burst);
}
BENCHMARK(BM_RingOneThread)
    ->Args({1, 0})
    ->Args({32, 0})
    ->Args({32, 1})
    ->ArgNames({"burst", "recycle"});

// The consumer, on lcore 1: dequeues bursts until told to stop, counting what it took.
struct Consumer {
  rte_ring* ring = nullptr;
  MbufPacketPool* recycle = nullptr;  // gives the packets back
  uint32_t burst = 0;
  bool touch = false;
  std::atomic<uint64_t> received{0};
  std::atomic<bool> stop{false};

  static int Run(void* arg) {
    auto& c = *static_cast<Consumer*>(arg);
    void* objs[kMaxBurst];
    uint64_t received = 0;
    while (!c.stop.load(std::memory_order_relaxed)) {
      const uint32_t n = rte_ring_sc_dequeue_burst(c.ring, objs, c.burst, nullptr);
      if (n == 0) {
        rte_pause();
        continue;
      }
      if (c.touch) {
        for (uint32_t i = 0; i < n; ++i) Consume(static_cast<Packet*>(objs[i]));
      }
      if (c.recycle != nullptr) Give(*c.recycle, reinterpret_cast<Packet**>(objs), n);
      received += n;
      c.received.store(received, std::memory_order_release);
    }
    return 0;
  }
};

// Real time over both lcores; after the loop the producer waits for the consumer to catch up
// (at most a ring's worth, outside the timed loop: under 0.1% of a run).
void BM_RingTwoCpus(benchmark::State& state) {
  if (!EalReady()) return state.SkipWithError("EAL did not start");
  const unsigned consumer_lcore = rte_get_next_lcore(rte_lcore_id(), 1, 0);
  if (consumer_lcore >= RTE_MAX_LCORE) return state.SkipWithError("needs EAL -l 0,1");
  const auto burst = static_cast<uint32_t>(state.range(0));
  const bool recycle = state.range(2) != 0;
  const bool touch = recycle || state.range(1) != 0;
  Fixture f(recycle);
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Consumer consumer;
  consumer.ring = f.ring();
  consumer.recycle = recycle ? f.pool.get() : nullptr;
  consumer.burst = burst;
  consumer.touch = touch;
  if (rte_eal_remote_launch(Consumer::Run, &consumer, consumer_lcore) != 0) {
    return state.SkipWithError("lcore 1 is busy");
  }
  Packet* fresh[kMaxBurst];
  uint64_t sent = 0;
  uint32_t at = 0;
  for (auto _ : state) {
    if (recycle) {
      while (!Take(*f.pool, fresh, burst)) rte_pause();  // the consumer still holds them
    }
    Packet** pkts = recycle ? fresh : &f.pkts[at];
    if (touch) {
      for (uint32_t i = 0; i < burst; ++i) Produce(pkts[i], i);
    }
    void* const* in = reinterpret_cast<void* const*>(pkts);
    for (uint32_t done = 0; done < burst;) {  // a full ring: wait, as back-pressure does
      done += rte_ring_sp_enqueue_burst(f.ring(), in + done, burst - done, nullptr);
    }
    sent += burst;
    at = (at + burst) % (kPackets - kMaxBurst);
  }
  while (consumer.received.load(std::memory_order_acquire) < sent) rte_pause();
  consumer.stop.store(true, std::memory_order_relaxed);
  rte_eal_wait_lcore(consumer_lcore);
  Report(state, sent);
}
// Bursts of 1 and 4 too: a burst of 32 received frames splits over N lcores' rings, about 32 / N
// per ring.
BENCHMARK(BM_RingTwoCpus)
    ->Args({1, 0, 0})
    ->Args({32, 0, 0})
    ->Args({1, 1, 0})
    ->Args({4, 1, 0})
    ->Args({32, 1, 0})
    ->Args({32, 1, 1})
    ->ArgNames({"burst", "touch", "recycle"})
    ->UseRealTime();

}  // namespace
}  // namespace swemu
