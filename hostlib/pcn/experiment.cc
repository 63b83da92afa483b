#include "hostlib/pcn/experiment.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/pcn/ddl.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/telemetry.h"
#include "pipeline/programs/pcn.h"
#include "pipeline/tm/tm_config.h"
#include "pipeline/wire/pcn.h"

namespace swemu {
namespace {

constexpr uint16_t kBurstPort = 5000;
constexpr uint16_t kBackgroundPortBase = 5201;  // iperf3's, one per background flow

double Mean(const std::vector<PcnBurstMetrics>& bursts, double (*field)(const PcnBurstMetrics&)) {
  if (bursts.empty()) return 0;
  double sum = 0;
  for (const PcnBurstMetrics& b : bursts) sum += field(b);
  return sum / static_cast<double>(bursts.size());
}

// A built network: its endpoints (they must outlive the run) and the PS's port.
struct PcnBuilt {
  std::unique_ptr<DdlPs> ps;
  std::vector<std::unique_ptr<TcpHost>> background;
  std::vector<std::unique_ptr<DdlWorker>> workers;
  Switch* ps_switch = nullptr;
  PortId ps_port = 0;
};

// The switches (every one running pcn with the experiment's options), the links and, from the
// routes, on every switch the PS's pcn_job entry and a dmac entry per host.
Status AddSwitches(Engine& engine, const PcnNetwork& net, const PcnExperimentOptions& o) {
  std::vector<LoadedSwitchConfig> switches = net.topo.switches;
  for (LoadedSwitchConfig& s : switches) {
    s.config.program = "pcn";
    s.config.program_options = ProgramOptions{};
    s.config.program_options.Set("initial_threshold", std::to_string(o.initial_threshold));
    s.config.seed = o.seed;
  }
  SWEMU_RETURN_IF_ERROR(AddSwitchesAndLinks(engine, switches, net.topo.links));
  std::vector<const PcnHost*> hosts{&net.ps};
  for (const PcnHost& h : net.workers) hosts.push_back(&h);
  for (const PcnHost& h : net.background) hosts.push_back(&h);
  for (uint32_t s = 0; s < net.routes.num_switches(); ++s) {
    Switch& sw = *engine.FindSwitch(net.routes.name(s));
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add pcn_job job " + FormatIpv4(net.ps.ip) + " => 0"));
    for (const PcnHost* h : hosts) {
      const int32_t port = net.routes.PortToHost(s, h->index);
      if (port < 0) continue;  // a switch the host's traffic never crosses
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add dmac forward " + FormatMac(h->mac) + " => " +
                                       std::to_string(port)));
    }
  }
  return Status::Ok();
}

DdlWorkerOptions WorkerOptions(const PcnExperimentOptions& o, const PcnNetwork& net,
                               const PcnHost& worker, bool pcn) {
  DdlWorkerOptions w;
  w.burst_bytes = o.burst_bytes;
  w.burst_rate_bps = o.burst_rate_bps;
  w.iterations = o.iterations;
  w.first_ns = o.ddl_start_ns;
  w.idle_ns = o.idle_ns;
  w.ps = TcpEnd{net.ps.mac, net.ps.ip, kPcnDefaultUdpPort};
  w.ps_data_port = kBurstPort;
  w.pcn = pcn;
  w.announce.threshold = o.pcn_threshold;
  w.announce.ack_wait_ns = o.ack_wait_ns != 0 ? o.ack_wait_ns : 2 * worker.rtt_ns;
  w.min_lead_ns = o.lead_ns;
  return w;
}

