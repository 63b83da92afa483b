#include "hostlib/dlcp/experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/dlcp/host.h"
#include "hostlib/dlcp/thresholds.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/rng.h"

namespace swemu {
namespace {

constexpr uint64_t kSplitBytes = 4u << 20;  // tensors above this (scaled) go to every PS
constexpr uint16_t kPsTcpPort = 5000;
constexpr uint32_t kWorkersPerPs = 4;

MacAddr HostMac(uint32_t tor, uint32_t i) {
  return MacAddr::FromU64(0x020000000000ull | (uint64_t{tor + 1} << 8) | (i + 1));
}
MacAddr TorMac(uint32_t tor) { return MacAddr::FromU64(0x0200000000FEull | (uint64_t{tor + 1} << 8)); }
MacAddr SpineMac(uint32_t s) { return MacAddr::FromU64(0x020000010000ull | (s + 1)); }
Ipv4Addr HostIp(uint32_t tor, uint32_t i) { return (10u << 24) | ((tor + 1) << 8) | (i + 1); }
std::string IpText(Ipv4Addr ip) { return FormatIpv4(ip); }
std::string Tor(uint32_t t) { return "tor" + std::to_string(t); }
std::string Spine(uint32_t s) { return "spine" + std::to_string(s); }

// A push flow goes from `worker` to `ps`; a pull flow from `ps` back to `worker`. A push group
// is one PS's piece of one layer: its pulls start once all its pushes have arrived.
struct Flow {
  uint32_t worker = 0, ps = 0, layer = 0, tensor = 0;
  uint64_t bytes = 0;
  bool pull = false;
  uint32_t group = 0;
  TimeNs start_ns = kNever;  // kNever: a pull not started yet
  uint16_t local_port = 0;   // the DCTCP sender's, unique per sending host
};

constexpr TimeNs kPullSliceNs = 10'000;  // how often push groups are checked for completion

}  // namespace

Status DlcpExperimentOptions::Validate() const {
  if (tors < 2 || tors > 16 || hosts_per_tor < 1 || hosts_per_tor > 32 || spines < 1 ||
      spines > 8) {
    return Status::Error("topology: 2..16 ToRs, 1..32 hosts per ToR, 1..8 spines");
  }
  if (tors * hosts_per_tor < kWorkersPerPs) return Status::Error("fewer hosts than one PS's workers");
  if (link_bps == 0 || buffer_pkts == 0 || scale == 0) {
    return Status::Error("link rate, buffer and scale must be positive");
  }
  if (!(loss_bound >= 0 && loss_bound < 1)) return Status::Error("loss bound in [0, 1)");
  if (!(pull_bound >= 0 && pull_bound < 1)) return Status::Error("pull bound in [0, 1)");
  if (!(dlcp_load >= 0 && dlcp_load <= 100)) return Status::Error("DLCP load in [0, 100]");
  return Status::Ok();
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, bool dlcp) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  Result<ModelLayers> model = BundledModel(o.model);
  if (!model.ok()) return model.status();
  const uint32_t hosts = o.tors * o.hosts_per_tor;
  // PSs: every 4th host (colocated with a worker); every host is a worker.
  std::vector<uint32_t> pss;
  for (uint32_t h = 0; h < hosts; h += kWorkersPerPs) pss.push_back(h);
  // The tensors of one iteration, the same for both runs (seeded): each layer's PS is drawn once
  // (every worker pushes that layer to it); a layer over 4 MB (scaled) is split over every PS.
  SplitMix64 rng(o.seed);
  std::vector<Flow> flows;
  uint32_t tensor_id = 1, groups = 0;
  for (uint32_t l = 0; l < model->layers.size(); ++l) {
    const uint64_t bytes = std::max<uint64_t>(model->layers[l].params * 4 / o.scale, 4) / 4 * 4;
    std::vector<uint32_t> targets;
    if (bytes > kSplitBytes / o.scale) {
      targets = pss;
    } else {
      targets.push_back(pss[rng.Next() % pss.size()]);
    }
    const uint64_t piece = std::max<uint64_t>(bytes / targets.size() / 4 * 4, 4);
    for (uint32_t ps : targets) {
      for (uint32_t w = 0; w < hosts; ++w) {
        if (ps == w) continue;  // the worker's own PS: no network
        flows.push_back({w, ps, l, tensor_id++, piece, false, groups, 0});
      }
      ++groups;
    }
  }
  const std::size_t pushes = flows.size();
  if (o.pull) {
    for (std::size_t f = 0; f < pushes; ++f) {
      Flow p = flows[f];
      p.pull = true;
      p.tensor = tensor_id++;
      p.start_ns = kNever;
      flows.push_back(p);
    }
  }
  std::vector<uint32_t> next_port(hosts, 10000);
  for (Flow& fl : flows) {
    uint32_t& port = next_port[fl.pull ? fl.ps : fl.worker];
    if (port > 65535) return Status::Error("more than 55536 flows from one host");
    fl.local_port = static_cast<uint16_t>(port++);
  }
  // Pushes still to arrive per group.
  std::vector<uint32_t> group_pending(groups, 0);
  for (std::size_t f = 0; f < pushes; ++f) ++group_pending[flows[f].group];

