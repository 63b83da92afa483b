#include "hostlib/goat/fabric.h"

#include <algorithm>
#include <set>

#include "hostlib/common/engine_transport.h"
#include "pipeline/engine/engine.h"

namespace swemu {
namespace {

constexpr uint32_t kUnreached = ~uint32_t{0};

}  // namespace

GoatFabricSpec GoatFabricSpec::ThreeSwitch(uint32_t per_switch, uint32_t slots) {
  GoatFabricSpec spec;
  const auto n = static_cast<uint16_t>(per_switch);
  spec.switches = {{"s1", 1, static_cast<uint16_t>(n + 2), slots},
                   {"s2", 2, static_cast<uint16_t>(n + 2), slots},
                   {"s3", 3, 3, slots}};
  for (uint32_t w = 0; w < 2 * per_switch; ++w) {
    spec.hosts.push_back({"w" + std::to_string(w + 1), w < per_switch ? "s1" : "s2",
                          static_cast<uint16_t>(w % per_switch), false, -1});
  }
  spec.hosts.push_back({"ps", "s3", 0, true, -1});
  spec.links = {{"s1", n, "s3", 1},
                {"s2", n, "s3", 2},
                {"s1", static_cast<uint16_t>(n + 1), "s2", static_cast<uint16_t>(n + 1)}};
  return spec;
}

namespace {

// Servers spread over `edges` switches named PREFIX0, PREFIX1, ...: server h on edge h % edges,
// the next free port there; the PS is the first server of the last edge. Hosts in worker-id
// order, the PS last; *on_edge gets each edge's server count.
std::vector<GoatFabricSpec::Host> SpreadServers(uint32_t servers, uint32_t edges,
                                                const std::string& prefix,
                                                std::vector<uint16_t>* on_edge) {
  on_edge->assign(edges, 0);
  std::vector<GoatFabricSpec::Host> hosts;
  GoatFabricSpec::Host ps;
  bool ps_placed = false;
  for (uint32_t h = 0; h < servers; ++h) {
    const uint32_t edge = h % edges;
    const bool is_ps = !ps_placed && edge == edges - 1;
    ps_placed |= is_ps;
    GoatFabricSpec::Host host{is_ps ? "ps" : "w" + std::to_string(h), prefix + std::to_string(edge),
                              (*on_edge)[edge]++, is_ps, -1};
    if (is_ps) {
      ps = host;
    } else {
      hosts.push_back(host);
    }
  }
  if (ps_placed) hosts.push_back(ps);
  return hosts;
}

}  // namespace

GoatFabricSpec GoatFabricSpec::LeafSpine(uint32_t spines, uint32_t leaves, uint32_t servers,
                                         const std::vector<std::string>& programmable,
                                         uint32_t slots) {
  GoatFabricSpec spec;
  auto slots_of = [&](const std::string& name) {
    return std::find(programmable.begin(), programmable.end(), name) != programmable.end() ? slots
                                                                                           : 0u;
  };
  std::vector<uint16_t> on_leaf;
  spec.hosts = SpreadServers(servers, leaves, "leaf", &on_leaf);
  for (uint32_t s = 0; s < spines; ++s) {
    const std::string name = "spine" + std::to_string(s);
    spec.switches.push_back(
        {name, static_cast<uint16_t>(1 + s), static_cast<uint16_t>(leaves), slots_of(name)});
  }
  for (uint32_t l = 0; l < leaves; ++l) {
    const std::string name = "leaf" + std::to_string(l);
    spec.switches.push_back({name, static_cast<uint16_t>(1 + spines + l),
                             static_cast<uint16_t>(on_leaf[l] + spines), slots_of(name)});
    for (uint32_t s = 0; s < spines; ++s) {
      spec.links.push_back({name, static_cast<uint16_t>(on_leaf[l] + s),
                            "spine" + std::to_string(s), static_cast<uint16_t>(l)});
    }
  }
  return spec;
}

GoatFabricSpec GoatFabricSpec::FatTree(uint32_t k, uint32_t servers,
                                       const std::vector<std::string>& programmable,
                                       uint32_t slots) {
  GoatFabricSpec spec;
  auto add = [&](const std::string& name, uint32_t ports) {
    const bool on = std::find(programmable.begin(), programmable.end(), name) != programmable.end();
    spec.switches.push_back({name, static_cast<uint16_t>(spec.switches.size() + 1),
                             static_cast<uint16_t>(ports), on ? slots : 0u});
  };
  const uint32_t half = k / 2;
  std::vector<uint16_t> on_edge;
  spec.hosts = SpreadServers(servers, k * half, "edge", &on_edge);
  for (uint32_t c = 0; c < half * half; ++c) add("core" + std::to_string(c), k);
  for (uint32_t a = 0; a < k * half; ++a) add("agg" + std::to_string(a), k);
  for (uint32_t e = 0; e < k * half; ++e) add("edge" + std::to_string(e), on_edge[e] + half);
  // Pod p: its edges and aggregation switches p * half .. p * half + half - 1. Edge i of a pod
  // reaches aggregation switch j by its port servers + j (the aggregation switch's port i);
  // aggregation switch j reaches cores j * half .. j * half + half - 1 by its ports half + u
  // (core port p).
  for (uint32_t p = 0; p < k; ++p) {
    for (uint32_t i = 0; i < half; ++i) {
      const uint32_t e = p * half + i;
      for (uint32_t j = 0; j < half; ++j) {
        spec.links.push_back({"edge" + std::to_string(e), static_cast<uint16_t>(on_edge[e] + j),
                              "agg" + std::to_string(p * half + j), static_cast<uint16_t>(i)});
      }
    }
    for (uint32_t j = 0; j < half; ++j) {
      for (uint32_t u = 0; u < half; ++u) {
        spec.links.push_back({"agg" + std::to_string(p * half + j), static_cast<uint16_t>(half + u),
                              "core" + std::to_string(j * half + u), static_cast<uint16_t>(p)});
      }
    }
  }
  return spec;
}

Result<GoatFabric> GoatFabric::Create(GoatFabricSpec spec) {
  GoatFabric fabric(std::move(spec));
  const GoatFabricSpec& s = fabric.spec_;
  std::set<std::string> names;
  std::set<uint16_t> ids;
  std::set<std::pair<std::string, uint16_t>> used;
  for (const auto& sw : s.switches) {
    if (!names.insert(sw.name).second)
      return Status::Error("goat fabric: switch " + sw.name + " twice");
    if (sw.node_id == kGoatNodePs || sw.node_id == kGoatNodeAny || !ids.insert(sw.node_id).second) {
      return Status::Error("goat fabric: switch " + sw.name + ": node id " +
                           std::to_string(sw.node_id) + " is reserved or taken");
    }
  }
  auto port_ok = [&](const std::string& sw, uint16_t port, const std::string& what) -> Status {
    const uint32_t i = fabric.SwitchIndex(sw);
    if (i == kUnreached) return Status::Error("goat fabric: " + what + ": no switch " + sw);
    if (port >= s.switches[i].ports) {
      return Status::Error("goat fabric: " + what + ": " + sw + " has no port " +
                           std::to_string(port));
    }
    if (!used.insert({sw, port}).second) {
      return Status::Error("goat fabric: " + what + ": " + sw + ":" + std::to_string(port) +
                           " is already used");
    }
    return Status::Ok();
  };
  uint32_t ps_count = 0;
  for (uint32_t h = 0; h < s.hosts.size(); ++h) {
    SWEMU_RETURN_IF_ERROR(port_ok(s.hosts[h].sw, s.hosts[h].port, "host " + s.hosts[h].name));
    if (s.hosts[h].ps) {
      fabric.ps_ = h;
      ++ps_count;
    }
  }
  if (ps_count != 1)
    return Status::Error("goat fabric: needs exactly one PS, has " + std::to_string(ps_count));
  if (fabric.worker_hosts().empty() || fabric.worker_hosts().size() > kGoatMaxWorkers) {
    return Status::Error("goat fabric: 1.." + std::to_string(kGoatMaxWorkers) + " workers");
  }
  for (const auto& l : s.links) {
    SWEMU_RETURN_IF_ERROR(port_ok(l.a, l.a_port, "link " + l.a + "-" + l.b));
    SWEMU_RETURN_IF_ERROR(port_ok(l.b, l.b_port, "link " + l.a + "-" + l.b));
  }
  SWEMU_RETURN_IF_ERROR(fabric.ComputeRoutes());
  return fabric;
}

uint32_t GoatFabric::SwitchIndex(const std::string& name) const {
  for (uint32_t i = 0; i < spec_.switches.size(); ++i) {
    if (spec_.switches[i].name == name) return i;
  }
  return kUnreached;
}

// The shortest paths of swemu/topology_routes.h over the spec's switches, links and hosts.
Status GoatFabric::ComputeRoutes() {
  std::vector<std::string> names;
  for (const auto& sw : spec_.switches) names.push_back(sw.name);
  std::vector<LinkSpec> links;
  for (const auto& l : spec_.links) links.push_back({l.a, l.a_port, l.b, l.b_port});
  std::vector<std::pair<std::string, PortId>> hosts;
  for (const auto& h : spec_.hosts) hosts.emplace_back(h.sw, h.port);
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(std::move(names), links, hosts);
  if (!routes.ok()) return Status::Error("goat fabric: " + routes.message());
  routes_ = std::move(*routes);
  const uint32_t ps_sw = SwitchIndex(spec_.hosts[ps_].sw);
  for (const auto& h : spec_.hosts) {
    if (routes_.Hops(SwitchIndex(h.sw), ps_sw) == TopologyRoutes::kNone) {
      return Status::Error("goat fabric: host " + h.name + " cannot reach the PS");
    }
  }
  return Status::Ok();
}

std::vector<uint32_t> GoatFabric::worker_hosts() const {
  std::vector<uint32_t> out;
  for (uint32_t h = 0; h < spec_.hosts.size(); ++h) {
    if (!spec_.hosts[h].ps) out.push_back(h);
  }
  return out;
}

MacAddr GoatFabric::HostMac(uint32_t host) { return MacAddr::FromU64(0x020000000100ULL + host); }
Ipv4Addr GoatFabric::HostIp(uint32_t host) {
  return MakeIpv4Addr(10, 1, static_cast<uint8_t>((host + 1) >> 8),
                      static_cast<uint8_t>((host + 1) & 0xFF));
}

Ipv4Addr GoatFabric::Ip(uint32_t host) const {
  const auto it = addresses_.find(host);
  return it == addresses_.end() ? HostIp(host) : it->second.first;
}
MacAddr GoatFabric::Mac(uint32_t host) const {
  const auto it = addresses_.find(host);
  return it == addresses_.end() ? HostMac(host) : it->second.second;
}

GoatJob GoatFabric::MakeJob(uint16_t job_id, uint16_t elements,
                            std::vector<uint32_t> fragments) const {
  GoatJob job;
  job.job_id = job_id;
  job.elements = elements;
  for (uint32_t h : worker_hosts())
    job.workers.push_back({spec_.hosts[h].name, Mac(h), Ip(h)});
  job.ps = {spec_.hosts[ps_].name, Mac(ps_), Ip(ps_)};
  job.node.assign(job.workers.size(), std::vector<uint16_t>(fragments.size(), kGoatNodePs));
  job.fragments = std::move(fragments);
  return job;
}

std::string GoatFabric::StaticScript(uint32_t s) const {
  std::string script;
  for (uint32_t h = 0; h < spec_.hosts.size(); ++h) {
    const int32_t port = routes_.PortToHost(s, h);
    if (port < 0) continue;
    script +=
        "table_add dmac forward " + FormatMac(Mac(h)) + " => " + std::to_string(port) + "\n";
  }
  for (uint32_t t = 0; t < spec_.switches.size(); ++t) {
    if (t == s || routes_.PortTowards(s, t) < 0) continue;
    script += "table_add goat_route forward " + std::to_string(spec_.switches[t].node_id) + " => " +
              std::to_string(routes_.PortTowards(s, t)) + "\n";
  }
  return script;
}

std::string GoatFabric::NodeScript(uint16_t job_id, uint16_t node_id,
                                   const std::vector<GoatNodeEntry>& entries) {
  std::string script;
  for (const GoatNodeEntry& e : entries) {
    script += std::string("table_add goat_node ") + (e.share ? "share " : "aggregate ") +
              std::to_string(job_id) + " " + std::to_string(e.share ? kGoatNodeAny : node_id) +
              " " + std::to_string(e.submodel) + " => " + std::to_string(e.base) + " " +
              std::to_string(e.size) + " " + std::to_string(e.fan_in) + "\n";
  }
  return script;
}

Result<GinaProblem> GoatFabric::Problem(const std::vector<uint64_t>& fragments) const {
  GinaGraph g;
  for (const auto& sw : spec_.switches) g.Add({sw.name, GinaNode::Kind::kSwitch, sw.slots});
  for (uint32_t h : worker_hosts()) g.Add({spec_.hosts[h].name, GinaNode::Kind::kWorker, 0});
  g.Add({spec_.hosts[ps_].name, GinaNode::Kind::kPs, 0});
  for (const auto& l : spec_.links) SWEMU_RETURN_IF_ERROR(g.Link(l.a, l.b));
  for (const auto& h : spec_.hosts) SWEMU_RETURN_IF_ERROR(g.Link(h.name, h.sw));
  return BuildGinaProblem(g, fragments);
}

GoatPublished GoatFabric::PublishPlan(const GinaProblem& problem, const GinaPlan& plan) const {
  GoatPublished out;
  const std::size_t workers = problem.num_workers();
  const std::size_t submodels = problem.submodels.size();
  out.node.assign(workers, std::vector<uint16_t>(submodels, kGoatNodePs));
  std::vector<uint16_t> id_of(problem.num_switches());
  for (std::size_t s = 0; s < problem.num_switches(); ++s) {
    id_of[s] = spec_.switches[SwitchIndex(problem.switch_names[s])].node_id;
  }
  for (std::size_t g = 0; g < submodels; ++g) {
    for (std::size_t w = 0; w < workers; ++w) {
      const int32_t s = plan.node[g][w];
      if (s != kGinaPs) out.node[w][g] = id_of[s];
    }
    for (std::size_t s = 0; s < problem.num_switches(); ++s) {
      if (plan.fan_in[g][s] == 0) continue;
      out.entries[problem.switch_names[s]].push_back({static_cast<uint16_t>(g), false,
                                                      plan.base[g][s], problem.submodels[g],
                                                      plan.fan_in[g][s]});
    }
  }
  return out;
}

std::vector<uint32_t> GoatFabric::PathToPs(uint32_t host) const {
  return routes_.SwitchPath(routes_.HostSwitch(host), routes_.HostSwitch(ps_));
}

GoatPublished GoatFabric::PublishSharing(const std::vector<uint32_t>& fragments) const {
  GoatPublished out;
  const std::vector<uint32_t> workers = worker_hosts();
  out.node.assign(workers.size(), std::vector<uint16_t>(fragments.size(), kGoatNodeAny));
  std::vector<uint32_t> crossing(spec_.switches.size(), 0);
  for (uint32_t h : workers) {
    for (uint32_t s : PathToPs(h)) ++crossing[s];
  }
  for (uint32_t s = 0; s < spec_.switches.size(); ++s) {
    const auto& sw = spec_.switches[s];
    if (sw.slots == 0 || crossing[s] == 0) continue;
    uint64_t first = 0;
    for (uint32_t g = 0; g < fragments.size(); ++g) {
      out.entries[sw.name].push_back(
          {static_cast<uint16_t>(g), true, first % sw.slots, sw.slots, crossing[s]});
      first += fragments[g];
    }
  }
  return out;
}

Status GoatFabric::CheckPublished(const GoatPublished& published,
                                  const std::vector<uint32_t>& fragments) const {
  for (const auto& [name, entries] : published.entries) {
    const uint32_t s = SwitchIndex(name);
    if (s == kUnreached) {
      return Status::Error("goat plan: names switch " + name + ", which the network does not have");
    }
    const auto& sw = spec_.switches[s];
    if (sw.slots == 0 && !entries.empty()) {
      return Status::Error("goat plan: puts sub-models on " + name +
                           ", which has no aggregator memory");
    }
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t used = 0;
    for (const GoatNodeEntry& e : entries) {
      const std::string what = "goat plan: " + name + ", sub-model " + std::to_string(e.submodel);
      if (e.submodel >= fragments.size())
        return Status::Error(what + ": the job has no such sub-model");
      if (e.fan_in == 0 || e.fan_in > kGoatMaxWorkers) {
        return Status::Error(what + ": fan-in " + std::to_string(e.fan_in) + " (1..64)");
      }
      if (e.share) {
        if (e.size == 0 || e.size > sw.slots || e.base >= sw.slots) {
          return Status::Error(what + ": shares " + std::to_string(e.size) + " slots from " +
                               std::to_string(e.base) + ", the switch has " +
                               std::to_string(sw.slots));
        }
        continue;
      }
      if (e.size != fragments[e.submodel]) {
        return Status::Error(what + ": " + std::to_string(e.size) + " slots for " +
                             std::to_string(fragments[e.submodel]) + " fragments");
      }
      used += e.size;
      if (e.base + e.size > sw.slots) {
        return Status::Error("goat plan: exceeds " + name + "'s memory: sub-model " +
                             std::to_string(e.submodel) + " at slots " + std::to_string(e.base) +
                             ".." + std::to_string(e.base + e.size - 1) + ", the switch has " +
                             std::to_string(sw.slots) + " (" + std::to_string(used) +
                             " slots planned so far)");
      }
      for (const auto& [b, n] : ranges) {
        if (e.base < b + n && b < e.base + e.size) {
          return Status::Error(what + ": its slots overlap another sub-model's on " + name);
        }
      }
      ranges.emplace_back(e.base, e.size);
    }
  }
  if (published.node.size() != num_workers()) {
    return Status::Error("goat plan: nodes for " + std::to_string(published.node.size()) +
                         " workers, the network has " + std::to_string(num_workers()));
  }
  for (std::size_t w = 0; w < published.node.size(); ++w) {
    if (published.node[w].size() != fragments.size()) {
      return Status::Error("goat plan: worker " + std::to_string(w) + " has nodes for " +
                           std::to_string(published.node[w].size()) + " sub-models, the job " +
                           std::to_string(fragments.size()));
    }
    for (uint16_t id : published.node[w]) {
      if (id == kGoatNodePs || id == kGoatNodeAny) continue;
      bool known = false;
      for (const auto& sw : spec_.switches) known |= sw.node_id == id;
      if (!known) {
        return Status::Error("goat plan: worker " + std::to_string(w) + " sends to node " +
                             std::to_string(id) + ", which is no switch of the network");
      }
    }
  }
  return Status::Ok();
}

GoatPublished GoatFabric::PublishPsOnly(uint32_t submodels) const {
  GoatPublished out;
  out.node.assign(num_workers(), std::vector<uint16_t>(submodels, kGoatNodePs));
  return out;
}

Result<std::vector<EngineTransport*>> GoatFabric::Build(
    Engine& engine, const GoatPublished& published, uint16_t job_id, uint16_t elements,
    const GoatNetOptions& net,
    std::map<std::pair<std::string, uint16_t>, uint64_t>* node_handles) const {
  std::vector<LinkSpec> links;
  for (const auto& l : spec_.links) {
    links.push_back({l.a, l.a_port, l.b, l.b_port, l.rate_bps != 0 ? l.rate_bps : net.link_rate_bps,
                     l.delay_ns < 0 ? net.link_delay_ns : static_cast<TimeNs>(l.delay_ns),
                     l.loss < 0 ? net.loss : l.loss});
  }
  for (uint32_t s = 0; s < spec_.switches.size(); ++s) {
    const auto& sw = spec_.switches[s];
    SwitchConfig config;
    config.name = sw.name;
    config.num_ports = sw.ports;
    config.program = "goat";
    config.program_options.Set("elements", std::to_string(elements));
    config.program_options.Set("slots", std::to_string(std::max<uint32_t>(sw.slots, 1)));
    config.tm.port_rate_bps = sw.port_rate_bps != 0 ? sw.port_rate_bps : net.link_rate_bps;
    if (net.queue_depth_pkts != 0) config.tm.queue.depth_pkts = net.queue_depth_pkts;
    if (net.buffer_bytes != 0) config.tm.shared_buffer_bytes = net.buffer_bytes;
    if (net.stage_sram_bytes != 0) config.pipeline.budget.sram_bytes = net.stage_sram_bytes;
    ApplyLinkRates(links, config);
    SWEMU_RETURN_IF_ERROR(engine.AddSwitch(config, ""));
    const CommandTable& commands = engine.FindSwitch(sw.name)->commands();
    SWEMU_RETURN_IF_ERROR(commands.RunText(StaticScript(s), sw.name));
    const auto entries = published.entries.find(sw.name);
    if (entries == published.entries.end()) continue;
    for (const GoatNodeEntry& e : entries->second) {
      Result<std::string> added = commands.Execute(NodeScript(job_id, sw.node_id, {e}));
      if (!added.ok()) return Status::Error(sw.name + ": " + added.message());
      const std::size_t at = added->rfind(' ');
      if (node_handles != nullptr && at != std::string::npos) {
        (*node_handles)[{sw.name, e.submodel}] = std::stoull(added->substr(at + 1));
      }
    }
  }
  for (const LinkSpec& link : links) SWEMU_RETURN_IF_ERROR(engine.AddLink(link));
  std::vector<EngineTransport*> transports;
  for (const auto& h : spec_.hosts) {
    const TimeNs delay = h.delay_ns < 0 ? net.host_delay_ns : static_cast<TimeNs>(h.delay_ns);
    Result<EngineTransport*> t =
        EngineTransport::Attach(engine, h.sw, h.port, delay, h.loss < 0 ? net.loss : h.loss);
    if (!t.ok()) return t.status();
    transports.push_back(*t);
  }
  return transports;
}

}  // namespace swemu
