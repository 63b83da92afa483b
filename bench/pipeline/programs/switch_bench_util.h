#pragma once
// A whole switch for the program benchmarks: burst-of-32 passes (parser, ingress, TM, egress,
// deparser) on the virtual clock, reported in ns per packet received. As in l2l3_bench.cc, each
// frame is re-copied into its buffer per pass and the copy is included.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"

namespace swemu::bench {

inline constexpr uint32_t kBurst = 32;

using Frames = std::vector<std::vector<uint8_t>>;

template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.message().c_str());
    std::abort();
  }
  return std::move(*r);
}

// One switch with unshaped ports (the TM's defaults): every burst leaves before the next comes,
// and packet i of a burst to one queue sees the packets of the burst queued there before it.
class SwitchBench {
 public:
  // The program's table entries are the caller's (Cmd); every frame must leave by port `out`,
  // be dropped or be consumed by the program.
  SwitchBench(const char* program, PortId out) : SwitchBench(Config(program), out) {}
  // A config of the caller's (program options, stages); the TM's defaults as above.
  SwitchBench(const SwitchConfig& config, PortId out) : out_(out), pool_(256) {
    sw_ = Must(Switch::Create(config, pool_, clock_));
    for (uint32_t i = 0; i < kBurst; ++i) pkts_.push_back(pool_.Alloc());
  }
  SwitchBench(const SwitchBench&) = delete;  // the switch holds the pool and the clock
  SwitchBench& operator=(const SwitchBench&) = delete;

  static SwitchConfig Config(const char* program) {
    SwitchConfig config;
    config.program = program;
    return config;
  }

  void Cmd(const std::string& line) { Must(sw_->commands().Execute(line)); }
  Switch& sw() { return *sw_; }

  // Untimed setup traffic: `frames` once, in bursts, whatever leaves by port `out` freed.
  void Send(const Frames& frames) {
    Packet* pkts[kBurst];
    Packet* out[kBurst];
    for (std::size_t first = 0; first < frames.size(); first += kBurst) {
      const auto n = static_cast<uint32_t>(std::min<std::size_t>(kBurst, frames.size() - first));
      for (uint32_t i = 0; i < n; ++i) {
        const std::vector<uint8_t>& frame = frames[first + i];
        pkts[i] = pool_.Alloc();
        std::memcpy(pkts[i]->data, frame.data(), frame.size());
        pkts[i]->len = static_cast<uint32_t>(frame.size());
      }
      sw_->ReceiveBurst(pkts, n, 0);
      uint32_t m;
      while ((m = sw_->TransmitBurst(out_, out, kBurst)) != 0) {
        for (uint32_t i = 0; i < m; ++i) pool_.Free(out[i]);
      }
    }
  }

  // Bursts of kBurst frames, cycling through `frames`; sets items/s and ns_per_pkt (per packet
  // received, whether it leaves, is dropped or is consumed) and fails the run when a packet did
  // none of these.
  void Run(benchmark::State& state, const Frames& frames) {
    std::size_t next = 0;
    uint64_t sent = 0;
    const uint64_t gone_before = Gone();
    Packet* out[kBurst];
    for (auto _ : state) {
      for (Packet* p : pkts_) {
        const std::vector<uint8_t>& frame = frames[next++ % frames.size()];
        std::memcpy(p->data, frame.data(), frame.size());
        p->len = static_cast<uint32_t>(frame.size());
      }
      sw_->ReceiveBurst(pkts_.data(), kBurst, 0);
      const uint32_t n = sw_->TransmitBurst(out_, out, kBurst);
      for (uint32_t i = 0; i < n; ++i) benchmark::DoNotOptimize(out[i]->data[0]);
      sent += n;
      if (n != kBurst) {  // the dropped and consumed went back to the pool: one buffer a slot
        for (uint32_t i = n; i < kBurst; ++i) out[i] = pool_.Alloc();
        std::copy(out, out + kBurst, pkts_.begin());
      }
    }
    const auto pkts = static_cast<uint64_t>(state.iterations()) * kBurst;
    state.SetItemsProcessed(static_cast<int64_t>(pkts));
    state.counters["ns_per_pkt"] = benchmark::Counter(
        static_cast<double>(pkts), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    if (sent + Gone() - gone_before != pkts) state.SkipWithError("a packet was lost");
  }

 private:
  // Packets that did not leave: dropped, or consumed by the program (an aggregator's).
  uint64_t Gone() const { return sw_->TotalDrops() + sw_->ConsumedSinceStart(); }

  PortId out_;
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> sw_;
  std::vector<Packet*> pkts_;
};

// On a shared VM other tenants add noise upwards only: report the minimum of the repetitions
// beside the median (run with --benchmark_repetitions=N).
inline double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace swemu::bench
