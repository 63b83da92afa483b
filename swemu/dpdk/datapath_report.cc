// What the datapath tells people: the final summary, `show runtime` and --stats-interval lines.
// They run on the lcore (the summary after it stopped), which owns every counter they read.
#include <cstdio>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch_commands.h"
#include "swemu/dpdk/datapath.h"
#include "swemu/switch_config.h"

namespace swemu {
namespace {

std::string FormatDrops(const std::array<uint64_t, kDropReasonCount>& drops) {
  std::string out;
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    if (drops[i] == 0) continue;
    out += out.empty() ? " " : ", ";
    out += std::string(DropReasonName(static_cast<DropReason>(i))) + " " + std::to_string(drops[i]);
  }
  return out.empty() ? " none" : out;
}

std::string PhaseLine(const char* name, const PhaseCycles& phase) {
  char line[128];
  const double per_pkt = phase.packets ? double(phase.cycles) / double(phase.packets) : 0.0;
  std::snprintf(line, sizeof(line), "  %-10s %10.1f cycles/pkt  (%llu packets sampled)\n", name,
                per_pkt, static_cast<unsigned long long>(phase.packets));
  return line;
}

std::string FormatDuration(uint64_t ns) {
  if (ns != 0 && ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns != 0 && ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

std::string EffectsLine(PortId p, const PortEffects& fx) {
  char line[160];
  std::snprintf(line, sizeof(line), "  port %u: loss %g, delay %s (delay line %u frames)\n",
                unsigned{p}, fx.loss(), FormatDuration(fx.delay_ns()).c_str(),
                fx.delay_line_frames());
  return line;
}

// Where the lcore's time in this switch's loop steps went: the share that moved frames says how
// close the lcore is to its limit; stalled steps are time the thread was off its CPU.
std::string StepTimeLine(const RuntimeCounters& r, uint64_t hz) {
  const uint64_t working = r.moved_cycles + r.empty_cycles;
  if (working == 0 || hz == 0) return "";
  char line[240];
  std::snprintf(line, sizeof(line),
                "  lcore time in this switch's steps: %.1f%% moving frames, %.1f%% empty, over "
                "%.3f s; %llu steps over %llu us (%.3f s: off the CPU)\n",
                100.0 * double(r.moved_cycles) / double(working),
                100.0 * double(r.empty_cycles) / double(working), double(working) / double(hz),
                static_cast<unsigned long long>(r.stalled_steps),
                static_cast<unsigned long long>(Datapath::kStalledStepNs / 1000),
                double(r.stalled_cycles) / double(hz));
  return line;
}

}  // namespace

Status Datapath::AddCommands() {
  SWEMU_RETURN_IF_ERROR(sw_.commands().Add(
      {"show runtime", "",
       "cycles per packet of rx, ingress, egress+TM and tx, then per stage (sampled from the "
       "first call on; real time)",
       0, 0,
       [this](CommandArgs) -> Result<std::string> { return RuntimeReport() + StageReport(); }}));
  SWEMU_RETURN_IF_ERROR(sw_.commands().Add(
      {"set_port_loss", "<port|all> <probability>",
       "lose frames sent on a port at random (seeded), e.g. 0.01 or 1%; 0 = off (real time)", 2, 2,
       [this](CommandArgs args) { return SetPortEffect(args, true); }}));
  return sw_.commands().Add(
      {"set_port_delay", "<port|all> <duration>",
       "hold frames sent on a port this long before the device, e.g. 50us; 0 = off (real time)", 2,
       2, [this](CommandArgs args) { return SetPortEffect(args, false); }});
}

// Runs on the lcore (mailbox) or before it starts (startup script): no lock needed.
Result<std::string> Datapath::SetPortEffect(CommandArgs args, bool loss) {
  Result<std::vector<uint16_t>> ports = ParsePorts(sw_, args[0]);
  if (!ports.ok()) return ports.status();
  if (loss) {
    Result<double> probability = ParseProbability(args[1]);
    if (!probability.ok()) return Status::Error("probability " + probability.message());
    for (uint16_t p : *ports) effects_[p].SetLoss(*probability);
    return std::string();
  }
  Result<uint64_t> ns = ParseDuration(args[1]);
  if (!ns.ok()) return Status::Error("delay " + ns.message());
  if (*ns > kMaxPortDelayNs) {
    return Status::Error("delay " + args[1] + " is longer than the maximum, 1s");
  }
  for (uint16_t p : *ports) effects_[p].SetDelay(*ns, NsToCycles(*ns));
  return std::string();
}

std::string Datapath::RuntimeReport() const {
  char head[160];
  std::snprintf(head, sizeof(head),
                "runtime: TSC %.3f GHz; cycles over bursts that carried packets, in one loop of "
                "%llu\n",
                double(clock_.hz()) / 1e9, static_cast<unsigned long long>(kTimingEvery));
  std::string out = head;
  out += PhaseLine("rx", runtime_.rx);
  out += PhaseLine("ingress", runtime_.ingress);
  out += PhaseLine("egress+tm", runtime_.egress);
  out += PhaseLine("tx", runtime_.tx);
  out += "  loops " + std::to_string(runtime_.loops) + ", idle " +
         std::to_string(runtime_.idle_loops) + ", sleeps " + std::to_string(runtime_.sleeps) +
         (busy_poll_ ? " (busy poll)\n" : "\n");
  out += StepTimeLine(runtime_, clock_.hz());
  if (runtime_.cut_through != 0) {
    out += "  cut through (sent during ingress, timed there) " +
           std::to_string(runtime_.cut_through) + " packets\n";
  }
  if (runtime_.rx_held != 0) {
    out += "  rx held back (a ring to a peer nearly full) " + std::to_string(runtime_.rx_held) +
           " times\n";
  }
  for (PortId p = 0; p < sw_.num_ports(); ++p) {
    const PortEffects& fx = effects_[p];
    if (fx.loss() != 0 || fx.delay_ns() != 0 || fx.held() != 0) {
      out += EffectsLine(p, fx);
      if (fx.held() != 0)
        out += "    held in the delay line now " + std::to_string(fx.held()) + "\n";
    }
  }
  return out;
}

void Datapath::StartStageSampling() {
  if (stage_sampling_) return;
  stage_overhead_ = MeasureScopeOverhead();
  sw_.stage_profile().Reset();
  stage_sampling_ = true;
}

std::string Datapath::StageReport() {
  if (!stage_sampling_) {
    StartStageSampling();
    return "  per stage: sampling starts now, in the loops that time their phases (one in " +
           std::to_string(kTimingEvery) + "); ask again for the figures\n";
  }
  const StageProfile& profile = sw_.stage_profile();
  const std::vector<StageProfile::Row> rows = profile.Rows(stage_overhead_);
  // Packets into the pipeline in the sampled loops: those the parser saw (or, for a program
  // without a parser, the ingress program); egress rows cover what those loops transmitted.
  uint64_t packets = 0;
  for (const StageProfile::Row& r : rows) {
    if (r.name == "parser" && r.packets != 0) packets = r.packets;
  }
  for (const StageProfile::Row& r : rows) {
    if (packets == 0 && r.name.starts_with("ingress program")) packets = r.packets;
  }
  char head[200];
  std::snprintf(head, sizeof(head),
                "  per stage, over the sampled loops: %llu packets in, %.1f ns per timed call "
                "subtracted\n",
                static_cast<unsigned long long>(packets),
                stage_overhead_.inside * 1e9 / double(clock_.hz()));
  return head + StageProfile::Format(rows, packets, double(clock_.hz()) / 1e9, "  ");
}

void Datapath::PrintStats(uint64_t now_tsc) {
  const double seconds = double(now_tsc - stats_last_tsc_) / double(clock_.hz());
  StatsSample now = Sample();
  out_ << StatsLine(ports_, now, stats_last_, seconds);
  if (stats_stages_) out_ << StageReport();
  out_ << std::flush;
  stats_last_ = std::move(now);
  stats_last_tsc_ = now_tsc;
}

StatsSample Datapath::MergeSamples(const std::vector<StatsSample>& samples) {
  StatsSample merged;
  merged.wire.resize(samples.front().wire.size());
  for (std::size_t p = 0; p < merged.wire.size(); ++p) {
    merged.wire[p] = samples[p % samples.size()].wire[p];
  }
  for (const StatsSample& sample : samples) {
    for (std::size_t i = 0; i < kDropReasonCount; ++i) merged.drops[i] += sample.drops[i];
  }
  return merged;
}

std::string Datapath::StatsLine(const DpdkPorts& ports, const StatsSample& now,
                                const StatsSample& then, double seconds) {
  std::string out = "stats:";
  for (PortId p = 0; p < now.wire.size(); ++p) {
    if (ports.dpdk_port(p) == kNoDpdkPort) continue;
    const WirePortCounters& n = now.wire[p];
    const WirePortCounters& t = then.wire[p];
    char part[160];
    std::snprintf(part, sizeof(part), " port %u rx %.3f Mpps %.3f Gbps tx %.3f Mpps %.3f Gbps;",
                  unsigned{p}, double(n.rx_packets - t.rx_packets) / seconds / 1e6,
                  double(n.rx_bytes - t.rx_bytes) * 8 / seconds / 1e9,
                  double(n.tx_packets - t.tx_packets) / seconds / 1e6,
                  double(n.tx_bytes - t.tx_bytes) * 8 / seconds / 1e9);
    out += part;
  }
  return out + " drops" + FormatDrops(now.drops) + "\n";
}

std::string Datapath::Summary(const std::vector<const Datapath*>& shards) {
  const Datapath& first = *shards.front();
  const Switch& sw = first.sw_;
  std::string out = "switch " + sw.name() + " (program " + sw.config().program + ", " +
                    std::to_string(sw.num_ports()) + " ports, real time" +
                    (shards.size() > 1 ? ", " + std::to_string(shards.size()) + " lcores" : "") +
                    ")\n";
  char line[200];
  std::snprintf(line, sizeof(line), "  %4s  %-16s %10s %12s %10s %12s %10s\n", "port", "attached",
                "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "ecn_marked");
  out += line;
  for (PortId p = 0; p < sw.num_ports(); ++p) {
    const Datapath& owner = *shards[p % shards.size()];
    const WirePortCounters& c = owner.wire_[p];
    uint64_t marked = 0;
    for (int q = 0; q < kQueuesPerPort; ++q) marked += owner.sw_.tm().queue_counters(p, q).marked;
    std::snprintf(
        line, sizeof(line), "  %4u  %-16s %10llu %12llu %10llu %12llu %10llu\n", unsigned{p},
        first.ports_.device(p).c_str(), static_cast<unsigned long long>(c.rx_packets),
        static_cast<unsigned long long>(c.rx_bytes), static_cast<unsigned long long>(c.tx_packets),
        static_cast<unsigned long long>(c.tx_bytes), static_cast<unsigned long long>(marked));
    out += line;
  }
  for (PortId p = 0; p < sw.num_ports(); ++p) {
    const PortEffects& fx = shards[p % shards.size()]->effects_[p];
    if (fx.loss() != 0 || fx.delay_ns() != 0) out += EffectsLine(p, fx);
  }
  std::array<uint64_t, kDropReasonCount> drops = {};
  uint64_t consumed = 0;
  uint64_t queued = 0;
  uint64_t cut_through = 0;
  uint64_t copies = 0;
  for (const Datapath* shard : shards) {
    // Since the start, as the wire counters above are: counter_reset does not unbalance it.
    const std::array<uint64_t, kDropReasonCount> own = shard->AllDropsSinceStart();
    for (std::size_t i = 0; i < kDropReasonCount; ++i) drops[i] += own[i];
    consumed += shard->sw_.ConsumedSinceStart();
    copies += shard->sw_.MulticastCopiesSinceStart();
    queued += shard->sw_.tm().TotalQueued();
    cut_through += shard->runtime_.cut_through;
  }
  out += "  drops:" + FormatDrops(drops) + "\n";
  // rx + multicast copies = tx + drops + consumed + queued (+ what shutdown discarded, below).
  out += "  consumed " + std::to_string(consumed) + ", queued " + std::to_string(queued) +
         ", cut through " + std::to_string(cut_through) + ", multicast copies " +
         std::to_string(copies) + "\n";
  if (sw.counter_resets() != 0) {
    out += "  (counter_reset ran " + std::to_string(sw.counter_resets()) +
           " times; this summary counts from the start)\n";
  }
  return out;
}

}  // namespace swemu
