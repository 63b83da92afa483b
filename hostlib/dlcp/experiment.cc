#include "hostlib/dlcp/experiment.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/packet_priority.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/dlcp/fabric.h"
#include "hostlib/dlcp/host.h"
#include "hostlib/dlcp/thresholds.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/rng.h"

namespace swemu {
namespace {

constexpr uint64_t kSplitBytes = 4u << 20;  // tensors above this (scaled) go to every PS
constexpr uint16_t kPsTcpPort = 5000;
constexpr TimeNs kPullSliceNs = 10'000;  // how often push groups are checked for completion

// A push flow goes from `worker` to `ps`; a pull flow from `ps` back to `worker`. A push group
// is one PS's piece of one layer: its pulls start once all its pushes have arrived.
struct Flow {
  uint32_t worker = 0, ps = 0, layer = 0, tensor = 0;
  uint64_t bytes = 0;
  bool pull = false;
  uint32_t group = 0;
  TimeNs start_ns = kNever;  // kNever: a pull not started yet
  uint16_t local_port = 0;   // the DCTCP sender's, unique per sending host
  uint32_t from() const { return pull ? ps : worker; }
  uint32_t to() const { return pull ? worker : ps; }
};

// The tensors of one iteration, the same for both runs (seeded by rng). The hosts form
// DlcpJobCount jobs, host h in job h % jobs (one job of every host by default); in each job
// every host is a worker, every 4th of its hosts in the topology's order also a PS; each
// layer's PS in a job is drawn once (every worker of the job pushes that layer to it); a layer
// over 4 MB (scaled) is split over every PS of the job. Then the pulls.
struct FlowPlan {
  std::vector<Flow> flows;
  std::size_t pushes = 0;
  uint32_t groups = 0;
};

// The job's pushes of layer l: to its drawn PS, or pieces to each of its PSs.
void PlanLayerPushes(const DlcpExperimentOptions& o, const std::vector<uint32_t>& members,
                     const std::vector<uint32_t>& pss, uint32_t l, uint64_t bytes,
                     SplitMix64& rng, uint32_t& tensor_id, FlowPlan& plan) {
  std::vector<uint32_t> targets;
  if (bytes > kSplitBytes / o.scale) {
    targets = pss;
  } else {
    targets.push_back(pss[rng.Next() % pss.size()]);
  }
  const uint64_t piece = std::max<uint64_t>(bytes / targets.size() / 4 * 4, 4);
  for (uint32_t ps : targets) {
    for (uint32_t w : members) {
      if (ps == w) continue;  // the worker's own PS: no network
      plan.flows.push_back({w, ps, l, tensor_id++, piece, false, plan.groups, 0});
    }
    ++plan.groups;
  }
}

// workers: DlcpWorkerHosts's, of `hosts` in all; the i-th worker is in job i % jobs.
Result<FlowPlan> PlanFlows(const DlcpExperimentOptions& o, const ModelLayers& model, uint32_t hosts,
                           const std::vector<uint32_t>& workers, SplitMix64& rng) {
  const uint32_t jobs = DlcpJobCount(o, static_cast<uint32_t>(workers.size()));
  std::vector<std::vector<uint32_t>> members(jobs), pss(jobs);
  for (uint32_t i = 0; i < workers.size(); ++i) {
    std::vector<uint32_t>& job = members[i % jobs];
    if (job.size() % kDlcpWorkersPerPs == 0) pss[i % jobs].push_back(workers[i]);
    job.push_back(workers[i]);
  }
  FlowPlan plan;
  uint32_t tensor_id = 1;
  for (uint32_t l = 0; l < model.layers.size(); ++l) {
    const uint64_t bytes = std::max<uint64_t>(model.layers[l].params * 4 / o.scale, 4) / 4 * 4;
    for (uint32_t j = 0; j < jobs; ++j) {
      PlanLayerPushes(o, members[j], pss[j], l, bytes, rng, tensor_id, plan);
    }
  }
  plan.pushes = plan.flows.size();
  for (std::size_t f = 0; o.pull && f < plan.pushes; ++f) {
    Flow p = plan.flows[f];
    p.pull = true;
    p.tensor = tensor_id++;
    p.start_ns = kNever;
    plan.flows.push_back(p);
  }
  std::vector<uint32_t> next_port(hosts, 10000);
  for (Flow& fl : plan.flows) {
    uint32_t& port = next_port[fl.from()];
    if (port > 65535) return Status::Error("more than 55536 flows from one host");
    fl.local_port = static_cast<uint16_t>(port++);
  }
  return plan;
}

constexpr uint32_t kFullFrameBytes = 1514;  // a full segment's frame (the model TCP's mss)
constexpr uint32_t kEcnThresholdPkts = 65;  // DCTCP's and PIAS's, per queue (5.2.1)
// pFabric's own settings, relative to the fabric's base RTT (its paper: a BDP of initial window,
// about two BDPs of buffer per port, an RTO of about three RTTs).
constexpr uint32_t kPfabricBufferBdps = 2;
constexpr uint32_t kPfabricRtoRtts = 3;

// pFabric's base RTT and what follows from it at the slowest host port.
struct PfabricSizing {
  TimeNs rtt_ns = 0;
  uint64_t bdp_bytes = 0;
  uint32_t window_segments = 0;
};

PfabricSizing SizePfabric(const TopologyConfig& topo) {
  const DlcpBaseRtt rtt = DlcpLongestBaseRtt(topo);
  PfabricSizing z;
  z.rtt_ns = rtt.ns;
  z.bdp_bytes = static_cast<uint64_t>(static_cast<double>(rtt.host_bps) * rtt.ns / 8e9);
  z.window_segments = static_cast<uint32_t>(
      std::max<uint64_t>(1, (z.bdp_bytes + kFullFrameBytes - 1) / kFullFrameBytes));
  return z;
}

// The scheme's switches: DLCP's program sprays and sets its data queues' own thresholds (the
// TM's defaults elsewhere); the baselines run l2l3 with queues of buffer_pkts, DCTCP and PIAS
// mark ECN at 65 packets per queue and hash per flow (PIAS's port buffer is what one DCTCP queue
// holds, shared by its eight); pFabric sprays, marks nothing, keeps kPfabricBufferBdps BDPs per
// port and, when one is full, pushes out the lowest-priority packets for a higher arrival.
DlcpFabricScheme SchemeFabric(const DlcpExperimentOptions& o, DlcpScheme scheme,
                              const PfabricSizing& pfabric) {
  DlcpFabricScheme f;
  f.queues.alpha = o.alpha;
  f.program = scheme == DlcpScheme::kDlcp ? "dlcp" : "l2l3";
  f.spray = scheme == DlcpScheme::kDlcp || scheme == DlcpScheme::kPfabric;
  if (scheme == DlcpScheme::kDlcp) return f;
  f.queues.depth_pkts = o.buffer_pkts;
  if (scheme == DlcpScheme::kPfabric) {
    f.port_buffer_bytes = kPfabricBufferBdps * pfabric.bdp_bytes;
    f.pushout = true;
    return f;
  }
  f.queues.ecn_threshold_bytes = kEcnThresholdPkts * kFullFrameBytes;
  if (scheme == DlcpScheme::kPias) f.port_buffer_bytes = uint64_t{o.buffer_pkts} * kFullFrameBytes;
  return f;
}

std::string JoinBytes(const PacketPriority& p) {
  std::string out;
  for (uint64_t t : p.thresholds) out += (out.empty() ? "" : ", ") + std::to_string(t);
  return out;
}

// The dlcp_thresholds command that gives DLCP's data queues S_i and L_i from T and d when given,
// or from Appendix B at dlcp_load; empty for the program's defaults.
Result<std::string> DlcpThresholds(const DlcpExperimentOptions& o, const ModelLayers& model) {
  if (o.dlcp_t != 0) {
    return "dlcp_thresholds " + std::to_string(o.dlcp_t) + " " + std::to_string(o.dlcp_d);
  }
  if (o.dlcp_load <= 0) return std::string();
  DlcpModelInput in;
  for (const LayerSize& layer : model.layers) in.layer_sizes.push_back(layer.params);
  in.load = o.dlcp_load;
  in.buffer_pkts = o.buffer_pkts;
  Result<DlcpThresholdPlan> plan = SolveDlcpThresholds(in);
  if (!plan.ok()) return Status::Error("Appendix B: " + plan.message());
  return DlcpThresholdsCommand(*plan);
}

// One scheme's run on one network: the hosts, the flows' starts, the pulls started as their
// pushes arrive, and the results read back.
class DlcpRun {
 public:
  DlcpRun(const DlcpExperimentOptions& o, const ModelLayers& model, DlcpScheme scheme,
          FlowPlan plan, SplitMix64& rng)
      : o_(o),
        model_(model),
        scheme_(scheme),
        dlcp_(scheme == DlcpScheme::kDlcp),
        plan_(std::move(plan)),
        rng_(rng),
        engine_(o.seed, 1 << 18, o.partitions),
        senders_(plan_.flows.size(), nullptr) {}

