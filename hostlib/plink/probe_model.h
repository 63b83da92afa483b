#pragma once
// Latency probes of an emulated datacenter, as a model: what ProbeEmbed's echo probe would
// measure between hosts at known locations. Each level two hosts do not share adds its latency
// twice (up and down), plus positive queueing-like noise (exponential, as competing traffic
// magnifies small distances, section 4.1.2) and a per-host constant (each host's own stack: what
// Eq. (1)'s h_i models). The packet-level probes over the engine or DPDK measure the same thing on
// swemu's topologies; this model is for tests and for planning without traffic.
#include <cstdint>
#include <vector>

#include "hostlib/plink/locality.h"

namespace swemu {

struct ProbeNoise {
  // One-way latency of crossing each level, widest first (e.g. region, dc, cluster, row, rack);
  // a level past the end adds nothing. Microseconds, as every field here.
  std::vector<double> level_latency_us = {40, 20, 10, 5, 2};
  double queue_mean_us = 5;      // exponential queueing noise per probe
  double host_constant_us = 10;  // each host's constant drawn uniformly from [0, this]
  uint32_t samples = 1;          // probes per pair; the pair's distance is their minimum
  uint64_t seed = 1;
};

// Hosts of `racks` racks with `per_rack` hosts each, spread over a tree whose upper levels have
// `fanout` children each, widest first (e.g. {2, 2} for 2 rows of 2 racks): locations
// (upper levels..., rack, host). Racks fill the tree in order.
std::vector<NodeLocation> RackLocations(uint32_t racks, uint32_t per_rack,
                                        const std::vector<uint32_t>& fanout);

DistanceMatrix ModelLatencyProbes(const std::vector<NodeLocation>& where, const ProbeNoise& noise);

}  // namespace swemu
