#include "hostlib/pcn/network.h"

#include <algorithm>
#include <set>

#include "hostlib/pcn/experiment.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {
namespace {

constexpr uint32_t kMaxWorkers = 64;
constexpr uint32_t kMaxBackground = 128;
constexpr uint32_t kFullFrame = 1514;

// Sorts the hosts PCN attaches by role; one PS and at least one worker.
Status AssignRoles(const TopologyConfig& topo, PcnNetwork& net) {
  const std::string file = topo.path + ": ";
  std::string ps_names;
  for (uint32_t i = 0; i < topo.hosts.size(); ++i) {
    const std::string& role = topo.hosts[i].role;
    if (role == "ps") {
      ps_names += (ps_names.empty() ? "" : ", ") + topo.hosts[i].name;
      net.ps.index = i;
    } else if (role == "worker") {
      net.workers.push_back(PcnHost{});
      net.workers.back().index = i;
    } else if (role == "background") {
      net.background.push_back(PcnHost{});
      net.background.back().index = i;
    }
  }
  if (ps_names.empty()) {
    return Status::Error(file + "no PS: one host should say role=ps (host = SW:PORT role=ps)");
  }
  if (ps_names.find(',') != std::string::npos) {
    return Status::Error(file + "more than one host says role=ps (" + ps_names +
                         "); PCN has one PS");
  }
  if (net.workers.empty()) {
    return Status::Error(file + "no workers: the DDL workers' hosts should say role=worker " +
                         "(host = SW:PORT role=worker)");
  }
  if (net.workers.size() > kMaxWorkers || net.background.size() > kMaxBackground) {
    return Status::Error(file + std::to_string(net.workers.size()) + " workers and " +
                         std::to_string(net.background.size()) + " background hosts: at most " +
                         std::to_string(kMaxWorkers) + " and " + std::to_string(kMaxBackground));
  }
  return Status::Ok();
}

// Every host's port exists on its switch, and is neither a link's nor another host's.
Status CheckPorts(const TopologyConfig& topo, const TopologyRoutes& routes) {
  std::set<std::pair<std::string, PortId>> used;
  for (const LinkSpec& l : topo.links) {
    used.insert({l.a, l.a_port});
    used.insert({l.b, l.b_port});
  }
  for (const TopologyHost& h : topo.hosts) {
    const std::string where = topo.path + ": host " + h.name + " on " + h.sw + ":" +
                              std::to_string(h.port);
    const SwitchConfig& sw = topo.switches[routes.SwitchIndex(h.sw)].config;
    if (h.port >= sw.num_ports) {
      return Status::Error(where + ": " + h.sw + " has ports 0.." +
                           std::to_string(sw.num_ports - 1));
    }
    if (!used.insert({h.sw, h.port}).second) {
      return Status::Error(where + ": the port is already a link's or another host's");
    }
  }
  return Status::Ok();
}

// The file's mac= and ip=, else addresses from the host's place; unique among PCN's hosts.
Status AssignAddresses(const TopologyConfig& topo, PcnNetwork& net) {
  std::set<uint64_t> macs;
  std::set<Ipv4Addr> ips;
  auto assign = [&](PcnHost& h) -> Status {
    const TopologyHost& t = topo.hosts[h.index];
    const uint32_t n = h.index + 1;
    h.mac = MacAddr::FromU64(0x020000010000ull | n);
    h.ip = (10u << 24) | (1u << 16) | n;
    if (!t.mac.empty()) h.mac = *ParseMac(t.mac);  // checked when the file was loaded
    if (!t.ip.empty()) h.ip = *ParseIpv4(t.ip.substr(0, t.ip.find('/')));
    if (!macs.insert(h.mac.ToU64()).second || !ips.insert(h.ip).second) {
      return Status::Error(topo.path + ": host " + t.name + ": its MAC " + FormatMac(h.mac) +
                           " or address " + FormatIpv4(h.ip) + " is another host's");
    }
    return Status::Ok();
  };
  SWEMU_RETURN_IF_ERROR(assign(net.ps));
  for (PcnHost& h : net.workers) SWEMU_RETURN_IF_ERROR(assign(h));
  for (PcnHost& h : net.background) SWEMU_RETURN_IF_ERROR(assign(h));
  return Status::Ok();
}

// The delay of the links from switch s to switch t along the routes.
TimeNs PathDelay(const PcnNetwork& net, uint32_t s, uint32_t t) {
  TimeNs delay = 0;
  for (uint32_t u = s; u != t; u = static_cast<uint32_t>(net.routes.NextSwitch(u, t))) {
    const std::string& name = net.routes.name(u);
    const auto port = static_cast<PortId>(net.routes.PortTowards(u, t));
    for (const LinkSpec& l : net.topo.links) {
      if ((l.a == name && l.a_port == port) || (l.b == name && l.b_port == port)) {
        delay += l.delay_ns;
        break;
      }
    }
  }
  return delay;
}

// Each worker and background host reaches the PS's switch; their round trips and arrivals.
Status PlaceHosts(PcnNetwork& net) {
  const TopologyHost& ps = net.host(net.ps);
  const TimeNs frame_ns = PcnFullFrameNs(net.nic_bps);
  for (std::vector<PcnHost>* hosts : {&net.workers, &net.background}) {
    for (PcnHost& h : *hosts) {
      const TopologyHost& t = net.host(h);
      const uint32_t sw = net.routes.SwitchIndex(t.sw);
      if (net.routes.Hops(sw, net.ps_switch) == TopologyRoutes::kNone) {
        return Status::Error(net.topo.path + ": " + t.role + " " + t.name + " on " + t.sw +
                             " cannot reach the PS's switch " + ps.sw +
                             " (no path of links between them)");
      }
      const TimeNs links = PathDelay(net, sw, net.ps_switch);
      h.rtt_ns = 2 * (t.delay_ns + links + ps.delay_ns);
      h.to_ps_switch = t.delay_ns + frame_ns + links;
      if (h.rtt_ns == 0 && t.role == "worker") {  // a worker waits two round trips for an ACK
        return Status::Error(net.topo.path + ": worker " + t.name + " is no time away from the " +
                             "PS: give its host, the PS's or the links between a delay=");
      }
    }
  }
  return Status::Ok();
}

// "root + 2 leaves, 3 background hosts per leaf" when every other switch hangs off the PS's
// by one link and carries as many background hosts as each other one, else the counts.
std::string Shape(const PcnNetwork& net) {
  const std::string& root = net.ps_switch_name();
  const std::size_t leaves = net.topo.switches.size() - 1;
  bool star = leaves > 0 && net.topo.links.size() == leaves;
  for (const LinkSpec& l : net.topo.links) star = star && (l.a == root) != (l.b == root);
  std::vector<uint32_t> per_switch(net.topo.switches.size(), 0);
  for (const PcnHost& h : net.background) ++per_switch[net.routes.SwitchIndex(net.host(h).sw)];
  const uint32_t on_leaf = leaves > 0 ? per_switch[net.ps_switch == 0 ? 1 : 0] : 0;
  for (uint32_t s = 0; s < per_switch.size(); ++s) {
    star = star && per_switch[s] == (s == net.ps_switch ? 0 : on_leaf);
  }
  if (star) {
    return root + " + " + std::to_string(leaves) + " leaves, " + std::to_string(on_leaf) +
           " background hosts per leaf";
  }
  return std::to_string(net.topo.switches.size()) + " switches (the PS on " + root + "), " +
         std::to_string(net.background.size()) + " background hosts";
}

}  // namespace