  Engine engine(o.seed, 1 << 18);
  const uint16_t tor_ports = static_cast<uint16_t>(o.hosts_per_tor + o.spines);
  auto config = [&](const std::string& name, uint16_t ports) {
    SwitchConfig c;
    c.name = name;
    c.num_ports = ports;
    c.program = dlcp ? "dlcp" : "l2l3";
    c.seed = o.seed;
    return c;
  };
  for (uint32_t t = 0; t < o.tors; ++t) SWEMU_RETURN_IF_ERROR(engine.AddSwitch(config(Tor(t), tor_ports), ""));
  for (uint32_t s = 0; s < o.spines; ++s) {
    SWEMU_RETURN_IF_ERROR(engine.AddSwitch(config(Spine(s), static_cast<uint16_t>(o.tors)), ""));
  }
  const std::string mode = dlcp ? "1" : "0";  // per-packet spraying for DLCP, per-flow for DCTCP
  for (uint32_t t = 0; t < o.tors; ++t) {
    Switch& sw = *engine.FindSwitch(Tor(t));
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add router_mac route " + FormatMac(TorMac(t)) + " =>"));
    for (uint32_t i = 0; i < o.hosts_per_tor; ++i) {
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_nhop " + IpText(HostIp(t, i)) +
                                         "/32 => " + std::to_string(i + 1)));
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add nexthop rewrite " + std::to_string(i + 1) + " => " +
                                         FormatMac(HostMac(t, i)) + " " + FormatMac(TorMac(t)) +
                                         " " + std::to_string(i)));
      SWEMU_RETURN_IF_ERROR(sw.Command("set_port_rate " + std::to_string(i) + " " +
                                         std::to_string(o.link_bps)));
    }
    for (uint32_t u = 0; u < o.tors; ++u) {
      if (u == t) continue;
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_ecmp 10.0." + std::to_string(u + 1) +
                                         ".0/24 => 1"));
    }
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add ecmp_group ecmp_select 1 => " +
                                       std::to_string(o.spines) + " " + mode));
    for (uint32_t s = 0; s < o.spines; ++s) {
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ecmp_member set_nhop 1 " + std::to_string(s) +
                                         " => " + std::to_string(100 + s)));
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add nexthop rewrite " + std::to_string(100 + s) +
                                         " => " + FormatMac(SpineMac(s)) + " " +
                                         FormatMac(TorMac(t)) + " " +
                                         std::to_string(o.hosts_per_tor + s)));
      SWEMU_RETURN_IF_ERROR(engine.AddLink({Tor(t), static_cast<PortId>(o.hosts_per_tor + s),
                                            Spine(s), static_cast<PortId>(t), o.link_bps,
                                            o.link_delay_ns, 0}));
    }
  }
  for (uint32_t s = 0; s < o.spines; ++s) {
    Switch& sw = *engine.FindSwitch(Spine(s));
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add router_mac route " + FormatMac(SpineMac(s)) + " =>"));
    for (uint32_t u = 0; u < o.tors; ++u) {
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_nhop 10.0." + std::to_string(u + 1) +
                                         ".0/24 => " + std::to_string(u + 1)));
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add nexthop rewrite " + std::to_string(u + 1) + " => " +
                                         FormatMac(TorMac(u)) + " " + FormatMac(SpineMac(s)) + " " +
                                         std::to_string(u)));
    }
  }
  // Buffers: the baseline's queues hold buffer_pkts and mark at 65 packets; DLCP's data queues
  // get S_i and L_i from the program's defaults, from T and d when given, or from Appendix B
  // at dlcp_load.
  std::string thresholds;
  if (o.dlcp_t != 0) {
    thresholds = "dlcp_thresholds " + std::to_string(o.dlcp_t) + " " + std::to_string(o.dlcp_d);
  } else if (o.dlcp_load > 0) {
    DlcpModelInput in;
    for (const LayerSize& layer : model->layers) in.layer_sizes.push_back(layer.params);
    in.load = o.dlcp_load;
    in.buffer_pkts = o.buffer_pkts;
    Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
    if (!plan.ok()) return Status::Error("Appendix B: " + plan.message());
    thresholds = DlcpThresholdsCommand(*plan);
  }
  for (std::size_t k = 0; k < engine.num_switches(); ++k) {
    Switch& sw = engine.switch_at(k);
    if (dlcp) {
      if (!thresholds.empty()) SWEMU_RETURN_IF_ERROR(sw.Command(thresholds));
    } else {
      SWEMU_RETURN_IF_ERROR(sw.Command("set_queue_depth " + std::to_string(o.buffer_pkts)));
      SWEMU_RETURN_IF_ERROR(sw.Command("set_ecn_threshold all all " + std::to_string(65 * 1514)));
    }
  }

  std::vector<std::unique_ptr<DlcpHost>> dlcp_hosts;
  std::vector<std::unique_ptr<TcpHost>> tcp_hosts;
  std::vector<EngineTransport*> transports;
  std::vector<EcnTcpSender*> senders(flows.size(), nullptr);
  DlcpHostOptions dopt;
  dopt.rate.link_bps = o.link_bps;
  EcnTcpOptions topt;
  topt.cc = CongestionControl::kDctcp;
  topt.min_rto_ns = o.min_rto_ns;
  // Model flows have no handshake to take a first RTT sample from: start the RTO where a
  // connection's handshake would have left it in a datacenter, at the minimum, not at 1 s.
  topt.initial_rto_ns = o.min_rto_ns;
  topt.link_bps = o.link_bps;
  for (uint32_t h = 0; h < hosts; ++h) {
    const uint32_t t = h / o.hosts_per_tor, i = h % o.hosts_per_tor;
    Result<EngineTransport*> tr =
        EngineTransport::Attach(engine, Tor(t), static_cast<PortId>(i), o.link_delay_ns);
    if (!tr.ok()) return tr.status();
    transports.push_back(*tr);
    if (dlcp) {
      dlcp_hosts.push_back(std::make_unique<DlcpHost>(**tr, HostMac(t, i), HostIp(t, i), dopt));
      (*tr)->SetEndpoint(dlcp_hosts.back().get());
    } else {
      tcp_hosts.push_back(std::make_unique<TcpHost>(**tr, HostMac(t, i), HostIp(t, i), topt));
      tcp_hosts.back()->Listen(kPsTcpPort);
      (*tr)->SetEndpoint(tcp_hosts.back().get());
    }
  }
  // Starts flow f now: a push at 0, a pull when its group's pushes have all arrived.
  const uint32_t layers = static_cast<uint32_t>(model->layers.size());
  auto start = [&](std::size_t f, TimeNs now) -> Status {
    Flow& fl = flows[f];
    fl.start_ns = now;
    const uint32_t from = fl.pull ? fl.ps : fl.worker, to = fl.pull ? fl.worker : fl.ps;
    const uint32_t ft = from / o.hosts_per_tor;
    const uint32_t tt = to / o.hosts_per_tor, ti = to % o.hosts_per_tor;
    if (dlcp) {
      std::vector<float> g(fl.bytes / 4);  // the host keeps its own copy
      for (float& e : g) e = static_cast<float>((rng.Next() >> 40) % 2001) / 1000.0f - 1.0f;
      SWEMU_RETURN_IF_ERROR(dlcp_hosts[from]->Send(
          now, TcpEnd{TorMac(ft), HostIp(tt, ti), kDlcpDefaultUdpPort}, fl.tensor, g,
          LayerPriority(fl.layer, layers), fl.pull ? o.pull_bound : o.loss_bound, fl.pull));
    } else {
      senders[f] = &tcp_hosts[from]->AddFlow(
          {TcpEnd{TorMac(ft), HostIp(tt, ti), kPsTcpPort},
           fl.local_port, now, kNever, fl.bytes});
    }
    if (now != 0) transports[from]->Wake();
    return Status::Ok();
  };
  // Whether push f has arrived at its PS: its bound met (DLCP) or all its bytes in order.
  auto arrived = [&](std::size_t f) {
    const Flow& fl = flows[f];
    const Ipv4Addr src = HostIp(fl.worker / o.hosts_per_tor, fl.worker % o.hosts_per_tor);
    if (dlcp) {
      const DlcpRecvFlow* rf = dlcp_hosts[fl.ps]->Received(src, fl.tensor);
      return rf != nullptr && rf->bound_met_ns != kNever;
    }
    const EcnTcpSink* sink = tcp_hosts[fl.ps]->sink(kPsTcpPort);
    const EcnTcpFlowStats* st =
        sink == nullptr ? nullptr : sink->Find(src, fl.local_port);
    return st != nullptr && st->bytes >= fl.bytes;
  };
  for (std::size_t f = 0; f < pushes; ++f) SWEMU_RETURN_IF_ERROR(start(f, 0));
  EngineLimits limits;
  limits.max_virtual_ns = 120'000'000'000;
  engine.SetLimits(limits);
  if (!o.pull) {
    SWEMU_RETURN_IF_ERROR(engine.Run());
  } else {
    // Step in slices: after each, start the pulls of the groups whose pushes have all arrived.
    std::vector<std::size_t> waiting(pushes);
    for (std::size_t f = 0; f < pushes; ++f) waiting[f] = f;
    std::vector<std::vector<std::size_t>> group_pulls(groups);
    for (std::size_t f = pushes; f < flows.size(); ++f) group_pulls[flows[f].group].push_back(f);
    while (!waiting.empty()) {
      SWEMU_RETURN_IF_ERROR(engine.Run(engine.Now() + kPullSliceNs));
      std::vector<std::size_t> still;
      for (std::size_t f : waiting) {
        if (!arrived(f)) {
          still.push_back(f);
        } else if (--group_pending[flows[f].group] == 0) {
          for (std::size_t p : group_pulls[flows[f].group]) SWEMU_RETURN_IF_ERROR(start(p, engine.Now()));
        }
      }
      if (still.size() == waiting.size() && engine.idle()) {
        return Status::Error(std::to_string(still.size()) + " pushes never arrived");
      }
      waiting.swap(still);
    }
    SWEMU_RETURN_IF_ERROR(engine.Run());
  }

  DlcpRunResult run;
  run.transport = dlcp ? "dlcp" : "dctcp";
  std::vector<double> loss_sum(model->layers.size(), 0);
  std::vector<uint32_t> loss_n(model->layers.size(), 0);
  std::vector<double> pull_loss_sum(model->layers.size(), 0);
  std::vector<uint32_t> pull_loss_n(model->layers.size(), 0);
  run.thresholds = thresholds;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const Flow& fl = flows[f];
    const uint32_t from = fl.pull ? fl.ps : fl.worker, to = fl.pull ? fl.worker : fl.ps;
    const char* stage = fl.pull ? "pull" : "push";
    DlcpFlowResult r;
    r.layer = fl.layer;
    r.pull = fl.pull;
    r.from = from;
    r.to = to;
    r.bytes = fl.bytes;
    r.start_ns = fl.start_ns;
    if (fl.start_ns == kNever) {
      return Status::Error(std::string(stage) + " of tensor " + std::to_string(fl.tensor) + " never started");
    }
    TimeNs done = kNever;
    if (dlcp) {
      const DlcpHost& h = *dlcp_hosts[from];
      const DlcpSendFlow* sf = nullptr;
      for (const auto& s : h.send_flows()) {
        if (s->tensor == fl.tensor) sf = s.get();
      }
      if (sf == nullptr || !sf->done()) {
        return Status::Error("DLCP " + std::string(stage) + " of tensor " + std::to_string(fl.tensor) + " did not finish");
      }
      done = sf->finish_ns;
      const DlcpRecvFlow* rf =
          dlcp_hosts[to]->Received(HostIp(from / o.hosts_per_tor, from % o.hosts_per_tor), fl.tensor);
      r.arrived_ns = rf == nullptr ? kNever : rf->bound_met_ns;
      // What the receiver had when the flow completed for it (the bound met).
      r.loss = rf == nullptr || rf->bound_met_ns == kNever
                   ? 1.0
                   : 1.0 - static_cast<double>(rf->bytes_at_bound) / static_cast<double>(fl.bytes);
    } else {
      const EcnTcpSenderStats& st = senders[f]->stats();
      if (st.done_ns == kNever) {
        return Status::Error("DCTCP " + std::string(stage) + " of tensor " + std::to_string(fl.tensor) + " did not finish");
      }
      done = st.done_ns;
      const EcnTcpSink* sink = tcp_hosts[to]->sink(kPsTcpPort);
      const EcnTcpFlowStats* in =
          sink == nullptr ? nullptr
                          : sink->Find(HostIp(from / o.hosts_per_tor, from % o.hosts_per_tor), fl.local_port);
      r.arrived_ns = in == nullptr ? kNever : in->last_ns;
      r.loss = st.segments_sent == 0
                   ? 0
                   : static_cast<double>(st.retransmits) / static_cast<double>(st.segments_sent);
    }
    r.fct_ns = done - fl.start_ns;
    run.iteration_ns = std::max(run.iteration_ns, done);
    (fl.pull ? pull_loss_sum : loss_sum)[fl.layer] += r.loss;
    ++(fl.pull ? pull_loss_n : loss_n)[fl.layer];
    run.flows.push_back(r);
  }
  for (std::size_t l = 0; l < loss_sum.size(); ++l) {
    run.layer_loss.push_back(loss_n[l] ? loss_sum[l] / loss_n[l] : 0);
    if (o.pull) run.layer_loss_pull.push_back(pull_loss_n[l] ? pull_loss_sum[l] / pull_loss_n[l] : 0);
  }
  for (std::size_t k = 0; k < engine.num_switches(); ++k) {
    const TrafficManager& tm = engine.switch_at(k).tm();
    run.red_drops += tm.drops(DropReason::kTmRedNotEct);
    run.queue_drops += tm.drops(DropReason::kTmQueueFull);
  }
  return run;
}

}  // namespace swemu
