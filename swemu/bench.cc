#include "swemu/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/cycles.h"
#include "pipeline/core/json_writer.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/switch/switch.h"
#include "swemu/switch_config.h"

namespace swemu {
namespace {

constexpr uint32_t kBurst = 32;
// Frames kept in memory, shared out over the inputs: a larger capture is measured over its
// first frames (and the run says so).
constexpr std::size_t kMaxFrames = 1'000'000;
constexpr std::size_t kPoolPackets = 16384;
constexpr double kStableSpread = 0.02;  // the last rounds' whole within +-2% of their median
constexpr int kStableRounds = 3;
constexpr double kRoundSeconds = 0.1;  // each half of a round (plain, then timed)
constexpr double kWarmSeconds = 0.1;

struct Frame {
  PortId port;
  TimeNs ts;  // since the first frame
  std::vector<uint8_t> bytes;
};

struct Burst {
  PortId port;
  std::size_t first;  // into Frames::frames, which holds each burst's frames together
  uint32_t n;
};

struct Frames {
  std::vector<Frame> frames;
  std::vector<Burst> bursts;
  uint64_t inputs_cut = 0;  // inputs that hold more than their share of kMaxFrames (not read)
  TimeNs span = 0;
};

Result<Frames> LoadFrames(const CommandLine& cmd, uint32_t max_frame) {
  Frames out;
  TimeNs first = kNever;
  // Each input's share of kMaxFrames; what is beyond it is not read (a stream may not end).
  const std::size_t per_input = kMaxFrames / std::max<std::size_t>(1, cmd.inputs.size());
  for (const InputSpec& in : cmd.inputs) {
    std::size_t taken = 0;
    Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(in.file);
    if (!reader.ok()) return Status::Error("--in " + in.text + ": " + reader.message());
    PcapRecord record;
    while ((*reader)->Next(&record)) {
      if (taken++ == per_input) {
        ++out.inputs_cut;
        break;
      }
      if (record.bytes.size() > max_frame) {
        return Status::Error("--in " + in.text + ": frame " +
                             std::to_string((*reader)->records_read()) + " has " +
                             std::to_string(record.bytes.size()) + " bytes, more than the " +
                             std::to_string(max_frame) + " a packet buffer holds");
      }
      first = std::min(first, record.ts_ns);
      out.frames.push_back({in.port, record.ts_ns, record.bytes});
    }
    if (!(*reader)->status().ok()) {
      return Status::Error("--in " + in.text + ": " + (*reader)->status().message());
    }
  }
  if (out.frames.empty()) return Status::Error("--in: the inputs hold no frames to measure");
  std::stable_sort(out.frames.begin(), out.frames.end(),
                   [](const Frame& a, const Frame& b) { return a.ts < b.ts; });
  for (Frame& f : out.frames) f.ts -= first;
  out.span = out.frames.back().ts;
  // Bursts as a poll-mode switch receives them: ports polled in turn, each poll taking up to 32
  // of that port's frames in their order (a time-merged trace of several ports would otherwise
  // come as bursts of one frame).
  std::vector<std::vector<Frame>> by_port;
  for (Frame& f : out.frames) {
    if (f.port >= by_port.size()) by_port.resize(f.port + 1u);
    by_port[f.port].push_back(std::move(f));
  }
  out.frames.clear();
  std::vector<std::size_t> next(by_port.size(), 0);
  for (bool more = true; more;) {
    more = false;
    for (PortId p = 0; p < by_port.size(); ++p) {
      const std::size_t left = by_port[p].size() - next[p];
      if (left == 0) continue;
      const auto n = static_cast<uint32_t>(std::min<std::size_t>(kBurst, left));
      out.bursts.push_back({p, out.frames.size(), n});
      for (uint32_t i = 0; i < n; ++i) out.frames.push_back(std::move(by_port[p][next[p]++]));
      more = more || next[p] < by_port[p].size();
    }
  }
  return out;
}

// One switch and the frames, passed through it.
class Bench {
 public:
  Bench(const LoadedSwitchConfig& loaded, Frames frames)
      : loaded_(loaded), frames_(std::move(frames)), pool_(kPoolPackets) {}

  Status Load() {
    Result<std::unique_ptr<Switch>> created = Switch::Create(loaded_.config, pool_, clock_);
    if (!created.ok()) return created.status();
    sw_ = std::move(*created);
    if (!loaded_.startup_script.empty()) {
      SWEMU_RETURN_IF_ERROR(sw_->commands().RunScript(loaded_.startup_script));
    }
    for (const Frame& f : frames_.frames) {
      if (f.port >= sw_->num_ports()) {
        return Status::Error("--in: port " + std::to_string(f.port) + " out of range (switch " +
                             sw_->name() + " has " + std::to_string(sw_->num_ports()) + " ports)");
      }
    }
    return Status::Ok();
  }

