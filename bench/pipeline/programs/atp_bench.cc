// The atp program through the switch at burst 32, per path of the aggregator, sweeping the
// elements per packet: ns per packet of
//   Aggregate  - a gradient added into a held aggregator and consumed;
//   Complete   - the gradient that completes an aggregator, sent on (TM, egress, UDP checksum);
//   Collision  - a gradient whose aggregator another <job, seq> holds, sent on as a resend;
//   Param      - a parameter packet freeing its aggregator, multicast to 4 ports.
// Each packet is a pool buffer the frame is copied into (as a NIC's DMA leaves it in the cache);
// the figures include that allocation and copy (about 10-20 ns). The untimed setup phases
// (claiming, resetting) are excluded with PauseTiming, amortized over 1024 seqs. The aggregators
// (16384) hold 4 MiB of value lanes at 64 elements (one lane-split array, 256 B per aggregator)
// plus the id, bitmap, count and overflow arrays; each phase touches 1024 of them.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;
constexpr uint32_t kSeqs = 1024;  // aggregators touched per phase
constexpr uint32_t kAggregators = kAtpDefaultAggregators;
constexpr PortId kPs = 4;

class AtpBench {
 public:
  explicit AtpBench(uint16_t elements) : elements_(elements), pool_(4096) {
    SwitchConfig config;
    config.num_ports = 5;
    config.program = "atp";
    config.tm.port_rate_bps = 0;          // unshaped: the virtual clock never has to move
    config.pipeline.ingress_stages = 24;  // 112 elements need more than the default 12 + 12
    config.program_options.Set("elements", std::to_string(elements));
    config.program_options.Set("aggregators", std::to_string(kAggregators));
    sw_ = std::move(*Switch::Create(config, pool_, clock_));
    for (const char* line : {"table_add dmac forward 02:00:00:00:00:10 => 4", "mc_mgrp_create 1",
                             "mc_node_create 0 0 1 2 3", "mc_node_associate 1 0",
                             "table_add atp_job aggregate 1 => 1"}) {
      (void)sw_->commands().Execute(line);
    }
  }

  std::vector<uint8_t> Frame(AtpFields f) const {
    f.num_elements = elements_;
    std::vector<uint8_t> payload(AtpPayloadLen(elements_));
    f.Encode(payload.data());
    for (uint16_t i = 0; i < elements_; ++i) StoreAtpInt(payload.data() + kAtpHeaderLen, i, 1);
    return FrameBuilder()
        .Eth(*ParseMac("02:00:00:00:00:10"), *ParseMac("02:00:00:00:00:01"))
        .Ipv4(0x0A000001, 0x0A000010)
        .Udp(20000, kAtpDefaultUdpPort)
        .Payload(payload)
        .Build();
  }
  static AtpFields Gradient(uint32_t seq, uint8_t worker, uint8_t fan_in, uint16_t job = 1) {
    AtpFields f;
    f.worker_id = worker;
    f.fan_in0 = fan_in;
    f.job_id = job;
    f.seq = seq;
    f.bitmap = uint32_t{1} << worker;
    return f;
  }
  static AtpFields Param(uint32_t seq) {
    AtpFields f;
    f.flags = kAtpFlagParam | kAtpFlagFloat;
    f.job_id = 1;
    f.seq = seq;
    f.bitmap = 0xF;
    return f;
  }

  // One frame per entry of `fields`.
  std::vector<std::vector<uint8_t>> Frames(const std::vector<AtpFields>& fields) const {
    std::vector<std::vector<uint8_t>> out;
    for (const AtpFields& f : fields) out.push_back(Frame(f));
    return out;
  }
  void Send(const std::vector<std::vector<uint8_t>>& frames, bool drain) {
    Packet* pkts[kBurst];
    for (std::size_t first = 0; first < frames.size(); first += kBurst) {
      const uint32_t n =
          static_cast<uint32_t>(std::min<std::size_t>(kBurst, frames.size() - first));
      for (uint32_t i = 0; i < n; ++i) {
        const std::vector<uint8_t>& f = frames[first + i];
        pkts[i] = pool_.Alloc();
        pkts[i]->Append(static_cast<uint32_t>(f.size()));
        std::memcpy(pkts[i]->data, f.data(), f.size());
      }
      sw_->ReceiveBurst(pkts, n, 0);
      if (drain) Drain();
    }
  }
  void Drain() {
    Packet* out[kBurst];
    for (PortId port = 0; port < 5; ++port) {
      uint32_t n;
      while ((n = sw_->TransmitBurst(port, out, kBurst)) != 0) {
        for (uint32_t i = 0; i < n; ++i) pool_.Free(out[i]);
      }
    }
  }
  void ResetAggregators() {
    for (RegisterArray* reg : sw_->resources().Registers()) reg->Reset();
  }
  Switch& sw() { return *sw_; }

