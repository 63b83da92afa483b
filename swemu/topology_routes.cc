#include "swemu/topology_routes.h"

#include <deque>

namespace swemu {

uint32_t TopologyRoutes::SwitchIndex(const std::string& name) const {
  for (uint32_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  return kNone;
}

Result<TopologyRoutes> TopologyRoutes::Compute(
    std::vector<std::string> switches, const std::vector<LinkSpec>& links,
    std::vector<std::pair<std::string, PortId>> hosts) {
  TopologyRoutes r;
  r.names_ = std::move(switches);
  const uint32_t n = r.num_switches();
  r.adjacent_.assign(n, {});
  for (const LinkSpec& l : links) {
    const uint32_t a = r.SwitchIndex(l.a);
    const uint32_t b = r.SwitchIndex(l.b);
    if (a == kNone || b == kNone) {
      return Status::Error("link " + l.a + ":" + std::to_string(l.a_port) + " " + l.b + ":" +
                           std::to_string(l.b_port) + ": no switch named " +
                           (a == kNone ? l.a : l.b));
    }
    r.adjacent_[a].push_back({b, l.a_port});
    r.adjacent_[b].push_back({a, l.b_port});
  }
  r.dist_.assign(n, std::vector<uint32_t>(n, kNone));
  r.next_port_.assign(n, std::vector<int32_t>(n, -1));
  r.next_switch_.assign(n, std::vector<int32_t>(n, -1));
  for (uint32_t src = 0; src < n; ++src) {
    std::deque<uint32_t> queue{src};
    r.dist_[src][src] = 0;
    while (!queue.empty()) {
      const uint32_t u = queue.front();
      queue.pop_front();
      for (const auto& hop : r.adjacent_[u]) {
        const uint32_t v = hop.first;
        if (r.dist_[src][v] != kNone) continue;
        r.dist_[src][v] = r.dist_[src][u] + 1;
        r.next_port_[src][v] = u == src ? hop.second : r.next_port_[src][u];
        r.next_switch_[src][v] = u == src ? static_cast<int32_t>(v) : r.next_switch_[src][u];
        queue.push_back(v);
      }
    }
  }
  for (const auto& [sw, port] : hosts) {
    const uint32_t s = r.SwitchIndex(sw);
    if (s == kNone) return Status::Error("host " + sw + ":" + std::to_string(port) +
                                         ": no switch named " + sw);
    r.host_switch_.push_back(s);
    r.host_port_.push_back(port);
  }
  return r;
}

Result<TopologyRoutes> TopologyRoutes::Compute(const TopologyConfig& topo) {
  std::vector<std::string> names;
  for (const LoadedSwitchConfig& sw : topo.switches) names.push_back(sw.config.name);
  std::vector<std::pair<std::string, PortId>> hosts;
  for (const TopologyHost& h : topo.hosts) hosts.emplace_back(h.sw, h.port);
  auto routes = Compute(std::move(names), topo.links, std::move(hosts));
  if (!routes.ok()) return Status::Error(topo.path + ": " + routes.message());
  return routes;
}

std::vector<PortId> TopologyRoutes::PortsTowards(uint32_t s, uint32_t t) const {
  std::vector<PortId> ports;
  if (s == t || dist_[s][t] == kNone) return ports;
  for (const auto& [v, port] : adjacent_[s]) {
    if (dist_[v][t] + 1 == dist_[s][t]) ports.push_back(port);
  }
  return ports;
}

int32_t TopologyRoutes::NeighbourAt(uint32_t s, PortId port) const {
  for (const auto& [v, my_port] : adjacent_[s]) {
    if (my_port == port) return static_cast<int32_t>(v);
  }
  return -1;
}

int32_t TopologyRoutes::PortToHost(uint32_t s, uint32_t host) const {
  if (host_switch_[host] == s) return host_port_[host];
  return next_port_[s][host_switch_[host]];
}

std::vector<uint32_t> TopologyRoutes::SwitchPath(uint32_t s, uint32_t t) const {
  if (dist_[s][t] == kNone) return {};
  std::vector<uint32_t> path{s};
  while (path.back() != t) path.push_back(static_cast<uint32_t>(next_switch_[path.back()][t]));
  return path;
}

}  // namespace swemu
