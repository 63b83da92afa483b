// The pcn program beside l2l3, the whole switch at burst 32 (parser, ingress, TM, egress,
// deparser), in ns per packet:
//   PcnBackground   - bridged UDP (ECT(0)) toward a port no PCN traffic uses, pcn_job empty: what
//                     pcn costs over l2l3 when nobody uses it;
//   PcnScoped       - the same toward a configured PS: each burst is one worker's START
//                     (threshold 10) and 31 data packets of the worker that announced in the burst
//                     before, the first of which is that burst's arrival. Every packet reads
//                     pcn_pending and pcn_port, and the data packets queued 10 or more deep
//                     (21 of 32) are CE-marked;
//   L2l3SameFrames  - l2l3 on PcnBackground's frames, for the ratio.
// As in l2l3_bench.cc, each frame is re-copied into its buffer per pass and the copy is included.
// The argument is the UDP payload of the data frames: 18 B (64-byte frames) or 512 B (554-byte
// frames, pcn's default burst_min_payload).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/programs/pcn.h"
#include "pipeline/switch/switch.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/pcn.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;
constexpr uint32_t kBursts = 32;  // the frames cycle through 32 bursts, one worker's START each
constexpr PortId kOut = 2;        // every frame leaves here, to the PS or to the other host
constexpr Ipv4Addr kPs = MakeIpv4Addr(10, 0, 2, 1);
constexpr Ipv4Addr kHost = MakeIpv4Addr(10, 0, 2, 9);  // behind kOut too, no PS
constexpr uint32_t kStartThreshold = 10;

using Frames = std::vector<std::vector<uint8_t>>;

template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.message().c_str());
    std::abort();
  }
  return std::move(*r);
}

constexpr Ipv4Addr Worker(uint32_t i) {
  return MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(1 + i % kBursts));
}

std::vector<uint8_t> UdpFrame(Ipv4Addr src, Ipv4Addr dst, uint8_t tos, uint16_t dst_port,
                              std::size_t payload) {
  return FrameBuilder()
      .Eth(*ParseMac("00:00:00:00:02:01"), *ParseMac("00:00:00:00:00:01"))
      .Ipv4(src, dst)
      .Tos(tos)
      .Udp(40000, dst_port)
      .Payload(payload)
      .PadTo(64)
      .Build();
}

Frames Background(std::size_t payload) {
  Frames out;
  for (uint32_t i = 0; i < kBurst * kBursts; ++i) {
    out.push_back(UdpFrame(Worker(i), kHost, kEcnEct0, 7001, payload));
  }
  return out;
}

// Burst b: worker b's START (queue 7, so it leaves first), then worker b - 1's data.
Frames Scoped(std::size_t payload) {
  const uint8_t start = PcnTos{true, false, kStartThreshold}.Encode(kEcnEct0);
  Frames out;
  for (uint32_t b = 0; b < kBursts; ++b) {
    out.push_back(UdpFrame(Worker(b), kPs, start, kPcnDefaultUdpPort, 16));
    for (uint32_t i = 1; i < kBurst; ++i) {
      out.push_back(UdpFrame(Worker(b + kBursts - 1), kPs, kEcnEct0, 7001, payload));
    }
  }
  return out;
}

// One switch on the virtual clock with unshaped ports (the TM's defaults): packet i of a burst
// to one queue sees i packets ahead of it.
class SwitchBench {
 public:
  explicit SwitchBench(const char* program) : pool_(256) {
    SwitchConfig config;
    config.program = program;
    sw_ = Must(Switch::Create(config, pool_, clock_));
    Cmd("table_add dmac forward 00:00:00:00:02:01 => " + std::to_string(kOut));
    for (uint32_t i = 0; i < kBurst; ++i) pkts_.push_back(pool_.Alloc());
  }

  void Cmd(const std::string& line) { Must(sw_->commands().Execute(line)); }
  const PcnCounters& pcn() { return static_cast<PcnProgram&>(sw_->program()).counters(); }

  void Run(benchmark::State& state, const Frames& frames) {
    std::size_t next = 0;
    uint64_t sent = 0;
    Packet* out[kBurst];
    for (auto _ : state) {
      for (Packet* p : pkts_) {
        const std::vector<uint8_t>& frame = frames[next++ % frames.size()];
        std::memcpy(p->data, frame.data(), frame.size());
        p->len = static_cast<uint32_t>(frame.size());
      }
      sw_->ReceiveBurst(pkts_.data(), kBurst, 0);
      const uint32_t n = sw_->TransmitBurst(kOut, out, kBurst);
      for (uint32_t i = 0; i < n; ++i) benchmark::DoNotOptimize(out[i]->data[0]);
      sent += n;
    }
    const auto pkts = static_cast<uint64_t>(state.iterations()) * kBurst;
    state.SetItemsProcessed(static_cast<int64_t>(pkts));
    state.counters["ns_per_pkt"] = benchmark::Counter(
        static_cast<double>(pkts), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    if (sent != pkts || sw_->TotalDrops() != 0) state.SkipWithError("a packet did not leave");
  }

 private:
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> sw_;
  std::vector<Packet*> pkts_;
};

void BM_PcnBackground(benchmark::State& state) {
  SwitchBench b("pcn");
  b.Run(state, Background(static_cast<std::size_t>(state.range(0))));
  if (b.pcn().marked_initial + b.pcn().marked_pcn != 0) state.SkipWithError("background marked");
}

void BM_PcnScoped(benchmark::State& state) {
  SwitchBench b("pcn");
  b.Cmd("table_add pcn_job job 10.0.2.1 => 0");
  b.Run(state, Scoped(static_cast<std::size_t>(state.range(0))));
  const PcnCounters& c = b.pcn();
  state.counters["ce_share"] =
      static_cast<double>(c.marked_pcn) / static_cast<double>(state.iterations() * kBurst);
  // The first burst's data have no announcement yet; arrivals start with the second.
  if (c.starts == 0 || c.marked_pcn == 0 || (state.iterations() > 1 && c.bursts_arrived == 0)) {
    state.SkipWithError("the STARTs took no effect");
  }
}

void BM_L2l3SameFrames(benchmark::State& state) {
  SwitchBench b("l2l3");
  b.Run(state, Background(static_cast<std::size_t>(state.range(0))));
}

// On a shared VM other tenants add noise upwards only: report the minimum of the repetitions
// beside the median (run with --benchmark_repetitions=N).
double Min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
BENCHMARK(BM_PcnBackground)->ArgName("payload")->Arg(18)->Arg(512)->ComputeStatistics("min", Min);
BENCHMARK(BM_PcnScoped)->ArgName("payload")->Arg(512)->ComputeStatistics("min", Min);
BENCHMARK(BM_L2l3SameFrames)->ArgName("payload")->Arg(18)->Arg(512)->ComputeStatistics("min", Min);

}  // namespace
}  // namespace swemu
