#pragma once
// The network DLCP's experiment (hostlib/dlcp/experiment.h) runs on: a description
// (swemu/topology_config.h), generated from the leaf-spine shape options or loaded from a
// --topology file, and the one builder that adds it to an engine for one scheme.
//
// The builder takes from the description the switches' names and port counts, the links (rate,
// delay, loss), the hosts (switch, port, delay, loss; in the order listed) and each host port's
// rate (its switch file's [tm] port_rate or [port.N] rate). The rest is the experiment's: every
// switch runs `dlcp` (DLCP) or `l2l3` (the DCTCP baseline) with the experiment's settings, not
// the switch file's program, startup script or queues; forwarding comes from TopologyRoutes:
// each switch routes another host switch's /24 over every first hop of a shortest path, an ECMP
// group per distinct set of ports (per-packet spraying for DLCP, per-flow hashing for DCTCP).
// Addresses are the experiment's too (a file's ip=, mac= and role= are not used): the host on
// switch k's port p is 10.0.(k+1).(p+1) with MAC 02:00:00:00:(k+1):(p+1), and switch k's router
// MAC is 02:00:00:01:00:(k+1) (k, p counted from 0, in file order).
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "swemu/topology_config.h"

namespace swemu {

// The fewest hosts the experiment runs on: one PS and its workers (every host is a worker).
inline constexpr uint32_t kDlcpWorkersPerPs = 4;

struct DlcpLeafSpineShape {
  uint32_t tors = 3;
  uint32_t hosts_per_tor = 4;
  uint32_t spines = 2;
  uint64_t link_bps = 0;     // every link and host port
  TimeNs link_delay_ns = 0;  // per hop, host links too
  uint64_t seed = 1;
};

// ToRs tor0.. (hosts on ports 0..hosts_per_tor-1, spine s on port hosts_per_tor + s), then
// spines spine0.. (ToR t on port t); links ToR-major; hosts ToR-major.
TopologyConfig DlcpLeafSpine(const DlcpLeafSpineShape& shape);

// Whether the experiment runs on `topo`: enough hosts, every host reaching every other, host
// ports with a rate, addresses that fit the scheme above. One line naming the problem.
Status CheckDlcpTopology(const TopologyConfig& topo);

// For the report: "3 ToRs x 4 hosts, 2 spines, 10 Gbit/s links" for a two-tier leaf-spine,
// else "3 switches, 9 hosts, 10 Gbit/s links" (or "links of 10 to 40 Gbit/s").
std::string DescribeDlcpTopology(const TopologyConfig& topo);

// What a host needs to send: its addresses, its switch's router MAC and its link rate.
struct DlcpHostAddress {
  MacAddr mac;
  Ipv4Addr ip = 0;
  MacAddr gateway;
  uint64_t link_bps = 0;
};

// How a scheme's switches treat traffic: their program, ECMP per packet (spraying) or per flow,
// every queue's settings when created, each egress port's buffer (0: none beyond the queues')
// and whether a full port pushes out lower-priority packets (pFabric; TmConfig::pushout).
struct DlcpFabricScheme {
  std::string program = "l2l3";
  bool spray = false;
  QueueConfig queues;
  uint64_t port_buffer_bytes = 0;
  bool pushout = false;
};

// Adds topo's switches (the scheme's program and queues, seeded), links and forwarding entries
// to an empty engine, in the description's order; the hosts' ports are the caller's to attach.
// Returns every host's addresses, in host order. topo must have passed CheckDlcpTopology.
Result<std::vector<DlcpHostAddress>> AddDlcpFabric(Engine& engine, const TopologyConfig& topo,
                                                   const DlcpFabricScheme& scheme, uint64_t seed);
// The same for DLCP (`dlcp`, spraying) or the DCTCP baseline (`l2l3`, per flow).
Result<std::vector<DlcpHostAddress>> AddDlcpFabric(Engine& engine, const TopologyConfig& topo,
                                                   bool dlcp, uint64_t seed,
                                                   const QueueConfig& queues);

// The longest base round trip between two hosts of topo (topo passed CheckDlcpTopology): out
// and back over the most switch hops between host switches, each way both host links and that
// many of the slowest inter-switch links, plus one full frame's serialisation per link at the
// slowest host port, whose rate comes with it. pFabric sizes its window, buffer and RTO by it.
struct DlcpBaseRtt {
  TimeNs ns = 0;
  uint64_t host_bps = 0;  // the slowest host port's rate
};
DlcpBaseRtt DlcpLongestBaseRtt(const TopologyConfig& topo);

}  // namespace swemu