  // The network with the scheme's queues, DLCP's thresholds, then the hosts (the order today's
  // figures were run in).
  Status Build(const TopologyConfig& topo);
  Status Drive();
  Result<DlcpRunResult> Collect();

 private:
  // The baselines' model TCP on a host of link_bps (and the settings' words for the report).
  EcnTcpOptions BaselineTcp(uint64_t link_bps, const PfabricSizing& pfabric);
  Status Start(std::size_t f, TimeNs now);
  bool Arrived(std::size_t f);
  // f's completion and the share of its tensor the receiver lacked then.
  Status Outcome(std::size_t f, DlcpFlowResult& r);

  const DlcpExperimentOptions& o_;
  const ModelLayers& model_;
  const DlcpScheme scheme_;
  const bool dlcp_;
  FlowPlan plan_;
  SplitMix64& rng_;
  Engine engine_;
  std::vector<DlcpHostAddress> addr_;
  std::vector<std::unique_ptr<DlcpHost>> dlcp_hosts_;
  std::vector<std::unique_ptr<TcpHost>> tcp_hosts_;
  std::vector<EngineTransport*> transports_;
  std::vector<EcnTcpSender*> senders_;
  std::string thresholds_;
  std::string settings_;
};

EcnTcpOptions DlcpRun::BaselineTcp(uint64_t link_bps, const PfabricSizing& pfabric) {
  EcnTcpOptions topt;
  topt.cc = CongestionControl::kDctcp;
  topt.min_rto_ns = o_.min_rto_ns;
  // Model flows have no handshake to take a first RTT sample from: start the RTO where a
  // connection's handshake would have left it in a datacenter, at the minimum, not at 1 s.
  topt.initial_rto_ns = o_.min_rto_ns;
  topt.link_bps = link_bps;
  topt.shared_nic = o_.shared_nic;
  std::vector<uint64_t> sizes;
  for (const Flow& fl : plan_.flows) sizes.push_back(fl.bytes);
  char text[256];
  if (scheme_ == DlcpScheme::kPias) {
    topt.priority = PiasPriority(sizes);
    settings_ = "PIAS: 8 levels, a flow demoted as its bytes sent reach " +
                JoinBytes(topt.priority) +
                " (the k/8 quantiles of the flows' sizes); ECN at 65 packets per queue; " +
                std::to_string(uint64_t{o_.buffer_pkts} * kFullFrameBytes) + " bytes per port";
  } else if (scheme_ == DlcpScheme::kPfabric) {
    topt.cc = CongestionControl::kPfabric;
    topt.ect = false;
    topt.initial_cwnd = pfabric.window_segments;
    topt.min_rto_ns = topt.initial_rto_ns = kPfabricRtoRtts * pfabric.rtt_ns;
    topt.priority = PfabricPriority(*std::max_element(sizes.begin(), sizes.end()), topt.mss);
    std::snprintf(text, sizeof(text),
                  "pFabric: 8 levels by remaining bytes at %s; window %u segments (base RTT "
                  "%.1f us), fixed RTO %.1f us, %llu bytes per port, lowest level pushed out",
                  JoinBytes(topt.priority).c_str(), pfabric.window_segments, pfabric.rtt_ns / 1e3,
                  topt.min_rto_ns / 1e3,
                  static_cast<unsigned long long>(kPfabricBufferBdps * pfabric.bdp_bytes));
    settings_ = text;
  }
  return topt;
}

Status DlcpRun::Build(const TopologyConfig& topo) {
  const PfabricSizing pfabric =
      scheme_ == DlcpScheme::kPfabric ? SizePfabric(topo) : PfabricSizing{};
  Result<std::vector<DlcpHostAddress>> addr =
      AddDlcpFabric(engine_, topo, SchemeFabric(o_, scheme_, pfabric), o_.seed);
  if (!addr.ok()) return addr.status();
  addr_ = std::move(*addr);
  const bool priorities = scheme_ == DlcpScheme::kPias || scheme_ == DlcpScheme::kPfabric;
  for (std::size_t k = 0; priorities && k < engine_.num_switches(); ++k) {
    for (const std::string& command : PriorityQueueCommands()) {
      SWEMU_RETURN_IF_ERROR(engine_.switch_at(k).Command(command));
    }
  }
  Result<std::string> thresholds = DlcpThresholds(o_, model_);
  if (!thresholds.ok()) return thresholds.status();
  thresholds_ = *thresholds;
  for (std::size_t k = 0; dlcp_ && !thresholds_.empty() && k < engine_.num_switches(); ++k) {
    SWEMU_RETURN_IF_ERROR(engine_.switch_at(k).Command(thresholds_));
  }
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {
    const TopologyHost& host = topo.hosts[h];
    Result<EngineTransport*> tr =
        EngineTransport::Attach(engine_, host.sw, host.port, host.delay_ns, host.loss);
    if (!tr.ok()) return tr.status();
    transports_.push_back(*tr);
    if (dlcp_) {
      DlcpHostOptions dopt;
      dopt.rate.link_bps = addr_[h].link_bps;
      dopt.hold_tensors = false;  // model hosts: nothing reads the bytes, and 144 would not fit
      dopt.shared_nic = o_.shared_nic;
      dlcp_hosts_.push_back(std::make_unique<DlcpHost>(**tr, addr_[h].mac, addr_[h].ip, dopt));
      (*tr)->SetEndpoint(dlcp_hosts_.back().get());
    } else {
      const EcnTcpOptions topt = BaselineTcp(addr_[h].link_bps, pfabric);
      tcp_hosts_.push_back(std::make_unique<TcpHost>(**tr, addr_[h].mac, addr_[h].ip, topt));
      tcp_hosts_.back()->Listen(kPsTcpPort);
      (*tr)->SetEndpoint(tcp_hosts_.back().get());
    }
  }
  return Status::Ok();
}

// Starts flow f now: a push at 0, a pull when its group's pushes have all arrived.
Status DlcpRun::Start(std::size_t f, TimeNs now) {
  Flow& fl = plan_.flows[f];
  fl.start_ns = now;
  const uint32_t from = fl.from(), to = fl.to();
  if (dlcp_) {
    std::vector<float> g(fl.bytes / 4);  // the host keeps its own copy
    for (float& e : g) e = static_cast<float>((rng_.Next() >> 40) % 2001) / 1000.0f - 1.0f;
    const uint32_t layers = static_cast<uint32_t>(model_.layers.size());
    SWEMU_RETURN_IF_ERROR(dlcp_hosts_[from]->Send(
        now, TcpEnd{addr_[from].gateway, addr_[to].ip, kDlcpDefaultUdpPort}, fl.tensor, g,
        LayerPriority(fl.layer, layers), fl.pull ? o_.pull_bound : o_.loss_bound, fl.pull));
  } else {
    senders_[f] = &tcp_hosts_[from]->AddFlow({TcpEnd{addr_[from].gateway, addr_[to].ip, kPsTcpPort},
                                              fl.local_port, now, kNever, fl.bytes});
  }
  if (now != 0) transports_[from]->Wake();
  return Status::Ok();
}

// Whether push f has arrived at its PS: its bound met (DLCP) or all its bytes in order.
bool DlcpRun::Arrived(std::size_t f) {
  const Flow& fl = plan_.flows[f];
  const Ipv4Addr src = addr_[fl.worker].ip;
  if (dlcp_) {
    const DlcpRecvFlow* rf = dlcp_hosts_[fl.ps]->Received(src, fl.tensor);
    return rf != nullptr && rf->bound_met_ns != kNever;
  }
  const EcnTcpSink* sink = tcp_hosts_[fl.ps]->sink(kPsTcpPort);
  const EcnTcpFlowStats* st = sink == nullptr ? nullptr : sink->Find(src, fl.local_port);
  return st != nullptr && st->bytes >= fl.bytes;
}

Status DlcpRun::Drive() {
  const std::size_t pushes = plan_.pushes;
  for (std::size_t f = 0; f < pushes; ++f) SWEMU_RETURN_IF_ERROR(Start(f, 0));
  EngineLimits limits;
  limits.max_virtual_ns = 120'000'000'000;
  engine_.SetLimits(limits);
  if (!o_.pull) return engine_.Run();
  // A group's pushes are consecutive (PlanFlows); each group keeps the first push not yet seen
  // to arrive (arrival lasts), so a slice looks at one waiting push per group, not at all.
  std::vector<std::size_t> next(plan_.groups, pushes), end(plan_.groups, 0);
  for (std::size_t f = 0; f < pushes; ++f) {
    const uint32_t g = plan_.flows[f].group;
    if (next[g] == pushes) next[g] = f;
    if (end[g] != 0 && end[g] != f) return Status::Error("push groups are not consecutive");
    end[g] = f + 1;
  }
  std::vector<std::vector<std::size_t>> group_pulls(plan_.groups);
  for (std::size_t f = pushes; f < plan_.flows.size(); ++f) {
    group_pulls[plan_.flows[f].group].push_back(f);
  }
  std::vector<uint32_t> open(plan_.groups);
  for (uint32_t g = 0; g < plan_.groups; ++g) open[g] = g;
  // Step in slices: after each, start the pulls of the groups whose pushes have all arrived, in
  // group order (the order the last push of each was found in).
  while (!open.empty()) {
    SWEMU_RETURN_IF_ERROR(engine_.Run(engine_.Now() + kPullSliceNs));
    bool progress = false;
    std::vector<uint32_t> still;
    for (uint32_t g : open) {
      for (; next[g] < end[g] && Arrived(next[g]); ++next[g]) progress = true;
      if (next[g] < end[g]) {
        still.push_back(g);
        continue;
      }
      for (std::size_t p : group_pulls[g]) SWEMU_RETURN_IF_ERROR(Start(p, engine_.Now()));
    }
    if (!progress && engine_.idle()) {
      std::size_t missing = 0;
      for (uint32_t g : still) {
        for (std::size_t f = next[g]; f < end[g]; ++f) missing += Arrived(f) ? 0 : 1;
      }
      return Status::Error(std::to_string(missing) + " pushes never arrived");
    }
    open.swap(still);
  }
  return engine_.Run();
}

Status DlcpRun::Outcome(std::size_t f, DlcpFlowResult& r) {
  const Flow& fl = plan_.flows[f];
  const std::string stage = fl.pull ? "pull" : "push";
  const std::string unfinished =
      stage + " of tensor " + std::to_string(fl.tensor) + " did not finish";
  TimeNs done = kNever;
  if (dlcp_) {
    const DlcpSendFlow* sf = nullptr;
    for (const auto& s : dlcp_hosts_[fl.from()]->send_flows()) {
      if (s->tensor == fl.tensor) sf = s.get();
    }
    if (sf == nullptr || !sf->done()) return Status::Error("DLCP " + unfinished);
    done = sf->finish_ns;
    const DlcpRecvFlow* rf = dlcp_hosts_[fl.to()]->Received(addr_[fl.from()].ip, fl.tensor);
    r.arrived_ns = rf == nullptr ? kNever : rf->bound_met_ns;
    // What the receiver had when the flow completed for it (the bound met).
    r.loss = rf == nullptr || rf->bound_met_ns == kNever
                 ? 1.0
                 : 1.0 - static_cast<double>(rf->bytes_at_bound) / static_cast<double>(fl.bytes);
  } else {
    const EcnTcpSenderStats& st = senders_[f]->stats();
    if (st.done_ns == kNever) {
      return Status::Error(std::string(DlcpSchemeLabel(scheme_)) + " " + unfinished);
    }
    done = st.done_ns;
    const EcnTcpSink* sink = tcp_hosts_[fl.to()]->sink(kPsTcpPort);
    const EcnTcpFlowStats* in =
        sink == nullptr ? nullptr : sink->Find(addr_[fl.from()].ip, fl.local_port);
    r.arrived_ns = in == nullptr ? kNever : in->last_ns;
    r.loss = st.segments_sent == 0
                 ? 0
                 : static_cast<double>(st.retransmits) / static_cast<double>(st.segments_sent);
  }
  r.fct_ns = done - fl.start_ns;
  return Status::Ok();
}

Result<DlcpRunResult> DlcpRun::Collect() {
  DlcpRunResult run;
  run.scheme = scheme_;
  run.transport = DlcpSchemeName(scheme_);
  run.thresholds = thresholds_;
  run.settings = settings_;
  const std::size_t layers = model_.layers.size();
  std::vector<double> loss_sum(layers, 0), pull_loss_sum(layers, 0);
  std::vector<uint32_t> loss_n(layers, 0), pull_loss_n(layers, 0);
  for (std::size_t f = 0; f < plan_.flows.size(); ++f) {
    const Flow& fl = plan_.flows[f];
    if (fl.start_ns == kNever) {
      return Status::Error(std::string(fl.pull ? "pull" : "push") + " of tensor " +
                           std::to_string(fl.tensor) + " never started");
    }
    DlcpFlowResult r;
    r.layer = fl.layer;
    r.pull = fl.pull;
    r.from = fl.from();
    r.to = fl.to();
    r.bytes = fl.bytes;
    r.start_ns = fl.start_ns;
    SWEMU_RETURN_IF_ERROR(Outcome(f, r));
    run.iteration_ns = std::max(run.iteration_ns, fl.start_ns + r.fct_ns);
    (fl.pull ? pull_loss_sum : loss_sum)[fl.layer] += r.loss;
    ++(fl.pull ? pull_loss_n : loss_n)[fl.layer];
    run.flows.push_back(r);
  }
  for (std::size_t l = 0; l < layers; ++l) {
    run.layer_loss.push_back(loss_n[l] ? loss_sum[l] / loss_n[l] : 0);
    if (o_.pull)
      run.layer_loss_pull.push_back(pull_loss_n[l] ? pull_loss_sum[l] / pull_loss_n[l] : 0);
  }
  const EngineCounters& counters = engine_.counters();
  run.engine = {engine_.events_processed(), counters.injected, counters.link_frames,
                counters.delivered};
  for (const std::unique_ptr<DlcpHost>& host : dlcp_hosts_) {
    for (const std::unique_ptr<DlcpSendFlow>& f : host->send_flows()) {
      run.engine.data_packets += f->packets;
      run.engine.resent += f->resent_packets;
      run.engine.retransmit_requests += f->retransmit_requests;
    }
  }
  for (const EcnTcpSender* f : senders_) {
    if (f == nullptr) continue;
    run.engine.data_packets += f->stats().segments_sent;
    run.engine.resent += f->stats().retransmits;
    run.engine.timeouts += f->stats().timeouts;
  }
  for (std::size_t k = 0; k < engine_.num_switches(); ++k) {
    const TrafficManager& tm = engine_.switch_at(k).tm();
    run.red_drops += tm.drops(DropReason::kTmRedNotEct);
    run.queue_drops += tm.drops(DropReason::kTmQueueFull);
    run.dt_drops += tm.drops(DropReason::kTmDynamicThreshold);
    run.port_drops += tm.drops(DropReason::kTmPortBufferFull) + tm.drops(DropReason::kTmPushout);
  }
  return run;
}

}  // namespace

namespace {
// By DlcpScheme's value: --schemes' word, then the report's name.
constexpr std::array<std::array<const char*, 2>, 4> kSchemeNames = {{
    {"dlcp", "DLCP"}, {"dctcp", "DCTCP"}, {"pias", "PIAS"}, {"pfabric", "pFabric"}}};
}  // namespace

const char* DlcpSchemeName(DlcpScheme scheme) {
  return kSchemeNames[static_cast<std::size_t>(scheme)][0];
}

const char* DlcpSchemeLabel(DlcpScheme scheme) {
  return kSchemeNames[static_cast<std::size_t>(scheme)][1];
}

Result<std::vector<DlcpScheme>> ParseDlcpSchemes(std::string_view text) {
  std::vector<DlcpScheme> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view word = text.substr(start, comma == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : comma - start);
    bool known = false;
    for (DlcpScheme s : {DlcpScheme::kDlcp, DlcpScheme::kDctcp, DlcpScheme::kPias,
                         DlcpScheme::kPfabric}) {
      if (word != DlcpSchemeName(s)) continue;
      if (std::find(out.begin(), out.end(), s) != out.end()) {
        return Status::Error(std::string(word) + " named twice");
      }
      out.push_back(s);
      known = true;
    }
    if (!known) {
      return Status::Error("\"" + std::string(word) +
                           "\": not a scheme (dlcp, dctcp, pias, pfabric)");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (std::find(out.begin(), out.end(), DlcpScheme::kDlcp) == out.end() || out.size() < 2) {
    return Status::Error("dlcp and at least one baseline (dctcp, pias, pfabric)");
  }
  return out;
}

uint32_t DlcpJobCount(const DlcpExperimentOptions& o, uint32_t hosts) {
  return o.job_hosts == 0 ? 1 : std::max<uint32_t>(hosts / o.job_hosts, 1);
}

Result<std::vector<uint32_t>> DlcpWorkerHosts(const TopologyConfig& topo, uint32_t workers) {
  const auto hosts = static_cast<uint32_t>(topo.hosts.size());
  std::vector<uint32_t> out;
  if (workers == 0) {
    for (uint32_t h = 0; h < hosts; ++h) out.push_back(h);
    return out;
  }
  if (workers > hosts || workers < kDlcpWorkersPerPs) {
    return Status::Error("--workers " + std::to_string(workers) + ": " +
                         std::to_string(kDlcpWorkersPerPs) + " to the network's " +
                         std::to_string(hosts) + " hosts");
  }
  std::vector<std::string> order;  // switches with hosts, in the order they first appear
  std::map<std::string, std::vector<uint32_t>> racks;
  for (uint32_t h = 0; h < hosts; ++h) {
    std::vector<uint32_t>& rack = racks[topo.hosts[h].sw];
    if (rack.empty()) order.push_back(topo.hosts[h].sw);
    rack.push_back(h);
  }
  for (std::size_t round = 0; out.size() < workers; ++round) {
    for (const std::string& sw : order) {
      if (round < racks[sw].size() && out.size() < workers) out.push_back(racks[sw][round]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status DlcpExperimentOptions::Validate() const {
  if (tors < 2 || tors > 16 || hosts_per_tor < 1 || hosts_per_tor > 32 || spines < 1 ||
      spines > 8) {
    return Status::Error("topology: 2..16 ToRs, 1..32 hosts per ToR, 1..8 spines");
  }
  if (tors * hosts_per_tor < kDlcpWorkersPerPs) {
    return Status::Error("fewer hosts than one PS's workers");
  }
  if (job_hosts != 0 && job_hosts < kDlcpWorkersPerPs) {
    return Status::Error("a job needs at least one PS's workers (" +
                         std::to_string(kDlcpWorkersPerPs) + " hosts)");
  }
  if (link_bps == 0 || buffer_pkts == 0 || scale == 0) {
    return Status::Error("link rate, buffer and scale must be positive");
  }
  if (!(loss_bound >= 0 && loss_bound < 1)) return Status::Error("loss bound in [0, 1)");
  if (!(pull_bound >= 0 && pull_bound < 1)) return Status::Error("pull bound in [0, 1)");
  if (!(dlcp_load >= 0 && dlcp_load <= 100)) return Status::Error("DLCP load in [0, 100]");
  return Status::Ok();
}

TopologyConfig DlcpExperimentTopology(const DlcpExperimentOptions& o) {
  return DlcpLeafSpine({o.tors, o.hosts_per_tor, o.spines, o.link_bps, o.link_delay_ns, o.seed});
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, bool dlcp) {
  return RunDlcpExperiment(o, dlcp ? DlcpScheme::kDlcp : DlcpScheme::kDctcp);
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, DlcpScheme scheme) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  return RunDlcpExperiment(o, DlcpExperimentTopology(o), scheme);
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, const TopologyConfig& topo,
                                        bool dlcp) {
  return RunDlcpExperiment(o, topo, dlcp ? DlcpScheme::kDlcp : DlcpScheme::kDctcp);
}

Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& o, const TopologyConfig& topo,
                                        DlcpScheme scheme) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  SWEMU_RETURN_IF_ERROR(CheckDlcpTopology(topo));
  Result<ModelLayers> model = BundledModel(o.model);
  if (!model.ok()) return model.status();
  // One generator for the PS draws, then the gradients' values: the same tensors for both runs.
  SplitMix64 rng(o.seed);
  Result<std::vector<uint32_t>> workers = DlcpWorkerHosts(topo, o.workers);
  if (!workers.ok()) return workers.status();
  Result<FlowPlan> plan =
      PlanFlows(o, *model, static_cast<uint32_t>(topo.hosts.size()), *workers, rng);
  if (!plan.ok()) return plan.status();
  DlcpRun run(o, *model, scheme, std::move(*plan), rng);
  SWEMU_RETURN_IF_ERROR(run.Build(topo));
  SWEMU_RETURN_IF_ERROR(run.Drive());
  Result<DlcpRunResult> result = run.Collect();
  if (result.ok()) {
    result->fabric = DescribeDlcpTopology(topo);
    if (workers->size() != topo.hosts.size()) {
      result->fabric += ", " + std::to_string(workers->size()) + " of them workers";
    }
    result->hosts = static_cast<uint32_t>(workers->size());
    result->jobs = DlcpJobCount(o, result->hosts);
  }
  return result;
}

}  // namespace swemu
