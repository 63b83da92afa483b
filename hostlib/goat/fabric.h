#pragma once
// A GOAT network: switches (each a GOAT node id and aggregator slots), hosts (workers and one
// PS) on switch ports, and switch-to-switch links. From it come
//   - the shortest paths (swemu/topology_routes.h: breadth-first, ties to the first link
//     listed): each switch's port towards every host and every other switch;
//   - each switch's static startup script: dmac entries for every host's MAC, goat_route
//     entries for every other switch's node id (forwarding by aggregation node, Figure 2(c));
//   - the GINA problem (hop distances) the planner solves;
//   - the plan published as table entries (goat_node) and the job's node per worker and
//     sub-model: GOAT's (from KRGS), ATP-style sharing, or everything at the PS;
//   - the network inside the virtual-time engine, hosts attached through EngineTransport.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hostlib/goat/gina.h"
#include "hostlib/goat/goat_job.h"
#include "hostlib/goat/krgs.h"
#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"
#include "pipeline/tm/tm_config.h"
#include "swemu/topology_routes.h"

namespace swemu {

class Engine;
class EngineTransport;

struct GoatFabricSpec {
  struct Switch {
    std::string name;
    uint16_t node_id = 0;  // 1 .. 65534
    uint16_t ports = 0;
    uint32_t slots = 0;  // aggregator slots (256 B each at 64 elements); 0: not programmable
    uint64_t port_rate_bps = 0;  // every port's shaping; 0: GoatNetOptions::link_rate_bps
  };
  struct Host {
    std::string name;
    std::string sw;
    uint16_t port = 0;
    bool ps = false;
    int64_t delay_ns = -1;  // the host link's delay; < 0: Build's host_delay_ns
    double loss = -1;       // the host link's loss; < 0: GoatNetOptions::loss
  };
  struct Link {
    std::string a;
    uint16_t a_port = 0;
    std::string b;
    uint16_t b_port = 0;
    // This link's own values (a topology file's); 0 / < 0: GoatNetOptions' for every link.
    uint64_t rate_bps = 0;
    int64_t delay_ns = -1;
    double loss = -1;
  };
  std::vector<Switch> switches;
  std::vector<Host> hosts;  // workers in worker-id order; exactly one PS
  std::vector<Link> links;

  // Figure 2(a) / the paper's testbed (Fig. 4): s1 and s2 with `per_switch` workers each, the
  // PS on s3, links s1-s3, s2-s3 and (Figure 2's) s1-s2. Nodes 1, 2, 3.
  static GoatFabricSpec ThreeSwitch(uint32_t per_switch, uint32_t slots);
  // A leaf-spine: every spine linked to every leaf, servers spread evenly over the leaves, the
  // PS the first server of the last leaf (as LeafSpineGraph); `programmable` switches get
  // `slots`, the others none.
  static GoatFabricSpec LeafSpine(uint32_t spines, uint32_t leaves, uint32_t servers,
                                  const std::vector<std::string>& programmable, uint32_t slots);
  // A k-ary fat-tree (k even): (k/2)^2 cores, k pods of k/2 aggregation and k/2 edge switches
  // (named core0.., agg0.., edge0.., node ids in that order from 1), every edge linked to every
  // aggregation switch of its pod, aggregation switch j of a pod to cores j*k/2 .. j*k/2+k/2-1;
  // servers spread evenly over the edges, the PS the first server of the last edge (as
  // LeafSpine). The paper's (VII-D): k = 8 (16 + 32 + 32 = 80 switches), 192 servers.
  static GoatFabricSpec FatTree(uint32_t k, uint32_t servers,
                                const std::vector<std::string>& programmable, uint32_t slots);
  // A topology file's network (fabric_topology.cc): its switches in file order, node ids 1, 2,
  // ... in that order, each with its ports and its port shaping rate ([tm] port_rate), and
  // `slots` from its config's [program] when the program is goat (else, or without slots, not
  // programmable); its links with their rate, delay and loss; the hosts that say role=worker
  // (worker ids in file order) and the one that says role=ps, with their delay and loss (hosts
  // with another role, or none, are left out). Errors are one line naming the file.
  static Result<GoatFabricSpec> FromTopology(const TopologyConfig& topo);
};

// The engine network's links and queues.
struct GoatNetOptions {
  uint64_t link_rate_bps = kDefaultPortRateBps;  // every link, and every switch port's shaping
  TimeNs link_delay_ns = 1000;
  TimeNs host_delay_ns = 1000;    // a host's own delay_ns replaces it
  double loss = 0;                // every link and host link, each direction
  uint32_t queue_depth_pkts = 0;  // every switch queue; 0: the TM's default
  uint64_t buffer_bytes = 0;      // each switch's shared buffer; 0: the TM's default
  // Each switch's SRAM per MAU stage; 0: the emulated ASIC's (Tofino-1's 80 x 128 Kb), whose
  // 16 value stages hold 81,920 slots of 64 elements, 20 MB: the paper's 64 MB needs 4 MiB.
  uint64_t stage_sram_bytes = 0;
};

// One goat_node entry of a switch.
struct GoatNodeEntry {
  uint16_t submodel = 0;
  bool share = false;  // ATP-style (node id "any"), else GOAT's own slots
  uint64_t base = 0;
  uint64_t size = 0;  // GOAT: the sub-model's fragments; share: the slots hashed over
  uint32_t fan_in = 0;
};

// What a plan publishes: entries per switch (by name) and the job's node per worker.
struct GoatPublished {
  std::map<std::string, std::vector<GoatNodeEntry>> entries;
  std::vector<std::vector<uint16_t>> node;  // [w][g]
};

class GoatFabric {
 public:
  // Checks names, ports, node ids and the single PS; computes the routes.
  static Result<GoatFabric> Create(GoatFabricSpec spec);

