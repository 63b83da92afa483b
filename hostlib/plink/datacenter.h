#pragma once
// An emulated datacenter in the virtual-time engine for PLink: the switches, links and hosts of a
// topology (swemu/topology_config.h), every switch running l2l3 with a dmac entry per host along
// the shortest paths (swemu/topology_routes.h), and on every host PLink's endpoints: a
// PlinkProber and a PlinkAggNode, beside optional background traffic. A host's rack is the
// switch it is attached to. DatacenterTopology makes the default shape, a tree of l2l3 switches
// (a core, then `fanout` children per level, racks at the bottom) with hosts under each rack
// (`per_rack` each, or `rack_hosts` for unbalanced occupancy), every tier's links with their own
// delay and rate (an oversubscribed spine: uplinks slower than the hosts' links add up to).
// ProbeDistances runs ProbeEmbed's rounds of disjoint pairs and returns the measured distance
// matrix; AllReduce runs one reduction of AggEngine under a plan on every host at once.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hostlib/common/background_traffic.h"
#include "hostlib/common/endpoint_set.h"
#include "hostlib/plink/agg_engine.h"
#include "hostlib/plink/locality.h"
#include "hostlib/plink/prober.h"
#include "pipeline/tm/tm_config.h"
#include "swemu/topology_config.h"
#include "swemu/topology_routes.h"

namespace swemu {

class Engine;
class EngineTransport;

// The tree's shape (fanout .. host_link_loss), then what every host does (the rest).
struct DatacenterSpec {
  std::vector<uint32_t> fanout = {2, 2};  // children per level below the core (last: racks)
  uint32_t per_rack = 4;
  std::vector<uint32_t> rack_hosts;  // hosts per rack (one per rack, 1..64); empty: per_rack
  // One-way delay of each tier's links, from the core down; the last is the host links.
  std::vector<TimeNs> tier_delay_ns = {20'000, 5'000, 1'000};
  uint64_t link_rate_bps = kDefaultPortRateBps;
  std::vector<uint64_t> tier_rate_bps;  // per tier like tier_delay_ns; empty: link_rate_bps
  double host_link_loss = 0;            // each frame on a host link lost with this probability
  // Per host: a constant answer delay drawn from [0, host_delay_max_ns] and exponential jitter.
  TimeNs host_delay_max_ns = 8'000;
  double jitter_mean_ns = 30'000;
  ProberOptions prober;
  AggEngineOptions agg;  // nic_rate_bps 0: each host's link rate
  uint64_t seed = 1;  // the engine's, the hosts' answer delays and probes
};

// Where PLink's hosts are in a topology, for the engine's datacenter and the real-time demo:
// each host's rack (the switch it is on; racks numbered by their first host), the racks'
// switches, each host's location (the switches from the central one, the one whose farthest host
// switch is nearest, each as its index among the switches as far from it, then the host: in a
// tree, its ancestors below the core) and the tiers (the longest location).
struct PlinkPlacement {
  std::vector<uint32_t> rack_of;
  std::vector<std::string> rack_names;
  std::vector<NodeLocation> where;
  uint32_t tiers = 0;
};
// An error naming the problem for fewer than two hosts, more than max_hosts, or two hosts that
// cannot reach each other.
Result<PlinkPlacement> PlacePlinkHosts(const TopologyConfig& topo, const TopologyRoutes& routes,
                                       uint32_t max_hosts = 4096);

// The spec's tree as a topology: switches core, l1s0.., l2s0.. level by level (l2l3, each
// level's port_rate its down links' rate), then the links from each level up to the one above,
// then the hosts rack by rack (h0.., the rack's ports from 0, the host tier's delay and loss).
Result<TopologyConfig> DatacenterTopology(const DatacenterSpec& spec);

// One reduction on every host: its latency (start to the last host's finish) and what each host
// moved; payload bytes are first copies (no headers, acks or retransmissions).
struct ReductionRun {
  TimeNs latency_ns = 0;
  std::vector<AggNodeReport> reports;
  uint64_t total_bytes = 0;
  uint64_t cross_rack_bytes = 0;  // between hosts of different racks
  uint64_t packets = 0, retransmissions = 0, timeouts = 0;
};

class EmulatedDatacenter {
 public:
  // The spec's tree (DatacenterTopology).
  static Result<std::unique_ptr<EmulatedDatacenter>> Create(const DatacenterSpec& spec);
  // The topology's switches (each running l2l3, whatever its file's program and cli say), links
  // and hosts (each host's delay and loss from its line, its link rate its switch port's rate;
  // PLink's addresses 02:00:00:00:02:xx and 10.2.x.y by host order); from `spec` only what the
  // hosts do (host_delay_max_ns, jitter_mean_ns, prober, agg, seed). An error naming the problem
  // for fewer than two hosts (or over 4096) and for hosts that cannot reach each other.
  static Result<std::unique_ptr<EmulatedDatacenter>> Create(const TopologyConfig& topo,
                                                            const DatacenterSpec& spec);
  ~EmulatedDatacenter();

