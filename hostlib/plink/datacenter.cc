#include "hostlib/plink/datacenter.h"

#include <algorithm>
#include <string>

#include "hostlib/common/engine_transport.h"
#include "hostlib/plink/probe_rounds.h"
#include "pipeline/core/hash.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/rng.h"
#include "pipeline/switch/switch.h"

namespace swemu {

EmulatedDatacenter::~EmulatedDatacenter() = default;

namespace {

// The tree's shape checked: the counts per level, delays and rates per tier, hosts per rack.
Status CheckTreeSpec(const DatacenterSpec& spec, uint32_t racks) {
  const auto levels = static_cast<uint32_t>(spec.fanout.size());
  if (spec.tier_delay_ns.size() != levels + 1) {
    return Status::Error("datacenter: one delay per tier (" + std::to_string(levels + 1) + ")");
  }
  if (!spec.tier_rate_bps.empty() && spec.tier_rate_bps.size() != levels + 1) {
    return Status::Error("datacenter: one rate per tier (" + std::to_string(levels + 1) + ")");
  }
  if (std::find(spec.tier_rate_bps.begin(), spec.tier_rate_bps.end(), 0) !=
          spec.tier_rate_bps.end() ||
      (spec.tier_rate_bps.empty() && spec.link_rate_bps == 0)) {
    return Status::Error("datacenter: a link rate of 0");
  }
  if (!spec.rack_hosts.empty() && spec.rack_hosts.size() != racks) {
    return Status::Error("datacenter: rack_hosts needs one count per rack (" +
                         std::to_string(racks) + ")");
  }
  for (uint32_t r = 0; r < racks; ++r) {
    const uint32_t hosts = spec.rack_hosts.empty() ? spec.per_rack : spec.rack_hosts[r];
    if (hosts == 0 || hosts > 64) {
      return Status::Error("datacenter: rack " + std::to_string(r) + " must hold 1..64 hosts");
    }
  }
  return Status::Ok();
}

std::string TreeSwitchName(uint32_t l, uint32_t i) {
  return l == 0 ? std::string("core") : "l" + std::to_string(l) + "s" + std::to_string(i);
}

// Each host's location from the central switch (PlinkPlacement).
std::vector<NodeLocation> Locations(const TopologyRoutes& routes, uint32_t hosts) {
  const uint32_t n = routes.num_switches();
  uint32_t centre = 0, best = TopologyRoutes::kNone;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t farthest = 0;
    for (uint32_t h = 0; h < hosts; ++h) {
      farthest = std::max(farthest, routes.Hops(s, routes.HostSwitch(h)));
    }
    if (farthest < best) best = farthest, centre = s;
  }
  std::vector<uint32_t> index(n, 0), seen(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t d = routes.Hops(centre, s);
    if (d != TopologyRoutes::kNone) index[s] = seen[d]++;
  }
  std::vector<NodeLocation> where;
  for (uint32_t h = 0; h < hosts; ++h) {
    const std::vector<uint32_t> path = routes.SwitchPath(centre, routes.HostSwitch(h));
    NodeLocation loc;
    for (std::size_t k = 1; k < path.size(); ++k) loc.push_back(index[path[k]]);
    loc.push_back(h);
    where.push_back(loc);
  }
  return where;
}

// One line for the first two hosts that cannot reach each other, or for too few or many hosts.
Status CheckHosts(const TopologyConfig& topo, const TopologyRoutes& routes, uint32_t max_hosts) {
  const auto hosts = static_cast<uint32_t>(topo.hosts.size());
  if (hosts < 2) {
    return Status::Error("datacenter: PLink needs at least two hosts, not " +
                         std::to_string(hosts));
  }
  if (hosts > max_hosts) {
    return Status::Error("datacenter: at most " + std::to_string(max_hosts) + " hosts, not " +
                         std::to_string(hosts));
  }
  for (uint32_t h = 1; h < hosts; ++h) {
    const uint32_t a = routes.HostSwitch(0), b = routes.HostSwitch(h);
    if (routes.Hops(a, b) == TopologyRoutes::kNone) {
      return Status::Error("datacenter: hosts " + topo.hosts[0].name + " and " +
                           topo.hosts[h].name + " cannot reach each other (no links from " +
                           routes.name(a) + " to " + routes.name(b) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<PlinkPlacement> PlacePlinkHosts(const TopologyConfig& topo, const TopologyRoutes& routes,
                                       uint32_t max_hosts) {
  SWEMU_RETURN_IF_ERROR(CheckHosts(topo, routes, max_hosts));
  PlinkPlacement place;
  for (const TopologyHost& host : topo.hosts) {
    const auto known = std::find(place.rack_names.begin(), place.rack_names.end(), host.sw);
    place.rack_of.push_back(static_cast<uint32_t>(known - place.rack_names.begin()));
    if (known == place.rack_names.end()) place.rack_names.push_back(host.sw);
  }
  place.where = Locations(routes, static_cast<uint32_t>(topo.hosts.size()));
  for (const NodeLocation& loc : place.where) {
    place.tiers = std::max(place.tiers, static_cast<uint32_t>(loc.size()));
  }
  return place;
}

Result<TopologyConfig> DatacenterTopology(const DatacenterSpec& spec) {
  const auto levels = static_cast<uint32_t>(spec.fanout.size());
  if (levels == 0 || spec.per_rack == 0) return Status::Error("datacenter: needs racks and hosts");
  for (uint32_t f : spec.fanout) {
    if (f == 0 || f > 64) return Status::Error("datacenter: fanout must be 1..64");
  }
  std::vector<uint32_t> count(levels + 1, 1);  // switches per level; level 0 is the core
  for (uint32_t l = 1; l <= levels; ++l) count[l] = count[l - 1] * spec.fanout[l - 1];
  const uint32_t racks = count[levels];
  if (racks > 4096) return Status::Error("datacenter: at most 4096 hosts");
  SWEMU_RETURN_IF_ERROR(CheckTreeSpec(spec, racks));
  std::vector<uint64_t> rate(levels + 1, spec.link_rate_bps);
  if (!spec.tier_rate_bps.empty()) rate = spec.tier_rate_bps;
  std::vector<uint32_t> occupancy(racks, spec.per_rack);
  if (!spec.rack_hosts.empty()) occupancy = spec.rack_hosts;
  TopologyConfig topo;
  topo.path = "the datacenter tree";
  topo.seed = spec.seed;
  for (uint32_t l = 0; l <= levels; ++l) {
    for (uint32_t i = 0; i < count[l]; ++i) {
      const uint32_t down = l == levels ? occupancy[i] : spec.fanout[l];
      LoadedSwitchConfig sw;
      sw.config.name = TreeSwitchName(l, i);
      sw.config.num_ports = static_cast<uint16_t>(down + (l == 0 ? 0 : 1));
      sw.config.program = "l2l3";
      sw.config.tm.port_rate_bps = rate[l];  // its down links; the link sets the uplink's
      topo.switches.push_back(std::move(sw));
    }
  }
  for (uint32_t l = 1; l <= levels; ++l) {
    for (uint32_t i = 0; i < count[l]; ++i) {
      const uint32_t up = l == levels ? occupancy[i] : spec.fanout[l];
      topo.links.push_back({TreeSwitchName(l, i), static_cast<PortId>(up),
                            TreeSwitchName(l - 1, i / spec.fanout[l - 1]),
                            static_cast<PortId>(i % spec.fanout[l - 1]), rate[l - 1],
                            spec.tier_delay_ns[l - 1], 0});
    }
  }
  for (uint32_t r = 0; r < racks; ++r) {
    for (uint32_t k = 0; k < occupancy[r]; ++k) {
      TopologyHost host;
      host.sw = TreeSwitchName(levels, r);
      host.port = static_cast<PortId>(k);
      host.delay_ns = spec.tier_delay_ns[levels];
      host.loss = spec.host_link_loss;
      host.name = "h" + std::to_string(topo.hosts.size());
      topo.hosts.push_back(std::move(host));
    }
  }
  if (topo.hosts.size() > 4096) return Status::Error("datacenter: at most 4096 hosts");
  return topo;
}

Result<std::unique_ptr<EmulatedDatacenter>> EmulatedDatacenter::Create(const DatacenterSpec& spec) {
  Result<TopologyConfig> topo = DatacenterTopology(spec);
  if (!topo.ok()) return topo.status();
  return Create(*topo, spec);
}

Result<std::unique_ptr<EmulatedDatacenter>> EmulatedDatacenter::Create(
    const TopologyConfig& topo, const DatacenterSpec& spec) {
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(topo);
  if (!routes.ok()) return routes.status();
  Result<PlinkPlacement> place = PlacePlinkHosts(topo, *routes);
  if (!place.ok()) return place.status();
  const auto hosts = static_cast<uint32_t>(topo.hosts.size());
  auto dc = std::unique_ptr<EmulatedDatacenter>(new EmulatedDatacenter());
  dc->rack_of_ = std::move(place->rack_of);
  dc->rack_names_ = std::move(place->rack_names);
  dc->where_ = std::move(place->where);
  dc->tiers_ = place->tiers;
  std::vector<LoadedSwitchConfig> switches = topo.switches;
  for (LoadedSwitchConfig& sw : switches) {
    sw.config.program = "l2l3";  // PLink's entries below, not the file's startup script
    sw.startup_script.clear();
  }
  dc->engine_ = std::make_unique<Engine>(spec.seed, 1 << 16);
  SWEMU_RETURN_IF_ERROR(AddSwitchesAndLinks(*dc->engine_, switches, topo.links));
  auto mac = [](uint32_t h) { return MacAddr::FromU64(0x020000000200ULL + h); };
  for (uint32_t s = 0; s < routes->num_switches(); ++s) {
    std::string script;
    for (uint32_t h = 0; h < hosts; ++h) {
      const int32_t port = routes->PortToHost(s, h);
      if (port < 0) continue;  // a switch no host can reach
      script += "table_add dmac forward " + FormatMac(mac(h)) + " => " + std::to_string(port) + "\n";
    }
    SWEMU_RETURN_IF_ERROR(
        dc->engine_->FindSwitch(routes->name(s))->commands().RunText(script, routes->name(s)));
  }
  for (uint32_t h = 0; h < hosts; ++h) {
    const TopologyHost& host = topo.hosts[h];
    dc->addrs_.push_back({mac(h), MakeIpv4Addr(10, 2, static_cast<uint8_t>((h + 1) >> 8),
                                               static_cast<uint8_t>((h + 1) & 0xFF))});
    dc->rack_switch_.push_back(host.sw);
    dc->port_of_.push_back(host.port);
    dc->host_rate_bps_.push_back(
        topo.switches[routes->HostSwitch(h)].config.tm.PortRateBps(host.port));
  }
  SplitMix64 rng(HashPair(spec.seed, 0x504c494e));  // "PLIN"
  for (uint32_t h = 0; h < hosts; ++h) {
    Result<EngineTransport*> t =
        EngineTransport::Attach(*dc->engine_, dc->rack_switch_[h], dc->port_of_[h],
                                topo.hosts[h].delay_ns, topo.hosts[h].loss);
    if (!t.ok()) return t.status();
    ProberOptions po = spec.prober;
    po.host_delay_ns =
        static_cast<TimeNs>(rng.NextUnit() * static_cast<double>(spec.host_delay_max_ns));
    po.jitter_mean_ns = spec.jitter_mean_ns;
    po.seed = rng.Next();
    AggEngineOptions ao = spec.agg;
    if (ao.nic_rate_bps == 0) ao.nic_rate_bps = dc->host_rate_bps_[h];
    dc->probers_.push_back(
        std::make_unique<PlinkProber>(static_cast<uint16_t>(h), dc->addrs_, *t, po));
    dc->aggs_.push_back(
        std::make_unique<PlinkAggNode>(static_cast<uint16_t>(h), dc->addrs_, *t, ao));
    dc->endpoints_.push_back(std::make_unique<EndpointSet>());
    dc->endpoints_.back()->Add(dc->probers_.back().get());
    dc->endpoints_.back()->Add(dc->aggs_.back().get());
    (*t)->SetEndpoint(dc->endpoints_.back().get());
    dc->transports_.push_back(*t);
  }
  return dc;
}

Result<ReductionRun> EmulatedDatacenter::AllReduce(const AggPlan& plan,
                                                   const std::vector<std::vector<float>>& in,
                                                   std::vector<std::vector<float>>* out,
                                                   TimeNs limit_ns) {
  const uint32_t n = hosts();
  if (in.size() != n) return Status::Error("allreduce: one input per host");
  for (const auto& v : in) {
    if (v.size() != in[0].size()) return Status::Error("allreduce: inputs of different sizes");
  }
  out->assign(n, std::vector<float>(in[0].size(), 0.0f));
  const uint16_t epoch = ++epoch_;
  const TimeNs start = engine_->Now();
  ReductionRun run;
  for (const auto& a : aggs_) {  // the counters run on: this run's are the difference
    run.packets -= a->stats().packets_sent;
    run.retransmissions -= a->stats().retransmissions;
    run.timeouts -= a->stats().timeouts;
  }
  for (uint32_t h = 0; h < n; ++h) {
    SWEMU_RETURN_IF_ERROR(
        aggs_[h]->AllReduce(plan, epoch, in[h].data(), (*out)[h].data(), in[h].size(), start));
    transports_[h]->Wake();
  }
  auto all_done = [&] {
    return std::all_of(aggs_.begin(), aggs_.end(), [](const auto& a) { return a->done(); });
  };
  SWEMU_RETURN_IF_ERROR(engine_->Run(start + limit_ns, all_done));
  if (!all_done()) {
    const auto finished =
        std::count_if(aggs_.begin(), aggs_.end(), [](const auto& a) { return a->done(); });
    return Status::Error("allreduce: " + std::to_string(finished) + " of " + std::to_string(n) +
                         " hosts done after " + std::to_string(limit_ns / 1'000'000) +
                         " ms of virtual time");
  }
  for (uint32_t h = 0; h < n; ++h) {
    const AggNodeReport& r = aggs_[h]->report();
    run.latency_ns = std::max(run.latency_ns, r.finish_ns - start);
    for (uint32_t j = 0; j < n; ++j) {
      run.total_bytes += r.sent_to[j];
      if (rack_of_[h] != rack_of_[j]) run.cross_rack_bytes += r.sent_to[j];
    }
    run.packets += aggs_[h]->stats().packets_sent;
    run.retransmissions += aggs_[h]->stats().retransmissions;
    run.timeouts += aggs_[h]->stats().timeouts;
    run.reports.push_back(r);
  }
  return run;
}

Status EmulatedDatacenter::SetHostRate(uint32_t host, uint64_t bps) {
  if (host >= hosts()) return Status::Error("datacenter: no host " + std::to_string(host));
  const uint64_t rate = bps == 0 ? host_rate_bps_[host] : bps;
  Switch* sw = engine_->FindSwitch(rack_switch_[host]);
  SWEMU_RETURN_IF_ERROR(sw->tm().SetPortRate(static_cast<PortId>(port_of_[host]), rate));
  aggs_[host]->set_nic_rate_bps(rate);
  return Status::Ok();
}

Status EmulatedDatacenter::AddBackground(uint32_t from, uint32_t to, std::size_t frame_len,
                                         std::vector<BackgroundPhase> phases) {
  if (from >= hosts() || to >= hosts() || from == to) {
    return Status::Error("datacenter: background traffic needs two different hosts");
  }
  for (BackgroundPhase& p : phases) p.start_ns += engine_->Now();
  background_.push_back(std::make_unique<BackgroundSource>(
      addrs_[from].mac, addrs_[to].mac, addrs_[from].ip, addrs_[to].ip, frame_len,
      std::move(phases), transports_[from]));
  endpoints_[from]->Add(background_.back().get());
  transports_[from]->Wake();
  return Status::Ok();
}

void EmulatedDatacenter::TakeDown(uint32_t host) {
  if (host >= probers_.size()) return;
  probers_[host]->Leave();
  // A host that hears and says nothing (not nullptr: that is refused before the engine starts).
  transports_[host]->SetEndpoint(&silent_);
}

Result<DistanceMatrix> EmulatedDatacenter::ProbeDistances(uint32_t* unanswered_pairs) {
  std::vector<PlinkProber*> probers;
  for (const auto& p : probers_) probers.push_back(p.get());
  ProbeRoundsDriver driver;
  driver.now = [&] { return engine_->Now(); };
  driver.started = [&](uint32_t node) { transports_[node]->Wake(); };
  // Each round gets a second of virtual time; a probe that is still unanswered then is lost.
  driver.run = [&](uint32_t, const std::function<bool()>& all_idle) {
    return engine_->Run(engine_->Now() + 1'000'000'000, all_idle);
  };
  return RunProbeRounds(probers, driver, &round_, unanswered_pairs);
}

}  // namespace swemu