  // One pass over every frame; the cycles spent inside the switch's calls.
  Result<uint64_t> Pass() {
    for (RegisterArray* reg : sw_->resources().Registers()) reg->Reset();
    // Virtual time moves on between passes (shapers and timers see a later copy of the trace).
    const TimeNs base = clock_.NowNs() + frames_.span + 1'000'000'000;
    uint64_t cycles = 0;
    Packet* pkts[kBurst];
    const std::vector<Frame>& frames = frames_.frames;
    for (const Burst& burst : frames_.bursts) {
      const PortId port = burst.port;
      const std::size_t at = burst.first;
      const uint32_t n = burst.n;
      clock_.Set(std::max(clock_.NowNs(), base + frames[at + n - 1].ts));
      for (uint32_t i = 0; i < n; ++i) {
        const std::vector<uint8_t>& bytes = frames[at + i].bytes;
        pkts[i] = pool_.FromBytes(bytes.data(), static_cast<uint32_t>(bytes.size()));
        if (pkts[i] == nullptr) {
          for (uint32_t j = 0; j < i; ++j) pool_.Free(pkts[j]);
          return Status::Error("the switch holds more than " + std::to_string(kPoolPackets) +
                               " packets at once (queues of shaped ports?); shorten the input");
        }
      }
      const uint64_t t0 = ReadCycles();
      sw_->ReceiveBurst(pkts, n, port);
      cycles += ReadCycles() - t0;
      cycles += Drain();
    }
    // What shaped ports still hold leaves at its time.
    while (true) {
      TimeNs next = kNever;
      for (PortId p = 0; p < sw_->num_ports(); ++p) next = std::min(next, sw_->NextTransmitTime(p));
      if (next == kNever) break;
      clock_.Set(std::max(clock_.NowNs(), next));
      cycles += Drain();
    }
    return cycles;
  }

  Switch& sw() { return *sw_; }
  const Frames& frames() const { return frames_; }

 private:
  // Transmits what every port may send now; the cycles of the switch's calls.
  uint64_t Drain() {
    uint64_t cycles = 0;
    Packet* out[kBurst];
    const TimeNs now = clock_.NowNs();
    for (PortId p = 0; p < sw_->num_ports(); ++p) {
      while (sw_->NextTransmitTime(p) <= now) {
        const uint64_t t0 = ReadCycles();
        const uint32_t k = sw_->TransmitBurst(p, out, kBurst);
        cycles += ReadCycles() - t0;
        for (uint32_t i = 0; i < k; ++i) pool_.Free(out[i]);
        if (k == 0) break;
      }
    }
    return cycles;
  }

