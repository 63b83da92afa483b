// The goat program through the whole switch at burst 32 (switch_bench_util.h: parser, ingress,
// TM, egress, deparser, and the copy of each frame into its buffer), in ns per packet received,
// per aggregation path, sweeping the elements per packet. Every benchmark runs in a steady
// state, without untimed resets:
//   GoatRound      - GOAT mode, fan-in 4: per fragment a claim, two adds (consumed) and the add
//                    that completes the slot, whose sum goes on to the PS. Two sub-models'
//                    goat_node entries share slots 0..255, so every claim takes a slot the other
//                    sub-model finished, as each new round takes its previous round's;
//   GoatAggregate  - the same with fan-in 64, 64 workers and 16 fragments: 62 of 64 packets
//                    are adds;
//   GoatShare      - `share` (ATP-style), fan-in 4: claim, two adds, complete, then the PS's
//                    result for the fragment, which frees its slot on its way back;
//   GoatCollision  - `share`, every slot held by another fragment: forwarded unchanged;
//   GoatLate       - GOAT mode, fragments of a round older than the one their slot holds: on to
//                    the PS (`late`);
//   L2l3SameFramesGoat - l2l3 bridging GoatRound's frames, for the ratio.
// Frames as the GOAT hosts send them (docs/wire.md, "GOAT"): UDP checksum 0, so the rewritten
// aggregates need no checksum pass.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/pipeline/programs/switch_bench_util.h"
#include "pipeline/programs/goat.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/goat.h"

