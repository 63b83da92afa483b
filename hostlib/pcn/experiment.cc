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
constexpr uint32_t kWorkerHostBase = 100;       // workers are hosts 100.. of their leaf
constexpr PortId kRootPsPort = 2;
constexpr uint32_t kFullFrame = 1514;
const MacAddr kPsMac = MacAddr::FromU64(0x0200000000FEull);
constexpr Ipv4Addr kPsIp = (10u << 24) | 254;  // 10.0.0.254

MacAddr HostMac(uint32_t leaf, uint32_t host) {
  return MacAddr::FromU64(0x020000000000ull | (uint64_t{leaf} << 8) | host);
}
Ipv4Addr HostIp(uint32_t leaf, uint32_t host) { return (10u << 24) | (leaf << 8) | host; }
std::string Leaf(uint32_t leaf) { return "leaf" + std::to_string(leaf); }

TimeNs FrameNs(uint64_t bps) {
  return static_cast<TimeNs>(uint64_t{kFullFrame + kEthernetWireOverheadBytes} * 8 * 1'000'000'000 / bps);
}

double Mean(const std::vector<PcnBurstMetrics>& bursts, double (*field)(const PcnBurstMetrics&)) {
  if (bursts.empty()) return 0;
  double sum = 0;
  for (const PcnBurstMetrics& b : bursts) sum += field(b);
  return sum / static_cast<double>(bursts.size());
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

Result<PcnRunResult> RunPcnExperiment(const PcnExperimentOptions& o, bool pcn) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  Engine engine(o.seed, 1 << 17);
  // Propagation: 40% of each one-way trip on each host link, 20% on the leaf-root link.
  const TimeNs one_way = o.rtt_ns / 2;
  const TimeNs link_delay = one_way / 5;
  const TimeNs host_delay = (one_way - link_delay) / 2;
  // Hosts per leaf: background 1..B, workers 100.. (worker w on leaf 1 + w % 2).
  std::vector<uint32_t> workers_on[3];
  for (uint32_t w = 0; w < o.workers; ++w) workers_on[1 + w % 2].push_back(w);

  auto configure = [&](const std::string& name, uint16_t ports) {
    SwitchConfig c;
    c.name = name;
    c.num_ports = ports;
    c.program = "pcn";
    c.program_options.Set("initial_threshold", std::to_string(o.initial_threshold));
    c.seed = o.seed;
    return c;
  };
  SWEMU_RETURN_IF_ERROR(engine.AddSwitch(configure("root", 3), ""));
  for (uint32_t leaf = 1; leaf <= 2; ++leaf) {
    const auto ports = static_cast<uint16_t>(1 + o.background_per_leaf + workers_on[leaf].size());
    SWEMU_RETURN_IF_ERROR(engine.AddSwitch(configure(Leaf(leaf), ports), ""));
  }
  Switch& root = *engine.FindSwitch("root");
  const std::string ps_mac = FormatMac(kPsMac);
  for (Switch* sw : {&root, engine.FindSwitch("leaf1"), engine.FindSwitch("leaf2")}) {
    SWEMU_RETURN_IF_ERROR(sw->Command("table_add pcn_job job 10.0.0.254 => 0"));
    SWEMU_RETURN_IF_ERROR(
        sw->Command("table_add dmac forward " + ps_mac + " => " + (sw == &root ? "2" : "0")));
  }
  SWEMU_RETURN_IF_ERROR(root.Command("set_port_rate 2 " + std::to_string(o.bottleneck_bps)));
  SWEMU_RETURN_IF_ERROR(root.Command("set_queue_depth " + std::to_string(o.queue_pkts) + " 2"));
  for (uint32_t leaf = 1; leaf <= 2; ++leaf) {
    SWEMU_RETURN_IF_ERROR(engine.AddLink({"root", static_cast<PortId>(leaf - 1), Leaf(leaf), 0,
                                          o.edge_bps, link_delay, 0}));
  }

  EcnTcpOptions tcp;
  tcp.cc = o.cc;
  tcp.min_rto_ns = o.min_rto_ns;
  tcp.link_bps = o.edge_bps;
  Result<EngineTransport*> tps = EngineTransport::Attach(engine, "root", kRootPsPort, host_delay);
  if (!tps.ok()) return tps.status();
  DdlPs ps(**tps, kPsMac, kPsIp, kPcnDefaultUdpPort, tcp);
  (*tps)->SetEndpoint(&ps);
  ps.Listen(kBurstPort);

  std::vector<std::unique_ptr<TcpHost>> background;
  std::vector<std::unique_ptr<DdlWorker>> workers;
  for (uint32_t leaf = 1; leaf <= 2; ++leaf) {
    Switch& sw = *engine.FindSwitch(Leaf(leaf));
    auto attach = [&](uint32_t host, PortId port) -> Result<EngineTransport*> {
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add dmac forward " + FormatMac(HostMac(leaf, host)) +
                                         " => " + std::to_string(port)));
      SWEMU_RETURN_IF_ERROR(root.Command("table_add dmac forward " + FormatMac(HostMac(leaf, host)) +
                                           " => " + std::to_string(leaf - 1)));
      return EngineTransport::Attach(engine, Leaf(leaf), port, host_delay);
    };
    for (uint32_t h = 1; h <= o.background_per_leaf; ++h) {
      Result<EngineTransport*> t = attach(h, static_cast<PortId>(h));
      if (!t.ok()) return t.status();
      auto host = std::make_unique<TcpHost>(**t, HostMac(leaf, h), HostIp(leaf, h), tcp);
      const auto index = static_cast<uint16_t>((leaf - 1) * o.background_per_leaf + h - 1);
      const auto port = static_cast<uint16_t>(kBackgroundPortBase + index);
      ps.Listen(port);
      // Staggered by 1 ms each, as iperf3 clients started one after another.
      host->AddFlow({TcpEnd{kPsMac, kPsIp, port}, 40000, TimeNs{index} * 1'000'000, o.duration_ns, 0});
      (*t)->SetEndpoint(host.get());
      background.push_back(std::move(host));
    }
    for (std::size_t i = 0; i < workers_on[leaf].size(); ++i) {
      const uint32_t h = kWorkerHostBase + workers_on[leaf][i];
      Result<EngineTransport*> t =
          attach(h, static_cast<PortId>(1 + o.background_per_leaf + i));
      if (!t.ok()) return t.status();
      DdlWorkerOptions w;
      w.burst_bytes = o.burst_bytes;
      w.burst_rate_bps = o.burst_rate_bps;
      w.iterations = o.iterations;
      w.first_ns = o.ddl_start_ns;
      w.idle_ns = o.idle_ns;
      w.ps = TcpEnd{kPsMac, kPsIp, kPcnDefaultUdpPort};
      w.ps_data_port = kBurstPort;
      w.pcn = pcn;
      w.announce.threshold = o.pcn_threshold;
      w.announce.ack_wait_ns = o.ack_wait_ns != 0 ? o.ack_wait_ns : 2 * o.rtt_ns;
      w.min_lead_ns = o.lead_ns;
      SWEMU_RETURN_IF_ERROR(w.Validate());
      auto worker = std::make_unique<DdlWorker>(**t, HostMac(leaf, h), HostIp(leaf, h), w, tcp);
      (*t)->SetEndpoint(worker.get());
      workers.push_back(std::move(worker));
    }
  }

  // The root's PS port: its depth in packets (all queues) every sample_ns, and telemetry rows.
  std::vector<uint32_t> depth;
  TimeNs first_sample = kNever;
  std::unique_ptr<TelemetryWriter> telemetry;
  if (!o.telemetry_path.empty()) {
    Result<std::unique_ptr<TelemetryWriter>> w = TelemetryWriter::Open(o.telemetry_path);
    if (!w.ok()) return w.status();
    telemetry = std::move(*w);
  }
  TimeNs next_row = 0;
  std::vector<QueueSnapshot> snaps;
  engine.SetSampler(o.sample_ns, [&](TimeNs t) {
    if (first_sample == kNever) first_sample = t;
    uint32_t d = 0;
    for (int q = 0; q < static_cast<int>(kQueuesPerPort); ++q) d += root.tm().DepthPkts(kRootPsPort, q);
    depth.push_back(d);
    if (telemetry && t >= next_row) {
      snaps.clear();
      SnapshotQueues(root.tm(), snaps);
      std::erase_if(snaps, [](const QueueSnapshot& s) { return s.port != kRootPsPort; });
      telemetry->Write(t, "root", snaps);
      next_row = t + o.telemetry_period_ns;
    }
  });
  EngineLimits limits;
  limits.max_virtual_ns = o.duration_ns + 60'000'000'000;
  engine.SetLimits(limits);

  auto background_bytes = [&] {
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < 2 * o.background_per_leaf; ++i) {
      const EcnTcpSink* sink = ps.sink(static_cast<uint16_t>(kBackgroundPortBase + i));
      for (const EcnTcpFlowStats& f : sink->flows()) bytes += f.bytes;
    }
    return bytes;
  };
  SWEMU_RETURN_IF_ERROR(engine.Run(o.ddl_start_ns));
  const uint64_t bg_before = background_bytes();
  auto all_done = [&] {
    return std::all_of(workers.begin(), workers.end(),
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
  if (telemetry) SWEMU_RETURN_IF_ERROR(telemetry->Close());

  PcnRunResult run;
  run.pcn = pcn;
  run.virtual_ns = engine.Now();
  run.events = engine.events_processed();
  run.background_mbps = static_cast<double>(bg_during) * 8 / 1e6 /
                        (static_cast<double>(ddl_end - o.ddl_start_ns) / 1e9);
  run.background_mbps_before =
      static_cast<double>(bg_before) * 8 / 1e6 / (static_cast<double>(o.ddl_start_ns) / 1e9);
  for (int q = 0; q < static_cast<int>(kQueuesPerPort); ++q) {
    run.root_marks += root.tm().queue_counters(kRootPsPort, q).marked;
    run.root_drops += root.tm().queue_counters(kRootPsPort, q).dropped;
  }
  const PcnCounters& counters = static_cast<PcnProgram&>(root.program()).counters();
  run.pcn_starts = counters.starts;
  run.pcn_bursts_arrived = counters.bursts_arrived;
  run.pcn_timeouts = counters.timeouts;

  const TimeNs to_root = host_delay + FrameNs(o.edge_bps) + link_delay;
  const double frame_ms = static_cast<double>(FrameNs(o.bottleneck_bps)) / 1e6;
  auto sample_at = [&](TimeNs t) -> std::size_t {
    if (first_sample == kNever || t <= first_sample) return 0;
    return std::min<std::size_t>(static_cast<std::size_t>((t - first_sample) / o.sample_ns),
                                 depth.empty() ? 0 : depth.size() - 1);
  };
  for (uint32_t w = 0; w < workers.size(); ++w) {
    for (const DdlBurst& b : workers[w]->bursts()) {
      PcnBurstMetrics m;
      m.worker = w;
      m.iteration = b.index;
      m.start_ns = b.start_ns;
      m.done_ns = b.done_ns;
      m.bytes = b.bytes;
      m.arrival_ns = b.start_ns + to_root;
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
  return run;
}

namespace {

std::string Change(double without, double with) {
  if (without == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", (with - without) / without * 100);
  return buf;
}

}  // namespace

std::string FormatPcnComparison(const PcnExperimentOptions& o, const PcnRunResult& without,
                                const PcnRunResult& with) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line),
                "PCN in virtual time: root + 2 leaves, %u background hosts per leaf, %u workers, "
                "%s senders\nbottleneck %.0f Mbit/s toward the PS, edges %.0f Mbit/s, RTT %.2f ms, "
                "queue %u packets, thresholds %u -> %u\nDDL from %.1f s: %u bursts of %.1f MB per "
                "worker, %.1f s idle; run %.1f s\n\n",
                o.background_per_leaf, o.workers, CongestionControlName(o.cc),
                o.bottleneck_bps / 1e6, o.edge_bps / 1e6, o.rtt_ns / 1e6, o.queue_pkts,
                o.initial_threshold, o.pcn_threshold, o.ddl_start_ns / 1e9, o.iterations,
                o.burst_bytes / 1e6, o.idle_ns / 1e9, o.duration_ns / 1e9);
  out += line;
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
                "\nroot port toward the PS: %llu/%llu CE marks, %llu/%llu drops (w/o / PCN); "
                "STARTs %llu, bursts arrived %llu, timeouts %llu (PCN run)\n",
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