  const LoadedSwitchConfig& loaded_;
  Frames frames_;
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> sw_;
};

struct Round {
  double whole_cycles = 0;              // per packet, stages untimed
  double timed_whole_cycles = 0;        // per packet, while the stages were timed
  std::vector<StageProfile::Row> rows;  // per pass
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The spread of the last kStableRounds rounds' whole around their median.
double Spread(const std::vector<Round>& rounds) {
  if (rounds.size() < static_cast<std::size_t>(kStableRounds)) return INFINITY;
  std::vector<double> last;
  for (std::size_t i = rounds.size() - kStableRounds; i < rounds.size(); ++i) {
    last.push_back(rounds[i].whole_cycles);
  }
  const double median = Median(last);
  double spread = 0;
  for (double v : last) spread = std::max(spread, std::fabs(v - median) / median);
  return spread;
}

struct Summary {
  std::vector<StageProfile::Row> rows;  // per pass, the median over the rounds used
  double whole = 0;                     // cycles per packet
  double timed_whole = 0;
  std::size_t rounds_used = 0;
};

Summary Summarize(const std::vector<Round>& rounds) {
  const std::size_t used = std::min<std::size_t>(rounds.size(), kStableRounds);
  const std::size_t from = rounds.size() - used;
  Summary s;
  s.rounds_used = used;
  std::vector<double> whole, timed;
  for (std::size_t i = from; i < rounds.size(); ++i) {
    whole.push_back(rounds[i].whole_cycles);
    timed.push_back(rounds[i].timed_whole_cycles);
  }
  s.whole = Median(whole);
  s.timed_whole = Median(timed);
  s.rows = rounds.back().rows;
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    std::vector<double> v;
    for (std::size_t i = from; i < rounds.size(); ++i) v.push_back(rounds[i].rows[r].cycles);
    s.rows[r].cycles = Median(v);
  }
  return s;
}

Status CheckBenchCommand(const CommandLine& cmd) {
  if (!cmd.topology.empty()) {
    return Status::Error("--bench: measures one switch; give --config, not --topology");
  }
  if (cmd.inputs.empty()) return Status::Error("--bench: needs at least one --in PORT=FILE.pcap");
  if (!cmd.out_dir.empty())
    return Status::Error("--out-dir: not with --bench (it writes no files)");
  return Status::Ok();
}

// Seconds since construction, on the steady clock.
class Stopwatch {
 public:
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Warm-up (caches, tables, the allocator) for kWarmSeconds, which also sizes a round: the
// passes per half round.
Result<int> WarmUp(Bench& bench, const Stopwatch& watch) {
  int warm_passes = 0;
  while (warm_passes == 0 || watch.Seconds() < kWarmSeconds) {
    Result<uint64_t> warm = bench.Pass();
    if (!warm.ok()) return warm.status();
    ++warm_passes;
  }
  const double pass_seconds = watch.Seconds() / warm_passes;
  return std::max(1, static_cast<int>(kRoundSeconds / pass_seconds));
}

// One round: `passes` plain passes, then as many with the element counters on.
Result<Round> RunRound(Bench& bench, const ScopeOverhead& overhead, int passes, double packets) {
  StageProfile& profile = bench.sw().stage_profile();
  Round round;
  uint64_t plain = 0;
  for (int i = 0; i < passes; ++i) {
    Result<uint64_t> c = bench.Pass();
    if (!c.ok()) return c.status();
    plain += *c;
  }
  profile.Reset();
  profile.Enable(true);
  uint64_t timed = 0;
  for (int i = 0; i < passes; ++i) {
    Result<uint64_t> c = bench.Pass();
    if (!c.ok()) {
      profile.Enable(false);
      return c.status();
    }
    timed += *c;
  }
  profile.Enable(false);
  const double pkts = packets * passes;
  round.whole_cycles = static_cast<double>(plain) / pkts;
  round.timed_whole_cycles = static_cast<double>(timed) / pkts;
  round.rows = profile.Rows(overhead);
  for (StageProfile::Row& r : round.rows) {  // per pass
    r.cycles /= passes;
    r.calls = static_cast<uint64_t>(std::llround(static_cast<double>(r.calls) / passes));
    r.packets = static_cast<uint64_t>(std::llround(static_cast<double>(r.packets) / passes));
  }
  return round;
}

// What a run measured, and what its report needs.
struct Measured {
  std::vector<Round> rounds;
  int passes = 0;
  double per_ns = 0;  // cycles per ns
  ScopeOverhead overhead;
  double packets = 0;  // frames per pass
  double spread = 0;
  bool stable = false;
  Summary s;
  double sum = 0;  // cycles per packet of the elements
  double unattributed = 0;

