#include "hostlib/dlcp/experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/dlcp/host.h"
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

Status Exec(Switch& sw, const std::string& cmd) {
  Result<std::string> r = sw.commands().Execute(cmd);
  if (!r.ok()) return Status::Error(sw.name() + ": " + cmd + ": " + r.message());
  return Status::Ok();
}

struct Flow {
  uint32_t worker = 0, ps = 0, layer = 0, tensor = 0;
  uint64_t bytes = 0;
};

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
  return Status::Ok();
}

double DlcpRunResult::MeanFctMs() const {
  if (flows.empty()) return 0;
  double sum = 0;
  for (const DlcpFlowResult& f : flows) sum += static_cast<double>(f.fct_ns);
  return sum / static_cast<double>(flows.size()) / 1e6;
}

double DlcpRunResult::P99FctMs() const {
  if (flows.empty()) return 0;
  std::vector<TimeNs> fct;
  for (const DlcpFlowResult& f : flows) fct.push_back(f.fct_ns);
  std::sort(fct.begin(), fct.end());
  const std::size_t i = static_cast<std::size_t>(std::ceil(0.99 * fct.size())) - 1;
  return static_cast<double>(fct[std::min(i, fct.size() - 1)]) / 1e6;
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, bool dlcp) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  Result<ModelLayers> model = BundledModel(o.model);
  if (!model.ok()) return model.status();
  const uint32_t hosts = o.tors * o.hosts_per_tor;
  // PSs: every 4th host (colocated with a worker); every host is a worker.
  std::vector<uint32_t> pss;
  for (uint32_t h = 0; h < hosts; h += kWorkersPerPs) pss.push_back(h);
  // The tensors of one iteration's push, the same for both runs (seeded).
  SplitMix64 rng(o.seed);
  std::vector<Flow> flows;
  uint32_t tensor_id = 1;
  for (uint32_t w = 0; w < hosts; ++w) {
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
        if (ps == w) continue;  // the worker's own PS: no network
        flows.push_back({w, ps, l, tensor_id++, piece});
      }
    }
  }

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
    SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add router_mac route " + FormatMac(TorMac(t)) + " =>"));
    for (uint32_t i = 0; i < o.hosts_per_tor; ++i) {
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add ipv4_lpm set_nhop " + IpText(HostIp(t, i)) +
                                         "/32 => " + std::to_string(i + 1)));
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add nexthop rewrite " + std::to_string(i + 1) + " => " +
                                         FormatMac(HostMac(t, i)) + " " + FormatMac(TorMac(t)) +
                                         " " + std::to_string(i)));
      SWEMU_RETURN_IF_ERROR(Exec(sw, "set_port_rate " + std::to_string(i) + " " +
                                         std::to_string(o.link_bps)));
    }
    for (uint32_t u = 0; u < o.tors; ++u) {
      if (u == t) continue;
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add ipv4_lpm set_ecmp 10.0." + std::to_string(u + 1) +
                                         ".0/24 => 1"));
    }
    SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add ecmp_group ecmp_select 1 => " +
                                       std::to_string(o.spines) + " " + mode));
    for (uint32_t s = 0; s < o.spines; ++s) {
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add ecmp_member set_nhop 1 " + std::to_string(s) +
                                         " => " + std::to_string(100 + s)));
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add nexthop rewrite " + std::to_string(100 + s) +
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
    SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add router_mac route " + FormatMac(SpineMac(s)) + " =>"));
    for (uint32_t u = 0; u < o.tors; ++u) {
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add ipv4_lpm set_nhop 10.0." + std::to_string(u + 1) +
                                         ".0/24 => " + std::to_string(u + 1)));
      SWEMU_RETURN_IF_ERROR(Exec(sw, "table_add nexthop rewrite " + std::to_string(u + 1) + " => " +
                                         FormatMac(TorMac(u)) + " " + FormatMac(SpineMac(s)) + " " +
                                         std::to_string(u)));
    }
  }
  // Buffers: the baseline's queues hold buffer_pkts and mark at 65 packets; DLCP's data queues
  // get S_i and L_i from the program (dlcp_thresholds when T is given).
  for (std::size_t k = 0; k < engine.num_switches(); ++k) {
    Switch& sw = engine.switch_at(k);
    if (dlcp) {
      if (o.dlcp_t != 0) {
        SWEMU_RETURN_IF_ERROR(Exec(sw, "dlcp_thresholds " + std::to_string(o.dlcp_t) + " " +
                                           std::to_string(o.dlcp_d)));
      }
    } else {
      SWEMU_RETURN_IF_ERROR(Exec(sw, "set_queue_depth " + std::to_string(o.buffer_pkts)));
      SWEMU_RETURN_IF_ERROR(Exec(sw, "set_ecn_threshold all all " + std::to_string(65 * 1514)));
    }
  }

  std::vector<std::unique_ptr<DlcpHost>> dlcp_hosts;
  std::vector<std::unique_ptr<TcpHost>> tcp_hosts;
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
    if (dlcp) {
      dlcp_hosts.push_back(std::make_unique<DlcpHost>(**tr, HostMac(t, i), HostIp(t, i), dopt));
      (*tr)->SetEndpoint(dlcp_hosts.back().get());
    } else {
      tcp_hosts.push_back(std::make_unique<TcpHost>(**tr, HostMac(t, i), HostIp(t, i), topt));
      tcp_hosts.back()->Listen(kPsTcpPort);
      (*tr)->SetEndpoint(tcp_hosts.back().get());
    }
  }
  std::vector<std::vector<float>> data(flows.size());
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const Flow& fl = flows[f];
    const uint32_t wt = fl.worker / o.hosts_per_tor;
    const uint32_t pt = fl.ps / o.hosts_per_tor, pi = fl.ps % o.hosts_per_tor;
    if (dlcp) {
      data[f].resize(fl.bytes / 4);
      for (std::size_t e = 0; e < data[f].size(); ++e) {
        data[f][e] = static_cast<float>((rng.Next() >> 40) % 2001) / 1000.0f - 1.0f;
      }
      SWEMU_RETURN_IF_ERROR(dlcp_hosts[fl.worker]->Send(
          0, TcpEnd{TorMac(wt), HostIp(pt, pi), kDlcpDefaultUdpPort}, fl.tensor, data[f],
          LayerPriority(fl.layer, static_cast<uint32_t>(model->layers.size())), o.loss_bound));
    } else {
      senders[f] = &tcp_hosts[fl.worker]->AddFlow(
          {TcpEnd{TorMac(wt), HostIp(pt, pi), kPsTcpPort},
           static_cast<uint16_t>(10000 + f % 50000), 0, kNever, fl.bytes});
    }
  }
  EngineLimits limits;
  limits.max_virtual_ns = 120'000'000'000;
  engine.SetLimits(limits);
  SWEMU_RETURN_IF_ERROR(engine.Run());

  DlcpRunResult run;
  run.transport = dlcp ? "dlcp" : "dctcp";
  std::vector<double> loss_sum(model->layers.size(), 0);
  std::vector<uint32_t> loss_n(model->layers.size(), 0);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const Flow& fl = flows[f];
    DlcpFlowResult r;
    r.layer = fl.layer;
    r.bytes = fl.bytes;
    if (dlcp) {
      const DlcpHost& w = *dlcp_hosts[fl.worker];
      const DlcpSendFlow* sf = nullptr;
      for (const auto& s : w.send_flows()) {
        if (s->tensor == fl.tensor) sf = s.get();
      }
      if (sf == nullptr || !sf->done()) {
        return Status::Error("DLCP flow of tensor " + std::to_string(fl.tensor) + " did not finish");
      }
      r.fct_ns = sf->finish_ns - sf->start_ns;
      const uint32_t wt = fl.worker / o.hosts_per_tor, wi = fl.worker % o.hosts_per_tor;
      const DlcpRecvFlow* rf = dlcp_hosts[fl.ps]->Received(HostIp(wt, wi), fl.tensor);
      // What the PS had when the flow completed for it (the bound met).
      r.loss = rf == nullptr || rf->bound_met_ns == kNever
                   ? 1.0
                   : 1.0 - static_cast<double>(rf->bytes_at_bound) / static_cast<double>(fl.bytes);
    } else {
      const EcnTcpSenderStats& st = senders[f]->stats();
      if (st.done_ns == kNever) {
        return Status::Error("DCTCP flow of tensor " + std::to_string(fl.tensor) + " did not finish");
      }
      r.fct_ns = st.done_ns;  // all start at 0
      r.loss = st.segments_sent == 0
                   ? 0
                   : static_cast<double>(st.retransmits) / static_cast<double>(st.segments_sent);
    }
    loss_sum[fl.layer] += r.loss;
    ++loss_n[fl.layer];
    run.flows.push_back(r);
  }
  for (std::size_t l = 0; l < loss_sum.size(); ++l) {
    run.layer_loss.push_back(loss_n[l] ? loss_sum[l] / loss_n[l] : 0);
  }
  for (std::size_t k = 0; k < engine.num_switches(); ++k) {
    const TrafficManager& tm = engine.switch_at(k).tm();
    run.red_drops += tm.drops(DropReason::kTmRedNotEct);
    run.queue_drops += tm.drops(DropReason::kTmQueueFull);
  }
  return run;
}