TimeNs PcnFullFrameNs(uint64_t bps) {
  return static_cast<TimeNs>(uint64_t{kFullFrame + kEthernetWireOverheadBytes} * 8 *
                             1'000'000'000 / bps);
}

Result<PcnNetwork> PcnNetworkFromTopology(TopologyConfig topo) {
  PcnNetwork net;
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(topo);
  if (!routes.ok()) return routes.status();
  net.routes = std::move(*routes);
  SWEMU_RETURN_IF_ERROR(CheckPorts(topo, net.routes));
  SWEMU_RETURN_IF_ERROR(AssignRoles(topo, net));
  SWEMU_RETURN_IF_ERROR(AssignAddresses(topo, net));
  net.ps_switch = net.routes.SwitchIndex(topo.hosts[net.ps.index].sw);
  net.nic_bps = topo.links.empty() ? kDefaultPortRateBps : 0;
  for (const LinkSpec& l : topo.links) net.nic_bps = std::max(net.nic_bps, l.rate_bps);
  net.topo = std::move(topo);
  SWEMU_RETURN_IF_ERROR(PlaceHosts(net));
  net.shape = Shape(net);
  return net;
}

Result<PcnNetwork> DefaultPcnNetwork(const PcnExperimentOptions& o) {
  SWEMU_RETURN_IF_ERROR(o.Validate());
  const TimeNs one_way = o.rtt_ns / 2;
  const TimeNs link_delay = one_way / 5;
  const TimeNs host_delay = (one_way - link_delay) / 2;
  TopologyConfig topo;
  topo.path = "the default network";
  auto add_switch = [&](const std::string& name, uint32_t ports) -> SwitchConfig& {
    topo.switches.emplace_back();
    SwitchConfig& c = topo.switches.back().config;
    c.name = name;
    c.num_ports = static_cast<uint16_t>(ports);
    return c;
  };
  TmConfig& root_tm = add_switch("root", 3).tm;  // port 2, towards the PS, is the bottleneck
  root_tm.port_rates.push_back({2, o.bottleneck_bps});
  root_tm.port_queues[2].depth_pkts = o.queue_pkts;
  auto host = [&](const std::string& sw, uint32_t port, const std::string& name, uint64_t mac,
                  Ipv4Addr ip, const char* role) {
    topo.hosts.push_back({sw, static_cast<PortId>(port), host_delay, 0, name,
                          FormatIpv4(ip) + "/8", FormatMac(MacAddr::FromU64(mac)), "", "", role});
  };
  host("root", 2, "ps", 0x0200000000FEull, (10u << 24) | 254, "ps");
  for (uint32_t leaf = 1; leaf <= 2; ++leaf) {
    const std::string name = "leaf" + std::to_string(leaf);
    const uint32_t workers = (o.workers + 2 - leaf) / 2;  // worker w on leaf 1 + w % 2
    add_switch(name, 1 + o.background_per_leaf + workers);
    topo.links.push_back({"root", static_cast<PortId>(leaf - 1), name, 0, o.edge_bps, link_delay, 0});
    // Host h of leaf L: MAC 02:00:00:00:LL:HH, address 10.0.L.H; workers are hosts 100...
    auto add = [&](uint32_t port, uint32_t h, const std::string& host_name, const char* role) {
      host(name, port, host_name, 0x020000000000ull | (uint64_t{leaf} << 8) | h,
           (10u << 24) | (leaf << 8) | h, role);
    };
    for (uint32_t h = 1; h <= o.background_per_leaf; ++h) {
      add(h, h, name + "-bg" + std::to_string(h), "background");
    }
    for (uint32_t i = 0; i < workers; ++i) {
      const uint32_t w = leaf - 1 + 2 * i;
      add(1 + o.background_per_leaf + i, 100 + w, "w" + std::to_string(w), "worker");
    }
  }
  return PcnNetworkFromTopology(std::move(topo));
}

}  // namespace swemu