// The PS first, then the workers and background hosts in file order.
Status AttachHosts(Engine& engine, const PcnNetwork& net, const PcnExperimentOptions& o, bool pcn,
                   PcnBuilt& built) {
  EcnTcpOptions tcp;
  tcp.cc = o.cc;
  tcp.min_rto_ns = o.min_rto_ns;
  tcp.link_bps = net.nic_bps;
  auto attach = [&](const PcnHost& h) {
    const TopologyHost& t = net.host(h);
    return EngineTransport::Attach(engine, t.sw, t.port, t.delay_ns, t.loss);
  };
  Result<EngineTransport*> tps = attach(net.ps);
  if (!tps.ok()) return tps.status();
  built.ps = std::make_unique<DdlPs>(**tps, net.ps.mac, net.ps.ip, kPcnDefaultUdpPort, tcp);
  (*tps)->SetEndpoint(built.ps.get());
  built.ps->Listen(kBurstPort);
  const TcpEnd ps{net.ps.mac, net.ps.ip, 0};
  std::size_t w = 0, b = 0;
  for (uint32_t i = 0; i < net.topo.hosts.size(); ++i) {
    const bool worker = w < net.workers.size() && net.workers[w].index == i;
    if (!worker && (b == net.background.size() || net.background[b].index != i)) continue;
    const PcnHost& h = worker ? net.workers[w] : net.background[b];
    Result<EngineTransport*> t = attach(h);
    if (!t.ok()) return t.status();
    if (worker) {
      const DdlWorkerOptions options = WorkerOptions(o, net, h, pcn);
      SWEMU_RETURN_IF_ERROR(options.Validate());
      built.workers.push_back(std::make_unique<DdlWorker>(**t, h.mac, h.ip, options, tcp));
      (*t)->SetEndpoint(built.workers.back().get());
      ++w;
      continue;
    }
    auto host = std::make_unique<TcpHost>(**t, h.mac, h.ip, tcp);
    const auto port = static_cast<uint16_t>(kBackgroundPortBase + b);
    built.ps->Listen(port);
    // Staggered by 1 ms each, as iperf3 clients started one after another.
    host->AddFlow({TcpEnd{ps.mac, ps.ip, port}, 40000, TimeNs(b) * 1'000'000, o.duration_ns, 0});
    (*t)->SetEndpoint(host.get());
    built.background.push_back(std::move(host));
    ++b;
  }
  return Status::Ok();
}

// The whole network in an engine, and the bottleneck as its switch has it.
Status BuildPcnNetwork(Engine& engine, const PcnNetwork& net, const PcnExperimentOptions& o,
                       bool pcn, PcnBuilt& built, PcnNetworkFigures& figures) {
  SWEMU_RETURN_IF_ERROR(AddSwitches(engine, net, o));
  SWEMU_RETURN_IF_ERROR(AttachHosts(engine, net, o, pcn, built));
  built.ps_switch = engine.FindSwitch(net.ps_switch_name());
  built.ps_port = net.host(net.ps).port;
  figures.shape = net.shape;
  figures.ps_switch = net.ps_switch_name();
  figures.workers = static_cast<uint32_t>(net.workers.size());
  figures.bottleneck_bps = built.ps_switch->tm().PortRate(built.ps_port);
  figures.queue_pkts = built.ps_switch->tm().QueueDepthLimit(built.ps_port, 0);
  figures.edge_bps = net.nic_bps;
  figures.rtt_min_ns = figures.rtt_max_ns = net.workers[0].rtt_ns;
  for (const std::vector<PcnHost>* hosts : {&net.workers, &net.background}) {
    for (const PcnHost& h : *hosts) {
      figures.rtt_min_ns = std::min(figures.rtt_min_ns, h.rtt_ns);
      figures.rtt_max_ns = std::max(figures.rtt_max_ns, h.rtt_ns);
    }
  }
  if (figures.bottleneck_bps == 0) {
    return Status::Error("the PS's port " + net.ps_switch_name() + ":" +
                         std::to_string(built.ps_port) + " is the bottleneck and must be shaped " +
                         "(a rate: [port." + std::to_string(built.ps_port) + "] rate in " +
                         net.ps_switch_name() + "'s .ini)");
  }
  return Status::Ok();
}

// The PS's port: its depth in packets (all queues) every sample_ns, and telemetry rows.
class QueueRecorder {
 public:
  QueueRecorder(Switch& sw, PortId port, const PcnExperimentOptions& o)
      : sw_(sw), port_(port), period_ns_(o.telemetry_period_ns) {}