  const GoatFabricSpec& spec() const { return spec_; }
  std::vector<uint32_t> worker_hosts() const;  // host indexes, worker-id order
  uint32_t ps_host() const { return ps_; }
  uint32_t num_workers() const { return static_cast<uint32_t>(worker_hosts().size()); }
  static MacAddr HostMac(uint32_t host);
  static Ipv4Addr HostIp(uint32_t host);
  // A host's address and MAC in the job and the dmac entries: HostIp/HostMac unless
  // SetHostAddress gave it its own (a real server's, `swemu-goat publish --hosts`).
  Ipv4Addr Ip(uint32_t host) const;
  MacAddr Mac(uint32_t host) const;
  void SetHostAddress(uint32_t host, Ipv4Addr ip, MacAddr mac) { addresses_[host] = {ip, mac}; }

  // The job's addresses (workers, PS) from the hosts; fragments and nodes are the caller's.
  GoatJob MakeJob(uint16_t job_id, uint16_t elements, std::vector<uint32_t> fragments) const;
  // dmac and goat_route entries of switch `s` (index into spec().switches).
  std::string StaticScript(uint32_t s) const;
  // goat_node entries of one switch as commands.
  static std::string NodeScript(uint16_t job_id, uint16_t node_id,
                                const std::vector<GoatNodeEntry>& entries);

  // The GINA problem of this network: programmable switches (slots > 0), distances in hops.
  Result<GinaProblem> Problem(const std::vector<uint64_t>& fragments) const;
  // A KRGS plan published: each switch's sub-models at the plan's bases and fan-ins.
  GoatPublished PublishPlan(const GinaProblem& problem, const GinaPlan& plan) const;
  // ATP-style sharing (the paper's ATP baseline): every programmable switch hashes every
  // sub-model's fragments over all its slots, first come first served; its fan-in for a
  // sub-model is the workers whose path to the PS crosses it.
  GoatPublished PublishSharing(const std::vector<uint32_t>& fragments) const;
  // Everything to the PS (PS-only, Geryon's baseline without switches).
  GoatPublished PublishPsOnly(uint32_t submodels) const;
  // Refuses, with one line naming the problem, a plan this network cannot run: entries for a
  // switch it does not have or one without aggregator memory, GOAT entries whose slots run past
  // the switch's memory or overlap, a fan-in of 0 or above 64, a sub-model or fragment count the
  // job does not have, a worker's node id that is no switch (0 = the PS and 0xFFFF = sharing
  // are fine). RunGoatJob and swemu-goat publish check every plan with it.
  Status CheckPublished(const GoatPublished& published,
                        const std::vector<uint32_t>& fragments) const;

  // Adds the switches (program goat, `elements` per fragment, the static scripts and the
  // published entries), links to the engine and attaches every host; returns the hosts'
  // transports in host order. node_handles, when given, gets each goat_node entry's handle, by
  // (switch name, sub-model), for table_modify.
  Result<std::vector<EngineTransport*>> Build(
      Engine& engine, const GoatPublished& published, uint16_t job_id, uint16_t elements,
      const GoatNetOptions& net,
      std::map<std::pair<std::string, uint16_t>, uint64_t>* node_handles = nullptr) const;
  // The switches a host's frames to the PS cross, in order.
  std::vector<uint32_t> PathToPs(uint32_t host) const;

 private:
  explicit GoatFabric(GoatFabricSpec spec) : spec_(std::move(spec)) {}
  uint32_t SwitchIndex(const std::string& name) const;
  Status ComputeRoutes();

  GoatFabricSpec spec_;
  uint32_t ps_ = 0;
  TopologyRoutes routes_;  // switch indexes as spec_.switches, hosts as spec_.hosts
  std::map<uint32_t, std::pair<Ipv4Addr, MacAddr>> addresses_;  // SetHostAddress's, by host
};

}  // namespace swemu
