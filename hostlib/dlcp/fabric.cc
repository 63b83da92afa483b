#include "hostlib/dlcp/fabric.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "pipeline/wire/address.h"
#include "swemu/topology_routes.h"

namespace swemu {
namespace {

// The experiment's addresses (fabric.h): switch index k, port p, both from 0.
constexpr uint32_t kMaxHostSwitches = 255;  // k + 1 is one address byte
constexpr PortId kMaxHostPort = 253;        // p + 1 below 255
MacAddr HostMac(uint32_t k, PortId p) {
  return MacAddr::FromU64(0x020000000000ull | (uint64_t{k + 1} << 8) | (p + 1u));
}
Ipv4Addr HostIp(uint32_t k, PortId p) { return (10u << 24) | ((k + 1) << 8) | (p + 1u); }
MacAddr RouterMac(uint32_t k) { return MacAddr::FromU64(0x020000010000ull | (k + 1)); }
std::string SubnetOf(uint32_t k) { return "10.0." + std::to_string(k + 1) + ".0/24"; }

uint64_t HostPortRate(const TopologyConfig& topo, const TopologyRoutes& routes, uint32_t h) {
  return topo.switches[routes.HostSwitch(h)].config.tm.PortRateBps(topo.hosts[h].port);
}

// One switch's entries: its router MAC, its own hosts (/32), and every other host switch's /24
// over the ports starting a shortest path (one port: a next hop; more: an ECMP group, one per
// distinct set of ports, so spraying's round robin runs per set as on a real switch).
Status AddRoutes(Switch& sw, uint32_t s, const TopologyConfig& topo, const TopologyRoutes& routes,
                 const std::vector<DlcpHostAddress>& hosts, bool spray) {
  const std::string self = FormatMac(RouterMac(s));
  SWEMU_RETURN_IF_ERROR(sw.Command("table_add router_mac route " + self + " =>"));
  // Next hop port + 1 leaves on `port`, to a host or to the neighbouring switch's router.
  auto nexthop = [&](PortId port, const MacAddr& to) {
    return sw.Command("table_add nexthop rewrite " + std::to_string(port + 1) + " => " +
                      FormatMac(to) + " " + self + " " + std::to_string(port));
  };
  std::vector<bool> host_switch(routes.num_switches(), false);
  for (uint32_t h = 0; h < hosts.size(); ++h) {
    host_switch[routes.HostSwitch(h)] = true;
    if (routes.HostSwitch(h) != s) continue;
    const PortId port = topo.hosts[h].port;
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_nhop " + FormatIpv4(hosts[h].ip) +
                                     "/32 => " + std::to_string(port + 1)));
    SWEMU_RETURN_IF_ERROR(nexthop(port, hosts[h].mac));
  }
  std::map<PortId, bool> linked;  // ports whose next hop is installed
  std::map<std::vector<PortId>, uint32_t> groups;
  for (uint32_t t = 0; t < routes.num_switches(); ++t) {
    if (t == s || !host_switch[t]) continue;
    const std::vector<PortId> ports = routes.PortsTowards(s, t);
    for (PortId port : ports) {
      if (linked[port]) continue;
      linked[port] = true;
      SWEMU_RETURN_IF_ERROR(nexthop(port, RouterMac(routes.NeighbourAt(s, port))));
    }
    if (ports.size() == 1) {
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_nhop " + SubnetOf(t) + " => " +
                                       std::to_string(ports[0] + 1)));
      continue;
    }
    auto [group, added] = groups.emplace(ports, static_cast<uint32_t>(groups.size() + 1));
    const std::string id = std::to_string(group->second);
    if (added) {
      // Per-packet spraying (l2l3's ECMP mode 1: DLCP, pFabric), else per flow.
      SWEMU_RETURN_IF_ERROR(sw.Command("table_add ecmp_group ecmp_select " + id + " => " +
                                       std::to_string(ports.size()) + (spray ? " 1" : " 0")));
      for (std::size_t m = 0; m < ports.size(); ++m) {
        SWEMU_RETURN_IF_ERROR(sw.Command("table_add ecmp_member set_nhop " + id + " " +
                                         std::to_string(m) + " => " +
                                         std::to_string(ports[m] + 1)));
      }
    }
    SWEMU_RETURN_IF_ERROR(sw.Command("table_add ipv4_lpm set_ecmp " + SubnetOf(t) + " => " + id));
  }
  return Status::Ok();
}

}  // namespace

