#pragma once
// The network PCN's experiment runs on, described once: a topology (swemu/topology_config.h)
// whose hosts say what they are to PCN with role=:
//   ps          exactly one: the PS, which the bursts and the background flows go to;
//   worker      the DDL workers, numbered in file order (at least one);
//   background  long-lived TCP flows to the PS, in file order (iperf3 clients);
// any other host is left unattached (its port idle). Every switch runs `pcn`. Forwarding is
// derived once from the shortest paths (swemu/topology_routes.h). The bottleneck is the port
// towards the PS on the PS's switch; its rate and queue depth are that switch's traffic-manager
// settings ([port.N] rate and queue_depth in its .ini), read back once it is built.
// Every host's NIC runs at the topology's fastest link rate.
//   Result<TopologyConfig> topo = LoadTopology("configs/pcn_experiment.topo");
//   Result<PcnNetwork> net = PcnNetworkFromTopology(std::move(*topo));
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"
#include "swemu/topology_config.h"
#include "swemu/topology_routes.h"

namespace swemu {

struct PcnExperimentOptions;

// One attached host: its place in topo.hosts and its addresses (the file's mac= and ip=, else
// 02:00:00:01:HH:LL and 10.1.HH.LL from its place).
struct PcnHost {
  uint32_t index = 0;
  MacAddr mac;
  Ipv4Addr ip = 0;
  TimeNs rtt_ns = 0;       // propagation round trip to the PS and back (host and link delays)
  TimeNs to_ps_switch = 0;  // host delay + one frame at the NIC + link delays to the PS's switch
};

struct PcnNetwork {
  TopologyConfig topo;
  TopologyRoutes routes;
  PcnHost ps;
  std::vector<PcnHost> workers;
  std::vector<PcnHost> background;
  uint32_t ps_switch = 0;  // index in topo.switches
  uint64_t nic_bps = 0;    // every host's NIC: the fastest link (the default port rate without)
  std::string shape;       // "root + 2 leaves, 3 background hosts per leaf" (the report)

  const TopologyHost& host(const PcnHost& h) const { return topo.hosts[h.index]; }
  const std::string& ps_switch_name() const { return topo.switches[ps_switch].config.name; }
};

// A full frame's (1514 bytes and the wire's overhead) time at bps.
TimeNs PcnFullFrameNs(uint64_t bps);

// Checks the roles (one ps, a worker, every worker and background host able to reach the PS's
// switch, ports on their switch and free, addresses unique) and derives the rest. One-line
// errors naming the file and what it should say.
Result<PcnNetwork> PcnNetworkFromTopology(TopologyConfig topo);

// Today's shape from the options: a root with the PS on port 2 (the bottleneck: --rate,
// --queue) and two leaves on ports 0 and 1 (--edge-rate); on each leaf the background hosts on
// ports 1..B, then the workers (worker w on leaf 1 + w % 2); --rtt split as 40% of each one-way
// trip on each host link and 20% on the leaf-root link. configs/pcn_experiment.topo is this
// network with the defaults.
Result<PcnNetwork> DefaultPcnNetwork(const PcnExperimentOptions& options);

}  // namespace swemu