  double Ns(double cycles) const { return cycles / per_ns; }
};

// Rounds until stable, the budget is spent or --bench-repeat rounds are done.
Status RunRounds(const CommandLine& cmd, Bench& bench, const Stopwatch& watch, Measured& m) {
  while (true) {
    Result<Round> round = RunRound(bench, m.overhead, m.passes, m.packets);
    if (!round.ok()) return round.status();
    m.rounds.push_back(std::move(*round));
    if (cmd.bench_repeat != 0) {
      if (m.rounds.size() >= cmd.bench_repeat) break;
    } else if (Spread(m.rounds) <= kStableSpread || watch.Seconds() >= cmd.bench_seconds) {
      break;
    }
  }
  m.spread = Spread(m.rounds);
  m.stable = m.spread <= kStableSpread;
  m.s = Summarize(m.rounds);
  for (const StageProfile::Row& r : m.s.rows) m.sum += r.cycles / m.packets;
  m.unattributed = m.s.whole - m.sum;
  return Status::Ok();
}

void PrintJson(const CommandLine& cmd, Bench& bench, const Measured& m, double seconds,
               std::ostream& out) {
  const Summary& s = m.s;
  JsonWriter j;
  j.BeginObject()
      .String("config", cmd.config)
      .String("program", bench.sw().config().program)
      .Uint("frames", bench.frames().frames.size())
      .Uint("inputs_cut", bench.frames().inputs_cut)
      .Uint("rounds", m.rounds.size())
      .Uint("passes_per_round", static_cast<uint64_t>(m.passes))
      .Double("seconds", seconds)
      .Bool("stable", m.stable)
      .Double("spread", std::isfinite(m.spread) ? m.spread : -1)
      .Double("cycles_per_ns", m.per_ns)
      .Double("timing_overhead_ns", m.Ns(m.overhead.inside))
      .BeginArray("elements");
  for (const StageProfile::Row& r : s.rows) {
    j.BeginObject()
        .String("name", r.name)
        .Bool("stage", r.stage)
        .Double("ns_per_packet", m.Ns(r.cycles) / m.packets)
        .Double("calls_per_packet", static_cast<double>(r.calls) / m.packets)
        .EndObject();
  }
  j.EndArray()
      .Double("sum_ns_per_packet", m.Ns(m.sum))
      .Double("whole_ns_per_packet", m.Ns(s.whole))
      .Double("whole_mpps", 1000.0 / m.Ns(s.whole))
      .Double("timed_whole_ns_per_packet", m.Ns(s.timed_whole))
      .Double("unattributed_share", m.unattributed / s.whole)
      .EndObject();
  out << j.str() << "\n";
}

void PrintTable(const CommandLine& cmd, Bench& bench, const Measured& m, double seconds,
                std::ostream& out) {
  const Summary& s = m.s;
  const uint64_t n_frames = bench.frames().frames.size();
  char line[512];
  std::snprintf(
      line, sizeof(line), "swemu bench: %s (program %s), %llu frames from %zu input%s%s\n",
      cmd.config.c_str(), bench.sw().config().program.c_str(),
      static_cast<unsigned long long>(n_frames), cmd.inputs.size(),
      cmd.inputs.size() == 1 ? "" : "s",
      bench.frames().inputs_cut != 0
          ? (" (the first " + std::to_string(kMaxFrames / cmd.inputs.size()) + " of each; " +
             std::to_string(bench.frames().inputs_cut) + " held more, not read)")
                .c_str()
          : "");
  out << line;
  std::snprintf(line, sizeof(line),
                "  %zu rounds of %d + %d passes in %.1f s; whole pipeline %s (last %d rounds "
                "within %.1f%% of their median)\n",
                m.rounds.size(), m.passes, m.passes, seconds, m.stable ? "stable" : "NOT stable",
                kStableRounds, std::isfinite(m.spread) ? 100 * m.spread : 100.0);
  out << line;
  std::snprintf(line, sizeof(line),
                "  every pass starts from cleared registers; clock %.3f GHz; %.1f ns per timed "
                "call subtracted\n",
                m.per_ns, m.Ns(m.overhead.inside));
  out << line;
  out << StageProfile::Format(s.rows, n_frames, m.per_ns, "  ");
  std::snprintf(line, sizeof(line), "  %-40s %9.1f ns/packet\n", "sum of the elements",
                m.Ns(m.sum));
  out << line;
  std::snprintf(line, sizeof(line), "  %-40s %9.1f ns/packet  %.2f Mpps\n",
                "whole pipeline (elements not timed)", m.Ns(s.whole), 1000.0 / m.Ns(s.whole));
  out << line;
  std::snprintf(line, sizeof(line),
                "  %-40s %9.1f ns/packet  (%.1f%% of the whole: the error of timing each "
                "element, which a per-packet call magnifies)\n",
                "not attributed", m.Ns(m.unattributed), 100.0 * m.unattributed / s.whole);
  out << line;
  std::snprintf(line, sizeof(line), "  %-40s %9.1f ns/packet\n",
                "whole pipeline while timing elements", m.Ns(s.timed_whole));
  out << line;
}

}  // namespace

Status RunBench(const CommandLine& cmd, std::ostream& out) {
  SWEMU_RETURN_IF_ERROR(CheckBenchCommand(cmd));
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(cmd.config);
  if (!loaded.ok()) return loaded.status();
  if (cmd.seed.has_value()) loaded->config.seed = *cmd.seed;
  Result<Frames> frames = LoadFrames(cmd, HeapPacketPool(1).MaxFrame());
  if (!frames.ok()) return frames.status();
  Bench bench(*loaded, std::move(*frames));
  Status ready = bench.Load();
  if (!ready.ok()) return Status::Error(cmd.config + ": " + ready.message());
  bench.sw().stage_profile().TimeSwitchCalls(true);
  Measured m;
  m.per_ns = CyclesPerNs();
  m.overhead = MeasureScopeOverhead();
  m.packets = static_cast<double>(bench.frames().frames.size());

  const Stopwatch watch;
  Result<int> passes = WarmUp(bench, watch);
  if (!passes.ok()) return passes.status();
  m.passes = *passes;
  SWEMU_RETURN_IF_ERROR(RunRounds(cmd, bench, watch, m));
  if (cmd.json) {
    PrintJson(cmd, bench, m, watch.Seconds(), out);
  } else {
    PrintTable(cmd, bench, m, watch.Seconds(), out);
  }
  return Status::Ok();
}

}  // namespace swemu