std::string FormatDlcpComparison(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                                 const DlcpRunResult& b) {
  char line[512];
  std::string out;
  std::snprintf(line, sizeof(line),
                "DLCP in virtual time: %u ToRs x %u hosts, %u spines, %.0f Gbit/s links; one "
                "iteration's PS push of %s / %u (%zu flows); DLCP bound %.0f%%, DCTCP RTOmin "
                "%.0f ms\n\n",
                o.tors, o.hosts_per_tor, o.spines, o.link_bps / 1e9, o.model.c_str(), o.scale,
                d.flows.size(), o.loss_bound * 100, o.min_rto_ns / 1e6);
  out += line;
  auto change = [](double a, double b) { return b == 0 ? 0.0 : (a - b) / b * 100; };
  std::snprintf(line, sizeof(line),
                "%-22s %10s %10s %8s | paper (ResNet50, RTOmin 10 ms)\n"
                "%-22s %10.3f %10.3f %+7.1f%% | up to -43.1%%\n"
                "%-22s %10.3f %10.3f %+7.1f%% | up to -91.8%% (5 ms: -83.9%%, 1 ms: -84.5%%)\n",
                "FCT (ms)", "DCTCP", "DLCP", "change", "mean", b.MeanFctMs(), d.MeanFctMs(),
                change(d.MeanFctMs(), b.MeanFctMs()), "p99", b.P99FctMs(), d.P99FctMs(),
                change(d.P99FctMs(), b.P99FctMs()));
  out += line;
  std::snprintf(line, sizeof(line),
                "drops: DLCP %llu selective (Not-ECT above S_i), %llu at capacity; DCTCP %llu\n"
                "loss per layer (DLCP: share missing when the bound was met; DCTCP: share of "
                "segments retransmitted), input layer first:\n",
                static_cast<unsigned long long>(d.red_drops),
                static_cast<unsigned long long>(d.queue_drops),
                static_cast<unsigned long long>(b.queue_drops));
  out += line;
  for (std::size_t l = 0; l < d.layer_loss.size(); ++l) {
    std::snprintf(line, sizeof(line), "  layer %2zu: DLCP %6.2f%%  DCTCP %6.2f%%\n", l,
                  d.layer_loss[l] * 100, l < b.layer_loss.size() ? b.layer_loss[l] * 100 : 0.0);
    out += line;
  }
  return out;
}

}  // namespace swemu