  Status Install(Engine& engine, const PcnExperimentOptions& o) {
    if (!o.telemetry_path.empty()) {
      Result<std::unique_ptr<TelemetryWriter>> w = TelemetryWriter::Open(o.telemetry_path);
      if (!w.ok()) return w.status();
      telemetry_ = std::move(*w);
    }
    engine.SetSampler(o.sample_ns, [this](TimeNs t) { Sample(t); });
    return Status::Ok();
  }
  Status Close() { return telemetry_ ? telemetry_->Close() : Status::Ok(); }

  std::vector<uint32_t> depth;
  TimeNs first_sample = kNever;

 private:
  void Sample(TimeNs t) {
    if (first_sample == kNever) first_sample = t;
    uint32_t d = 0;
    for (int q = 0; q < static_cast<int>(kQueuesPerPort); ++q) d += sw_.tm().DepthPkts(port_, q);
    depth.push_back(d);
    if (telemetry_ && t >= next_row_) {
      snaps_.clear();
      SnapshotQueues(sw_.tm(), snaps_);
      std::erase_if(snaps_, [this](const QueueSnapshot& s) { return s.port != port_; });
      telemetry_->Write(t, sw_.name(), snaps_);
      next_row_ = t + period_ns_;
    }
  }

  Switch& sw_;
  PortId port_;
  TimeNs period_ns_;
  std::unique_ptr<TelemetryWriter> telemetry_;
  TimeNs next_row_ = 0;
  std::vector<QueueSnapshot> snaps_;
};

// Each worker's bursts with the PS's queue over each (sampled depth, in file order of workers).
void AddBursts(const PcnNetwork& net, const PcnBuilt& built, const QueueRecorder& queue,
               const PcnExperimentOptions& o, PcnRunResult& run) {
  const std::vector<uint32_t>& depth = queue.depth;
  const double frame_ms = static_cast<double>(PcnFullFrameNs(run.network.bottleneck_bps)) / 1e6;
  auto sample_at = [&](TimeNs t) -> std::size_t {
    if (queue.first_sample == kNever || t <= queue.first_sample) return 0;
    return std::min<std::size_t>(static_cast<std::size_t>((t - queue.first_sample) / o.sample_ns),
                                 depth.empty() ? 0 : depth.size() - 1);
  };
  for (uint32_t w = 0; w < built.workers.size(); ++w) {
    for (const DdlBurst& b : built.workers[w]->bursts()) {
      PcnBurstMetrics m;
      m.worker = w;
      m.iteration = b.index;
      m.start_ns = b.start_ns;
      m.done_ns = b.done_ns;
      m.bytes = b.bytes;
      m.arrival_ns = b.start_ns + net.workers[w].to_ps_switch;
      m.bct_ns = b.done_ns - b.start_ns;
      m.ddl_mbps = static_cast<double>(b.bytes) * 8 / 1e6 / (static_cast<double>(m.bct_ns) / 1e9);
      m.retransmits = b.retransmits;
      m.acked = b.ack_ns != kNever;
      if (!depth.empty()) {
        const std::size_t a = sample_at(m.arrival_ns), z = std::max(a, sample_at(b.done_ns));
        m.start_queue = depth[a];
        double sum = 0;
        for (std::size_t i = a; i <= z; ++i) {
          m.max_queue = std::max(m.max_queue, depth[i]);
          sum += depth[i];
        }
        m.mean_queue_delay_ms = sum / static_cast<double>(z - a + 1) * frame_ms;
      }
      run.bursts.push_back(m);
    }
  }
}