  uint32_t hosts() const { return static_cast<uint32_t>(where_.size()); }
  const std::vector<NodeLocation>& locations() const { return where_; }
  // Each host's rack: racks numbered by their switch's first host, in host order.
  const std::vector<uint32_t>& rack_of() const { return rack_of_; }
  uint32_t racks() const { return static_cast<uint32_t>(rack_names_.size()); }
  const std::vector<std::string>& rack_names() const { return rack_names_; }
  // Tiers of links from the central switch (PlinkPlacement) to a host: the tree's levels and
  // the hosts' links.
  uint32_t tiers() const { return tiers_; }
  const std::vector<PlinkNodeAddr>& addresses() const { return addrs_; }
  Engine& engine() { return *engine_; }

  // Every host sums its in[h] into out[h] under `plan` (the plan's epoch is the next one); ends
  // when every host is done, or with one line after `limit_ns` of virtual time.
  Result<ReductionRun> AllReduce(const AggPlan& plan, const std::vector<std::vector<float>>& in,
                                 std::vector<std::vector<float>>* out,
                                 TimeNs limit_ns = 60'000'000'000);
  // Shapes a host's link, both ways (its rack port and its NIC's pacing); 0 restores its switch port's.
  Status SetHostRate(uint32_t host, uint64_t bps);
  // Background traffic from host `from` to host `to` (frames of frame_len bytes, phases of rate
  // starting at the engine's current time plus their start).
  Status AddBackground(uint32_t from, uint32_t to, std::size_t frame_len,
                       std::vector<BackgroundPhase> phases);

  // Every pair probed once, in CircleRounds order (RunProbeRounds, hostlib/plink/probe_rounds.h,
  // on the engine; a second of virtual time per round). A pair with no reply gets the largest
  // distance measured (and is counted); a host no other host heard from is an error naming it.
  Result<DistanceMatrix> ProbeDistances(uint32_t* unanswered_pairs = nullptr);
  // The host leaves: it answers nothing and sends nothing from now on.
  void TakeDown(uint32_t host);

 private:
  EmulatedDatacenter() = default;
  std::unique_ptr<Engine> engine_;
  std::vector<NodeLocation> where_;
  std::vector<uint32_t> rack_of_;
  std::vector<PortId> port_of_;
  std::vector<std::string> rack_switch_, rack_names_;
  std::vector<uint64_t> host_rate_bps_;
  uint32_t tiers_ = 0;
  std::vector<PlinkNodeAddr> addrs_;
  std::vector<EngineTransport*> transports_;
  std::vector<std::unique_ptr<PlinkProber>> probers_;
  std::vector<std::unique_ptr<PlinkAggNode>> aggs_;
  std::vector<std::unique_ptr<BackgroundSource>> background_;
  std::vector<std::unique_ptr<EndpointSet>> endpoints_;
  uint16_t round_ = 0;
  uint16_t epoch_ = 0;
  EndpointSet silent_;  // no endpoints: a host that left
};

}  // namespace swemu