namespace swemu::bench {
namespace {

constexpr PortId kPs = 2;
constexpr uint16_t kJob = 1;
constexpr uint16_t kNode = 7;         // this switch's GOAT node id
constexpr uint32_t kFragments = 256;  // per sub-model: the slots each benchmark cycles through
constexpr uint32_t kSlots = kGoatDefaultSlots;

const GoatProgram& Goat(SwitchBench& b) {
  return static_cast<const GoatProgram&>(b.sw().program());
}

SwitchConfig Config(const char* program, uint16_t elements) {
  SwitchConfig config = SwitchBench::Config(program);
  config.program_options.Set("elements", std::to_string(elements));
  config.program_options.Set("slots", std::to_string(kSlots));
  return config;
}

std::vector<uint8_t> Frame(GoatFields f, uint16_t elements, uint8_t worker) {
  f.num_elements = elements;
  std::vector<uint8_t> payload(GoatPayloadLen(elements));
  f.Encode(payload.data());
  for (uint16_t i = 0; i < elements; ++i) {
    StoreBe32(payload.data() + kGoatHeaderLen + 4 * i, 1000u * worker + i);
  }
  return FrameBuilder()
      .Eth(*ParseMac("02:00:00:00:00:10"), *ParseMac("02:00:00:00:00:01"))
      .Ipv4(MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(1 + worker)), MakeIpv4Addr(10, 0, 0, 16))
      .Udp(kGoatDefaultUdpPort, kGoatDefaultUdpPort)
      .NoUdpChecksum()
      .Payload(payload)
      .Build();
}

GoatFields Gradient(uint16_t node, uint16_t submodel, uint32_t fragment, uint32_t round,
                    uint8_t worker) {
  GoatFields f;
  f.job_id = kJob;
  f.node_id = node;
  f.submodel = submodel;
  f.fragment = fragment;
  f.round = round;
  f.count = 1;
  f.bitmap = uint64_t{1} << worker;
  return f;
}

// Sub-models 0 and 1 in turn; per fragment, workers 0 .. workers-1 one after the other. 2048
// frames whatever the fan-in (kFragments fragments at 4 workers, 16 at 64), so that the copies'
// sources take the same room in the caches.
Frames Rounds(uint16_t elements, uint8_t workers) {
  Frames out;
  for (uint16_t g = 0; g < 2; ++g) {
    for (uint32_t f = 0; f < kFragments * 4 / workers; ++f) {
      for (uint8_t w = 0; w < workers; ++w) {
        out.push_back(Frame(Gradient(kNode, g, f, 0, w), elements, w));
      }
    }
  }
  return out;
}

// Both sub-models aggregate here in slots 0..kFragments-1: sub-model 1's fragment f reclaims
// the slot sub-model 0's fragment f completed, and the other way around.
SwitchBench& Aggregating(SwitchBench& b, uint32_t fan_in) {
  b.Cmd("table_add dmac forward 02:00:00:00:00:10 => " + std::to_string(kPs));
  for (int g : {0, 1}) {
    b.Cmd("table_add goat_node aggregate " + std::to_string(kJob) + " " + std::to_string(kNode) +
          " " + std::to_string(g) + " => 0 " + std::to_string(kFragments) + " " +
          std::to_string(fan_in));
  }
  return b;
}

void CountShares(benchmark::State& state, SwitchBench& b) {
  const GoatCounters& c = Goat(b).counters();
  const double pkts = static_cast<double>(state.iterations()) * kBurst;
  state.counters["consumed_share"] = static_cast<double>(b.sw().ConsumedSinceStart()) / pkts;
  state.counters["completed_share"] = static_cast<double>(c.completed) / pkts;
}

// GOAT mode at `workers` fan-in, in a steady state: `progress` must have moved, and no slot was
// evicted or given a duplicate.
void RunRounds(benchmark::State& state, uint8_t workers, uint64_t GoatCounters::*progress) {
  const auto elements = static_cast<uint16_t>(state.range(0));
  SwitchBench b(Config("goat", elements), kPs);
  Aggregating(b, workers);
  b.Run(state, Rounds(elements, workers));
  const GoatCounters& c = Goat(b).counters();
  if (c.*progress == 0 || c.evicted != 0 || c.duplicates != 0) state.SkipWithError("not steady");
  CountShares(state, b);
}

void BM_GoatRound(benchmark::State& state) { RunRounds(state, 4, &GoatCounters::completed); }

void BM_GoatAggregate(benchmark::State& state) { RunRounds(state, 64, &GoatCounters::aggregated); }

void BM_GoatShare(benchmark::State& state) {
  const auto elements = static_cast<uint16_t>(state.range(0));
  SwitchBench b(Config("goat", elements), kPs);
  b.Cmd("table_add dmac forward 02:00:00:00:00:10 => " + std::to_string(kPs));
  b.Cmd("table_add goat_node share 1 65535 0 => 0 " + std::to_string(kSlots) + " 4");
  Frames frames;
  for (uint32_t f = 0; f < kFragments; ++f) {
    for (uint8_t w = 0; w < 4; ++w) {
      frames.push_back(Frame(Gradient(kGoatNodeAny, 0, f, 0, w), elements, w));
    }
    GoatFields result = Gradient(kGoatNodeAny, 0, f, 0, 0);
    result.type = GoatType::kResult;
    result.count = 4;
    result.bitmap = 0xF;
    frames.push_back(Frame(result, elements, 0));  // addressed to the PS too: leaves by kPs
  }
  b.Run(state, frames);
  const GoatCounters& c = Goat(b).counters();
  if (c.released == 0 || c.collisions != 0) state.SkipWithError("not steady");
  CountShares(state, b);
}

void BM_GoatCollision(benchmark::State& state) {
  const auto elements = static_cast<uint16_t>(state.range(0));
  SwitchBench b(Config("goat", elements), kPs);
  b.Cmd("table_add dmac forward 02:00:00:00:00:10 => " + std::to_string(kPs));
  // kFragments slots, held (fan-in 64, one worker each) by fragments 0 .. kFragments-1; the
  // timed fragments kFragments .. 2 kFragments-1 map onto the same slots.
  b.Cmd("table_add goat_node share 1 65535 0 => 0 " + std::to_string(kFragments) + " 64");
  Frames hold, frames;
  for (uint32_t f = 0; f < kFragments; ++f) {
    hold.push_back(Frame(Gradient(kGoatNodeAny, 0, f, 0, 0), elements, 0));
    frames.push_back(Frame(Gradient(kGoatNodeAny, 0, kFragments + f, 0, 1), elements, 1));
  }
  b.Send(hold);
  b.Run(state, frames);
  if (Goat(b).counters().collisions == 0) state.SkipWithError("no collision");
}

void BM_GoatLate(benchmark::State& state) {
  const auto elements = static_cast<uint16_t>(state.range(0));
  SwitchBench b(Config("goat", elements), kPs);
  Aggregating(b, 4);
  Frames hold, frames;
  for (uint32_t f = 0; f < kFragments; ++f) {
    hold.push_back(Frame(Gradient(kNode, 0, f, 5, 0), elements, 0));
    frames.push_back(Frame(Gradient(kNode, 0, f, 4, 1), elements, 1));
  }
  b.Send(hold);
  b.Run(state, frames);
  if (Goat(b).counters().late == 0) state.SkipWithError("nothing late");
}

void BM_L2l3SameFramesGoat(benchmark::State& state) {
  const auto elements = static_cast<uint16_t>(state.range(0));
  SwitchBench b("l2l3", kPs);
  b.Cmd("table_add dmac forward 02:00:00:00:00:10 => " + std::to_string(kPs));
  b.Run(state, Rounds(elements, 4));
}

void Elements(benchmark::internal::Benchmark* b) {
  b->ArgName("elements")->Arg(16)->Arg(64)->ComputeStatistics("min", Min);
}
BENCHMARK(BM_GoatRound)->Apply(Elements);
BENCHMARK(BM_GoatAggregate)->Apply(Elements);
BENCHMARK(BM_GoatShare)->Apply(Elements);
BENCHMARK(BM_GoatCollision)->Apply(Elements);
BENCHMARK(BM_GoatLate)->Apply(Elements);
BENCHMARK(BM_L2l3SameFramesGoat)->Apply(Elements);

}  // namespace
}  // namespace swemu::bench