// The warm-up, the DDL (until every worker's last burst), then the rest of the run: the
// background goodput before and during the DDL.
Status RunPhases(Engine& engine, const PcnBuilt& built, const PcnExperimentOptions& o,
                 PcnRunResult& run) {
  auto background_bytes = [&] {
    uint64_t bytes = 0;
    for (std::size_t i = 0; i < built.background.size(); ++i) {
      const EcnTcpSink* sink = built.ps->sink(static_cast<uint16_t>(kBackgroundPortBase + i));
      for (const EcnTcpFlowStats& f : sink->flows()) bytes += f.bytes;
    }
    return bytes;
  };
  SWEMU_RETURN_IF_ERROR(engine.Run(o.ddl_start_ns));
  const uint64_t bg_before = background_bytes();
  auto all_done = [&] {
    return std::all_of(built.workers.begin(), built.workers.end(),
                       [](const std::unique_ptr<DdlWorker>& w) { return w->finished(); });
  };
  SWEMU_RETURN_IF_ERROR(engine.Run(o.duration_ns, all_done));
  if (!all_done()) {
    return Status::Error("the DDL's " + std::to_string(o.iterations) +
                         " bursts did not finish within the run's duration (" +
                         std::to_string(o.duration_ns / 1'000'000) + " ms): lengthen it");
  }
  const TimeNs ddl_end = engine.Now();
  const uint64_t bg_during = background_bytes() - bg_before;
  SWEMU_RETURN_IF_ERROR(engine.Run(o.duration_ns));
  run.background_mbps = static_cast<double>(bg_during) * 8 / 1e6 /
                        (static_cast<double>(ddl_end - o.ddl_start_ns) / 1e9);
  run.background_mbps_before =
      static_cast<double>(bg_before) * 8 / 1e6 / (static_cast<double>(o.ddl_start_ns) / 1e9);
  return Status::Ok();
}

}  // namespace

Status PcnExperimentOptions::Validate() const {
  if (bottleneck_bps == 0 || edge_bps == 0) return Status::Error("link rates must be positive");
  if (rtt_ns == 0) return Status::Error("RTT must be positive");
  if (queue_pkts == 0 || queue_pkts > kTmMaxQueueDepthPkts) {
    return Status::Error("queue capacity " + std::to_string(queue_pkts) + ": 1.." +
                         std::to_string(kTmMaxQueueDepthPkts) + " packets");
  }
  if (initial_threshold == 0) return Status::Error("initial threshold must be positive");
  if (!PcnThresholdEncodable(pcn_threshold) || pcn_threshold >= initial_threshold) {
    return Status::Error("PCN threshold " + std::to_string(pcn_threshold) +
                         ": a multiple of 5 below the initial threshold " +
                         std::to_string(initial_threshold) + " (0..75)");
  }
  if (workers == 0 || workers > 64) return Status::Error("workers: 1..64");
  if (background_per_leaf > 64) return Status::Error("background hosts per leaf: 0..64");
  if (iterations == 0 || burst_bytes == 0) {
    return Status::Error("the DDL needs at least one iteration and a positive burst size");
  }
  if (ddl_start_ns >= duration_ns) {
    return Status::Error("the DDL must start before the end of the run (--duration)");
  }
  if (sample_ns == 0 || telemetry_period_ns == 0) return Status::Error("sampling periods must be positive");
  return Status::Ok();
}

double PcnRunResult::MeanStartQueue() const {
  return Mean(bursts, [](const PcnBurstMetrics& b) { return double(b.start_queue); });
}
double PcnRunResult::MeanMaxQueue() const {
  return Mean(bursts, [](const PcnBurstMetrics& b) { return double(b.max_queue); });
}
double PcnRunResult::MeanBctMs() const {
  return Mean(bursts, [](const PcnBurstMetrics& b) { return double(b.bct_ns) / 1e6; });
}
double PcnRunResult::MeanDdlMbps() const {
  return Mean(bursts, [](const PcnBurstMetrics& b) { return b.ddl_mbps; });
}
double PcnRunResult::MeanQueueDelayMs() const {
  return Mean(bursts, [](const PcnBurstMetrics& b) { return b.mean_queue_delay_ms; });
}

