#pragma once
// Shortest paths over a network's switch-to-switch links, computed once, for every system that
// installs forwarding entries on a topology it did not hard-wire: breadth-first from every
// switch, neighbours in the order the links are listed, so ties go to the first link listed.
//   auto routes = TopologyRoutes::Compute(topo);          // a loaded .topo
//   int32_t port = routes->PortToHost(s, h);              // s's port towards topo.hosts[h]
//   std::vector<PortId> ecmp = routes->PortsTowards(s, t);  // every first hop of a shortest path
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "swemu/topology_config.h"

namespace swemu {

class TopologyRoutes {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // switches: names in index order; links: between those names (a link naming another switch
  // is refused). hosts: each host's switch and port, in host order.
  static Result<TopologyRoutes> Compute(std::vector<std::string> switches,
                                        const std::vector<LinkSpec>& links,
                                        std::vector<std::pair<std::string, PortId>> hosts = {});
  // A loaded topology: its switches, links and hosts, in file order.
  static Result<TopologyRoutes> Compute(const TopologyConfig& topo);

  uint32_t num_switches() const { return static_cast<uint32_t>(names_.size()); }
  const std::string& name(uint32_t s) const { return names_[s]; }
  uint32_t SwitchIndex(const std::string& name) const;  // kNone when absent
  // Hops (links) from switch s to switch t; kNone when t cannot be reached.
  uint32_t Hops(uint32_t s, uint32_t t) const { return dist_[s][t]; }
  // s's port on the first shortest path found towards t (s != t); -1 when unreachable.
  int32_t PortTowards(uint32_t s, uint32_t t) const { return next_port_[s][t]; }
  // The neighbour that port leads to; -1 when unreachable or s == t.
  int32_t NextSwitch(uint32_t s, uint32_t t) const { return next_switch_[s][t]; }
  // Every port of s that starts a shortest path towards t (equal-cost multipath), in link order.
  std::vector<PortId> PortsTowards(uint32_t s, uint32_t t) const;
  // The switch at the other end of s's link on `port`; -1 when no link leaves s on it.
  int32_t NeighbourAt(uint32_t s, PortId port) const;
  // s's port towards host h: the host's own port on its switch, else towards its switch.
  int32_t PortToHost(uint32_t s, uint32_t host) const;
  uint32_t HostSwitch(uint32_t host) const { return host_switch_[host]; }
  // The switches from s to t inclusive along PortTowards; empty when unreachable.
  std::vector<uint32_t> SwitchPath(uint32_t s, uint32_t t) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<std::pair<uint32_t, PortId>>> adjacent_;  // (neighbour, my port)
  std::vector<std::vector<uint32_t>> dist_;
  std::vector<std::vector<int32_t>> next_port_;
  std::vector<std::vector<int32_t>> next_switch_;
  std::vector<uint32_t> host_switch_;
  std::vector<PortId> host_port_;
};

}  // namespace swemu