 private:
  uint16_t elements_;
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> sw_;
};

std::vector<AtpFields> Sweep(uint32_t seqs, uint8_t worker, uint8_t fan_in) {
  std::vector<AtpFields> out;
  for (uint32_t s = 0; s < seqs; ++s) out.push_back(AtpBench::Gradient(s, worker, fan_in));
  return out;
}

void Report(benchmark::State& state, uint64_t pkts) {
  state.SetItemsProcessed(static_cast<int64_t>(pkts));
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(pkts), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_AtpAggregate(benchmark::State& state) {
  AtpBench b(static_cast<uint16_t>(state.range(0)));
  const auto claim = b.Frames(Sweep(kSeqs, 31, 32));
  std::vector<std::vector<std::vector<uint8_t>>> adds;
  for (uint8_t w = 0; w < 30; ++w) adds.push_back(b.Frames(Sweep(kSeqs, w, 32)));
  uint64_t pkts = 0;
  for (auto _ : state) {
    state.PauseTiming();
    b.ResetAggregators();
    b.Send(claim, false);
    state.ResumeTiming();
    for (const auto& frames : adds) b.Send(frames, false);  // 30 adds per aggregator, no result
    pkts += 30 * kSeqs;
  }
  Report(state, pkts);
}

void BM_AtpComplete(benchmark::State& state) {
  AtpBench b(static_cast<uint16_t>(state.range(0)));
  const auto claim = b.Frames(Sweep(kSeqs, 0, 2));
  const auto complete = b.Frames(Sweep(kSeqs, 1, 2));
  uint64_t pkts = 0;
  for (auto _ : state) {
    state.PauseTiming();
    b.ResetAggregators();
    b.Send(claim, false);
    state.ResumeTiming();
    b.Send(complete, true);
    pkts += kSeqs;
  }
  Report(state, pkts);
}

void BM_AtpCollision(benchmark::State& state) {
  AtpBench b(static_cast<uint16_t>(state.range(0)));
  RegisterArray* id = b.sw().resources().FindRegister("atp_id");
  for (uint32_t i = 0; i < kAggregators; ++i) (void)id->Write(i, AtpAggregatorId(99, i));
  const auto frames = b.Frames(Sweep(kSeqs, 0, 2));
  uint64_t pkts = 0;
  for (auto _ : state) {
    b.Send(frames, true);
    pkts += kSeqs;
  }
  Report(state, pkts);
}

void BM_AtpParam(benchmark::State& state) {
  AtpBench b(static_cast<uint16_t>(state.range(0)));
  const auto claim = b.Frames(Sweep(kSeqs, 0, 2));
  std::vector<AtpFields> params;
  for (uint32_t s = 0; s < kSeqs; ++s) params.push_back(AtpBench::Param(s));
  const auto param = b.Frames(params);
  uint64_t pkts = 0;
  for (auto _ : state) {
    state.PauseTiming();
    b.Send(claim, false);
    state.ResumeTiming();
    b.Send(param, true);  // frees each aggregator; 4 copies leave per packet
    pkts += kSeqs;
  }
  Report(state, pkts);
}

void Elements(benchmark::internal::Benchmark* b) {
  for (int n : {16, 32, 64, 112}) b->Arg(n);
}
BENCHMARK(BM_AtpAggregate)->Apply(Elements);
BENCHMARK(BM_AtpComplete)->Apply(Elements);
BENCHMARK(BM_AtpCollision)->Apply(Elements);
BENCHMARK(BM_AtpParam)->Apply(Elements);

}  // namespace
}  // namespace swemu
