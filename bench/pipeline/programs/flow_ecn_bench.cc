// The flow_ecn program beside l2l3, the whole switch at burst 32 (parser, ingress, TM, egress,
// deparser), in ns per packet received:
//   FlowEcnCounting        - bridged UDP frames of 256 flows, ECT(0), with a threshold no flow
//                            reaches: l2l3 plus one counter read-modify-write per packet;
//   FlowEcnMarking         - the same frames with threshold 0: every packet is also CE-marked
//                            (an incremental checksum update); reports the marked share;
//   L2l3SameFramesFlowEcn  - l2l3 on the same frames, for the ratio (named apart from the other
//                            programs' L2l3SameFrames, in the same binary).
// The argument is the UDP payload: 18 B (64-byte frames) or 512 B (554-byte frames), as in
// dlcp_bench.cc.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/pipeline/programs/switch_bench_util.h"
#include "pipeline/tm/traffic_manager.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"

namespace swemu::bench {
namespace {

constexpr uint32_t kFlows = 256;
constexpr PortId kOut = 2;

// kFlows frames, one per flow (the UDP source port), cycled burst after burst.
Frames FlowFrames(std::size_t payload) {
  Frames out;
  for (uint32_t i = 0; i < kFlows; ++i) {
    out.push_back(FrameBuilder()
                      .Eth(*ParseMac("00:00:00:00:02:01"), *ParseMac("00:00:00:00:00:01"))
                      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 2, 9))
                      .Tos(MakeTos(0, kEcnEct0))
                      .Udp(static_cast<uint16_t>(10000 + i), 7001)
                      .Payload(payload)
                      .PadTo(64)
                      .Build());
  }
  return out;
}

SwitchConfig Config(const char* program, uint32_t threshold) {
  SwitchConfig config = SwitchBench::Config(program);
  if (std::string(program) == "flow_ecn") {
    config.program_options.Set("threshold", std::to_string(threshold));
    config.program_options.Set("ecn", "false");  // only flow_ecn marks
  }
  return config;
}

uint64_t Marked(const TrafficManager& tm) {
  uint64_t marked = 0;
  for (int q = 0; q < kQueuesPerPort; ++q) marked += tm.queue_counters(kOut, q).marked;
  return marked;
}

// Runs `program` on FlowFrames bridged to kOut; returns the share of packets marked.
double Run(benchmark::State& state, const char* program, uint32_t threshold) {
  SwitchBench b(Config(program, threshold), kOut);
  b.Cmd("table_add dmac forward 00:00:00:00:02:01 => " + std::to_string(kOut));
  b.Run(state, FlowFrames(static_cast<std::size_t>(state.range(0))));
  if (b.sw().TotalDrops() != 0) state.SkipWithError("a packet was dropped");
  return static_cast<double>(Marked(b.sw().tm())) /
         static_cast<double>(state.iterations() * kBurst);
}

void BM_FlowEcnCounting(benchmark::State& state) {
  if (Run(state, "flow_ecn", UINT32_MAX - 1) != 0) state.SkipWithError("a packet was marked");
}

void BM_FlowEcnMarking(benchmark::State& state) {
  const double share = Run(state, "flow_ecn", 0);
  state.counters["marked_share"] = share;
  if (share != 1) state.SkipWithError("not every packet was marked");
}

void BM_L2l3SameFramesFlowEcn(benchmark::State& state) { Run(state, "l2l3", 0); }

void Payloads(benchmark::internal::Benchmark* b) {
  b->ArgName("payload")->Arg(18)->Arg(512)->ComputeStatistics("min", Min);
}
BENCHMARK(BM_FlowEcnCounting)->Apply(Payloads);
BENCHMARK(BM_FlowEcnMarking)->Apply(Payloads);
BENCHMARK(BM_L2l3SameFramesFlowEcn)->Apply(Payloads);

}  // namespace
}  // namespace swemu::bench