TopologyConfig DlcpLeafSpine(const DlcpLeafSpineShape& shape) {
  TopologyConfig topo;
  topo.seed = shape.seed;
  auto add_switch = [&](const std::string& name, uint32_t ports) {
    LoadedSwitchConfig sw;
    sw.config.name = name;
    sw.config.num_ports = static_cast<uint16_t>(ports);
    sw.config.tm.port_rate_bps = shape.link_bps;
    topo.switches.push_back(sw);
  };
  for (uint32_t t = 0; t < shape.tors; ++t) {
    add_switch("tor" + std::to_string(t), shape.hosts_per_tor + shape.spines);
  }
  for (uint32_t s = 0; s < shape.spines; ++s) add_switch("spine" + std::to_string(s), shape.tors);
  for (uint32_t t = 0; t < shape.tors; ++t) {
    for (uint32_t s = 0; s < shape.spines; ++s) {
      topo.links.push_back({"tor" + std::to_string(t), static_cast<PortId>(shape.hosts_per_tor + s),
                            "spine" + std::to_string(s), static_cast<PortId>(t), shape.link_bps,
                            shape.link_delay_ns, 0});
    }
  }
  for (uint32_t t = 0; t < shape.tors; ++t) {
    for (uint32_t i = 0; i < shape.hosts_per_tor; ++i) {
      TopologyHost host;
      host.sw = "tor" + std::to_string(t);
      host.port = static_cast<PortId>(i);
      host.delay_ns = shape.link_delay_ns;
      host.name = host.sw + "-p" + std::to_string(i);
      topo.hosts.push_back(host);
    }
  }
  return topo;
}

Status CheckDlcpTopology(const TopologyConfig& topo) {
  if (topo.hosts.size() < kDlcpWorkersPerPs) {
    return Status::Error(std::to_string(topo.hosts.size()) +
                         " hosts; DLCP's experiment needs at least " +
                         std::to_string(kDlcpWorkersPerPs) + " (a PS and its workers)");
  }
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(topo);
  if (!routes.ok()) return routes.status();
  std::set<std::pair<std::string, PortId>> taken;  // ports a link or a host holds
  for (const LinkSpec& l : topo.links) {
    taken.insert({l.a, l.a_port});
    taken.insert({l.b, l.b_port});
  }
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {
    const TopologyHost& host = topo.hosts[h];
    const uint32_t k = routes->HostSwitch(h);
    if (host.port >= topo.switches[k].config.num_ports ||
        !taken.insert({host.sw, host.port}).second) {
      return Status::Error("host " + host.name + ": port " + std::to_string(host.port) + " of " +
                           host.sw + " is out of range or already a link's or a host's");
    }
    if (k >= kMaxHostSwitches || host.port > kMaxHostPort) {
      return Status::Error("host " + host.name + ": the experiment addresses hosts on the first " +
                           std::to_string(kMaxHostSwitches) + " switches, ports 0.." +
                           std::to_string(kMaxHostPort));
    }
    if (HostPortRate(topo, *routes, h) == 0) {
      return Status::Error("host " + host.name + ": its port on " + host.sw +
                           " has no rate (the switch file's [tm] port_rate or [port.N] rate)");
    }
    const uint32_t first = routes->HostSwitch(0);
    if (routes->Hops(first, k) == TopologyRoutes::kNone) {
      return Status::Error("hosts " + topo.hosts[0].name + " and " + host.name +
                           " cannot reach each other (no links from " + topo.hosts[0].sw + " to " +
                           host.sw + ")");
    }
  }
  return Status::Ok();
}

std::string DescribeDlcpTopology(const TopologyConfig& topo) {
  const std::size_t n = topo.switches.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < n; ++k) index[topo.switches[k].config.name] = k;
  std::vector<uint32_t> hosts_on(n, 0);
  for (const TopologyHost& h : topo.hosts) ++hosts_on[index[h.sw]];
  std::vector<std::size_t> leaves, cores;
  for (std::size_t k = 0; k < n; ++k) (hosts_on[k] ? leaves : cores).push_back(k);
  // A two-tier leaf-spine: every link joins a leaf and a core, each pair once, and every leaf
  // has as many hosts as the first.
  std::map<std::pair<std::size_t, std::size_t>, uint32_t> pairs;
  bool two_tier = !cores.empty();
  uint64_t low = UINT64_MAX, high = 0;
  for (const LinkSpec& l : topo.links) {
    const std::size_t a = index[l.a], b = index[l.b];
    two_tier = two_tier && (hosts_on[a] == 0) != (hosts_on[b] == 0);
    two_tier = two_tier && ++pairs[{std::min(a, b), std::max(a, b)}] == 1;
    low = std::min(low, l.rate_bps);
    high = std::max(high, l.rate_bps);
  }
  two_tier = two_tier && pairs.size() == leaves.size() * cores.size();
  for (std::size_t k : leaves) two_tier = two_tier && hosts_on[k] == hosts_on[leaves[0]];
  for (const TopologyHost& h : topo.hosts) {
    const uint64_t rate = topo.switches[index[h.sw]].config.tm.PortRateBps(h.port);
    low = std::min(low, rate);
    high = std::max(high, rate);
  }
  char text[160];
  if (two_tier) {
    std::snprintf(text, sizeof(text), "%zu ToRs x %u hosts, %zu spines", leaves.size(),
                  hosts_on[leaves[0]], cores.size());
  } else {
    std::snprintf(text, sizeof(text), "%zu switches, %zu hosts", n, topo.hosts.size());
  }
  std::string out = text;
  if (low == high) {
    std::snprintf(text, sizeof(text), ", %.0f Gbit/s links", low / 1e9);
  } else {
    std::snprintf(text, sizeof(text), ", links of %.0f to %.0f Gbit/s", low / 1e9, high / 1e9);
  }
  return out + text;
}