Result<PcnRunResult> RunPcnExperiment(const PcnExperimentOptions& o, const PcnNetwork& net,
                                      bool pcn) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  Engine engine(o.seed, 1 << 17);
  PcnRunResult run;
  PcnBuilt built;
  SWEMU_RETURN_IF_ERROR(BuildPcnNetwork(engine, net, o, pcn, built, run.network));
  QueueRecorder queue(*built.ps_switch, built.ps_port, o);
  SWEMU_RETURN_IF_ERROR(queue.Install(engine, o));
  EngineLimits limits;
  limits.max_virtual_ns = o.duration_ns + 60'000'000'000;
  engine.SetLimits(limits);
  SWEMU_RETURN_IF_ERROR(RunPhases(engine, built, o, run));
  SWEMU_RETURN_IF_ERROR(queue.Close());

  run.pcn = pcn;
  run.virtual_ns = engine.Now();
  run.events = engine.events_processed();
  const TrafficManager& tm = built.ps_switch->tm();
  for (int q = 0; q < static_cast<int>(kQueuesPerPort); ++q) {
    run.root_marks += tm.queue_counters(built.ps_port, q).marked;
    run.root_drops += tm.queue_counters(built.ps_port, q).dropped;
  }
  const PcnCounters& counters = static_cast<PcnProgram&>(built.ps_switch->program()).counters();
  run.pcn_starts = counters.starts;
  run.pcn_bursts_arrived = counters.bursts_arrived;
  run.pcn_timeouts = counters.timeouts;
  AddBursts(net, built, queue, o, run);
  return run;
}

Result<PcnRunResult> RunPcnExperiment(const PcnExperimentOptions& o, bool pcn) {
  Result<PcnNetwork> net = DefaultPcnNetwork(o);
  if (!net.ok()) return net.status();
  return RunPcnExperiment(o, *net, pcn);
}

Status CheckPcnNetwork(const PcnExperimentOptions& o, const PcnNetwork& net) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  Engine engine(o.seed, 64);
  PcnBuilt built;
  PcnNetworkFigures figures;
  return BuildPcnNetwork(engine, net, o, true, built, figures);
}

