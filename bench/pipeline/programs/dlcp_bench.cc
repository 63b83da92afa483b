// The dlcp program beside l2l3, the whole switch at burst 32 (parser, ingress, TM, egress,
// deparser), in ns per packet received:
//   DlcpBelowThresholds        - bridged UDP frames of tag 0 (DSCP 16, queue 6), ECT(0), with
//                                `dlcp_thresholds 64 0.5` (S_1 = 64): each burst is one run
//                                below the RED threshold, which the TM takes in one go;
//   DlcpMixedClasses           - runs of 4 frames per tag, tags 0..6 in turn (8 runs a burst,
//                                every tag in every burst), ECT(0) and Not-ECT alternating, with
//                                `dlcp_thresholds 2 0.5` (S_i = 2, 3, ..., 8, L_i = 2 S_i): the
//                                front queues' runs cross S_i and take the TM's per-packet path
//                                (ECT marked, Not-ECT dropped); reports the shares;
//   DlcpMixedBelowThresholds   - the same frames with `dlcp_thresholds 64 0.5`: 8 runs a burst
//                                and no RED, to tell the runs' cost from the threshold's;
//   L2l3SameFramesDlcp         - l2l3 on DlcpBelowThresholds' frames, for the ratio (named apart
//                                from pcn_bench.cc's L2l3SameFrames, in the same binary).
// The argument is the UDP payload: 18 B (64-byte frames) or 512 B (554-byte frames), as in
// pcn_bench.cc.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/pipeline/programs/switch_bench_util.h"
#include "pipeline/core/drop_reason.h"
#include "pipeline/tm/traffic_manager.h"
#include "pipeline/wire/dlcp.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"

namespace swemu::bench {
namespace {

constexpr uint32_t kBursts = 32;  // Tag0's frames cycle through 32 bursts, from 32 sources
constexpr uint32_t kRun = 4;      // DlcpMixedClasses: frames per tag in a row
constexpr PortId kOut = 2;
constexpr Ipv4Addr kHost = MakeIpv4Addr(10, 0, 2, 9);

std::vector<uint8_t> UdpFrame(uint32_t i, uint8_t tos, std::size_t payload) {
  return FrameBuilder()
      .Eth(*ParseMac("00:00:00:00:02:01"), *ParseMac("00:00:00:00:00:01"))
      .Ipv4(MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(1 + i % kBursts)), kHost)
      .Tos(tos)
      .Udp(40000, 7001)
      .Payload(payload)
      .PadTo(64)
      .Build();
}

uint8_t TagTos(uint32_t tag, uint8_t ecn) {
  return MakeTos(static_cast<uint8_t>(kDlcpDefaultDscpBase + tag), ecn);
}

Frames Tag0(std::size_t payload) {
  Frames out;
  for (uint32_t i = 0; i < kBurst * kBursts; ++i) {
    out.push_back(UdpFrame(i, TagTos(0, kEcnEct0), payload));
  }
  return out;
}

// 7 bursts of 8 runs: burst b holds tag b % 7 twice, first and last.
Frames Mixed(std::size_t payload) {
  Frames out;
  for (uint32_t i = 0; i < kBurst * kDlcpDataPriorities; ++i) {
    const uint8_t ecn = i % 2 == 0 ? kEcnEct0 : kEcnNotEct;
    out.push_back(UdpFrame(i, TagTos(i / kRun % kDlcpDataPriorities, ecn), payload));
  }
  return out;
}

// Every frame is bridged to kOut.
void Forward(SwitchBench& b) {
  b.Cmd("table_add dmac forward 00:00:00:00:02:01 => " + std::to_string(kOut));
}

uint64_t Marked(const TrafficManager& tm) {
  uint64_t marked = 0;
  for (int q = 0; q < kQueuesPerPort; ++q) marked += tm.queue_counters(kOut, q).marked;
  return marked;
}

void CheckNoRed(benchmark::State& state, SwitchBench& b) {
  if (b.sw().TotalDrops() != 0 || Marked(b.sw().tm()) != 0) {
    state.SkipWithError("a packet was dropped or marked");
  }
}

void BM_DlcpBelowThresholds(benchmark::State& state) {
  SwitchBench b("dlcp", kOut);
  Forward(b);
  b.Cmd("dlcp_thresholds 64 0.5");
  b.Run(state, Tag0(static_cast<std::size_t>(state.range(0))));
  CheckNoRed(state, b);
}

void BM_DlcpMixedClasses(benchmark::State& state) {
  SwitchBench b("dlcp", kOut);
  Forward(b);
  b.Cmd("dlcp_thresholds 2 0.5");
  b.Run(state, Mixed(static_cast<std::size_t>(state.range(0))));
  const auto pkts = static_cast<double>(state.iterations() * kBurst);
  const uint64_t red_drops = b.sw().Drops(DropReason::kTmRedNotEct);
  const uint64_t marked = Marked(b.sw().tm());
  state.counters["dropped_share"] = static_cast<double>(b.sw().TotalDrops()) / pkts;
  state.counters["marked_share"] = static_cast<double>(marked) / pkts;
  if (red_drops == 0 || marked == 0) state.SkipWithError("the RED thresholds took no effect");
}

void BM_DlcpMixedBelowThresholds(benchmark::State& state) {
  SwitchBench b("dlcp", kOut);
  Forward(b);
  b.Cmd("dlcp_thresholds 64 0.5");
  b.Run(state, Mixed(static_cast<std::size_t>(state.range(0))));
  CheckNoRed(state, b);
}

void BM_L2l3SameFramesDlcp(benchmark::State& state) {
  SwitchBench b("l2l3", kOut);
  Forward(b);
  b.Run(state, Tag0(static_cast<std::size_t>(state.range(0))));
  CheckNoRed(state, b);
}

void Payloads(benchmark::internal::Benchmark* b) {
  b->ArgName("payload")->Arg(18)->Arg(512)->ComputeStatistics("min", Min);
}
BENCHMARK(BM_DlcpBelowThresholds)->Apply(Payloads);
BENCHMARK(BM_DlcpMixedClasses)->Apply(Payloads);
BENCHMARK(BM_DlcpMixedBelowThresholds)->Apply(Payloads);
BENCHMARK(BM_L2l3SameFramesDlcp)->Apply(Payloads);

}  // namespace
}  // namespace swemu::bench