Result<std::vector<DlcpHostAddress>> AddDlcpFabric(Engine& engine, const TopologyConfig& topo,
                                                   bool dlcp, uint64_t seed,
                                                   const QueueConfig& queues) {
  DlcpFabricScheme scheme;
  scheme.program = dlcp ? "dlcp" : "l2l3";
  scheme.spray = dlcp;
  scheme.queues = queues;
  return AddDlcpFabric(engine, topo, scheme, seed);
}

Result<std::vector<DlcpHostAddress>> AddDlcpFabric(Engine& engine, const TopologyConfig& topo,
                                                   const DlcpFabricScheme& scheme, uint64_t seed) {
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(topo);
  if (!routes.ok()) return routes.status();
  std::vector<LoadedSwitchConfig> switches;
  for (const LoadedSwitchConfig& given : topo.switches) {
    LoadedSwitchConfig sw;
    sw.config.name = given.config.name;
    sw.config.num_ports = given.config.num_ports;
    sw.config.program = scheme.program;
    sw.config.seed = seed;
    sw.config.tm.queue = scheme.queues;
    sw.config.tm.port_buffer_bytes = scheme.port_buffer_bytes;
    sw.config.tm.pushout = scheme.pushout;
    switches.push_back(sw);
  }
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {  // a host's port keeps the file's rate
    switches[routes->HostSwitch(h)].config.tm.port_rates.push_back(
        {topo.hosts[h].port, HostPortRate(topo, *routes, h)});
  }
  SWEMU_RETURN_IF_ERROR(AddSwitchesAndLinks(engine, switches, topo.links));
  std::vector<DlcpHostAddress> hosts;
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {
    const uint32_t k = routes->HostSwitch(h);
    const PortId p = topo.hosts[h].port;
    hosts.push_back({HostMac(k, p), HostIp(k, p), RouterMac(k), HostPortRate(topo, *routes, h)});
  }
  for (uint32_t s = 0; s < routes->num_switches(); ++s) {
    SWEMU_RETURN_IF_ERROR(
        AddRoutes(*engine.FindSwitch(routes->name(s)), s, topo, *routes, hosts, scheme.spray));
  }
  return hosts;
}

DlcpBaseRtt DlcpLongestBaseRtt(const TopologyConfig& topo) {
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(topo);
  if (!routes.ok() || topo.hosts.empty()) return {};
  uint32_t hops = 0;  // inter-switch links on the longest shortest path between host switches
  TimeNs host_delay = 0, link_delay = 0;
  uint64_t slowest = UINT64_MAX;
  std::set<uint32_t> host_switches;
  for (uint32_t h = 0; h < topo.hosts.size(); ++h) {
    host_switches.insert(routes->HostSwitch(h));
    host_delay = std::max(host_delay, topo.hosts[h].delay_ns);
    slowest = std::min(slowest, HostPortRate(topo, *routes, h));
  }
  for (uint32_t a : host_switches) {
    for (uint32_t b : host_switches) hops = std::max(hops, routes->Hops(a, b));
  }
  for (const LinkSpec& l : topo.links) link_delay = std::max(link_delay, l.delay_ns);
  const TimeNs frame_ns = static_cast<TimeNs>((1514 + kEthernetWireOverheadBytes) * 8 * 1e9 /
                                              static_cast<double>(slowest));
  return {2 * (2 * host_delay + hops * link_delay + (hops + 2) * frame_ns), slowest};
}

}  // namespace swemu