namespace {

std::string Change(double without, double with) {
  if (without == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", (with - without) / without * 100);
  return buf;
}

// The run's network and options: the shape, the bottleneck as built, the DDL.
std::string Header(const PcnExperimentOptions& o, const PcnNetworkFigures& n) {
  char low[32], high[32];
  std::snprintf(low, sizeof(low), "%.2f", n.rtt_min_ns / 1e6);
  std::snprintf(high, sizeof(high), "%.2f", n.rtt_max_ns / 1e6);
  const std::string rtt = std::string(low) == high ? low : std::string(low) + "-" + high;
  char line[512];
  std::snprintf(line, sizeof(line),
                "PCN in virtual time: %s, %u workers, %s senders\nbottleneck %.0f Mbit/s toward "
                "the PS, edges %.0f Mbit/s, RTT %s ms, queue %u packets, thresholds %u -> %u\n"
                "DDL from %.1f s: %u bursts of %.1f MB per worker, %.1f s idle; run %.1f s\n\n",
                n.shape.c_str(), n.workers, CongestionControlName(o.cc), n.bottleneck_bps / 1e6,
                n.edge_bps / 1e6, rtt.c_str(), n.queue_pkts, o.initial_threshold, o.pcn_threshold,
                o.ddl_start_ns / 1e9, o.iterations, o.burst_bytes / 1e6, o.idle_ns / 1e9,
                o.duration_ns / 1e9);
  return line;
}

}  // namespace

std::string FormatPcnComparison(const PcnExperimentOptions& o, const PcnRunResult& without,
                                const PcnRunResult& with) {
  std::string out = Header(o, without.network);
  char line[512];
  std::snprintf(line, sizeof(line), "%-36s %10s %10s %8s | %10s %10s %8s\n", "metric",
                "paper w/o", "paper PCN", "change", "swemu w/o", "swemu PCN", "change");
  out += line;
  auto row = [&](const char* name, const char* pw, const char* pp, const char* pc, double w,
                 double p, const char* fmt) {
    char a[32], b[32];
    std::snprintf(a, sizeof(a), fmt, w);
    std::snprintf(b, sizeof(b), fmt, p);
    std::snprintf(line, sizeof(line), "%-36s %10s %10s %8s | %10s %10s %8s\n", name, pw, pp, pc, a,
                  b, Change(w, p).c_str());
    out += line;
  };
  row("queue at burst start (packets)", "35", "5", "-85.7%", without.MeanStartQueue(),
      with.MeanStartQueue(), "%.1f");
  row("max queue per burst (packets)", "54.8", "44.1", "-19.5%", without.MeanMaxQueue(),
      with.MeanMaxQueue(), "%.1f");
  row("burst completion time (ms)", "-", "-", "-39%", without.MeanBctMs(), with.MeanBctMs(),
      "%.1f");
  row("DDL throughput (Mbit/s)", "-", "-", "+72%", without.MeanDdlMbps(), with.MeanDdlMbps(),
      "%.1f");
  row("background throughput (Mbit/s)", "-", "-", "-5.7%", without.background_mbps,
      with.background_mbps, "%.1f");
  row("queueing delay in bursts (ms)", "-", "-", "-13%", without.MeanQueueDelayMs(),
      with.MeanQueueDelayMs(), "%.2f");
  std::snprintf(line, sizeof(line),
                "\n%s port toward the PS: %llu/%llu CE marks, %llu/%llu drops (w/o / PCN); "
                "STARTs %llu, bursts arrived %llu, timeouts %llu (PCN run)\n",
                with.network.ps_switch.c_str(),
                static_cast<unsigned long long>(without.root_marks),
                static_cast<unsigned long long>(with.root_marks),
                static_cast<unsigned long long>(without.root_drops),
                static_cast<unsigned long long>(with.root_drops),
                static_cast<unsigned long long>(with.pcn_starts),
                static_cast<unsigned long long>(with.pcn_bursts_arrived),
                static_cast<unsigned long long>(with.pcn_timeouts));
  out += line;
  return out;
}

std::string PcnRunJson(const PcnRunResult& run) {
  std::string out = "{\"pcn\": " + std::string(run.pcn ? "true" : "false") + ", \"bursts\": [";
  char buf[512];
  for (std::size_t i = 0; i < run.bursts.size(); ++i) {
    const PcnBurstMetrics& b = run.bursts[i];
    std::snprintf(buf, sizeof(buf),
                  "%s{\"worker\": %u, \"iteration\": %u, \"start_ns\": %lld, "
                  "\"done_ns\": %lld, \"bytes\": %llu, \"arrival_ns\": %lld, "
                  "\"start_queue\": %u, \"max_queue\": %u, \"queue_delay_ms\": %.4f, "
                  "\"bct_ms\": %.3f, \"ddl_mbps\": %.3f, \"retransmits\": %llu, "
                  "\"acked\": %s}",
                  i ? ", " : "", b.worker, b.iteration, static_cast<long long>(b.start_ns),
                  static_cast<long long>(b.done_ns), static_cast<unsigned long long>(b.bytes),
                  static_cast<long long>(b.arrival_ns),
                  b.start_queue, b.max_queue, b.mean_queue_delay_ms, b.bct_ns / 1e6, b.ddl_mbps,
                  static_cast<unsigned long long>(b.retransmits), b.acked ? "true" : "false");
    out += buf;
  }
  std::snprintf(buf, sizeof(buf),
                "], \"background_mbps\": %.3f, \"background_mbps_before\": %.3f, "
                "\"root_marks\": %llu, \"root_drops\": %llu, \"pcn_starts\": %llu, "
                "\"pcn_bursts_arrived\": %llu, \"pcn_timeouts\": %llu}",
                run.background_mbps, run.background_mbps_before,
                static_cast<unsigned long long>(run.root_marks),
                static_cast<unsigned long long>(run.root_drops),
                static_cast<unsigned long long>(run.pcn_starts),
                static_cast<unsigned long long>(run.pcn_bursts_arrived),
                static_cast<unsigned long long>(run.pcn_timeouts));
  return out + buf;
}

}  // namespace swemu
