#pragma once
// An emulated datacenter in the virtual-time engine for PLink: a tree of l2l3 switches (a core,
// then `fanout` children per level, racks at the bottom) with `per_rack` hosts under each rack,
// every tier's links with their own delay, and a PlinkProber on every host. ProbeDistances runs
// ProbeEmbed's rounds of disjoint pairs over it and returns the measured distance matrix.
#include <cstdint>
#include <memory>
#include <vector>

#include "hostlib/plink/locality.h"
#include "hostlib/plink/prober.h"

namespace swemu {

class Engine;
class EngineTransport;

struct DatacenterSpec {
  std::vector<uint32_t> fanout = {2, 2};  // children per level below the core (last: racks)
  uint32_t per_rack = 4;
  // One-way delay of each tier's links, from the core down; the last is the host links.
  std::vector<TimeNs> tier_delay_ns = {20'000, 5'000, 1'000};
  uint64_t link_rate_bps = 10'000'000'000ull;
  // Per host: a constant answer delay drawn from [0, host_delay_max_ns] and exponential jitter.
  TimeNs host_delay_max_ns = 8'000;
  double jitter_mean_ns = 30'000;
  ProberOptions prober;
  uint64_t seed = 1;
};

class EmulatedDatacenter {
 public:
  static Result<std::unique_ptr<EmulatedDatacenter>> Create(const DatacenterSpec& spec);
  ~EmulatedDatacenter();

  uint32_t hosts() const { return static_cast<uint32_t>(where_.size()); }
  const std::vector<NodeLocation>& locations() const { return where_; }
  Engine& engine() { return *engine_; }

  // Every pair probed once, in CircleRounds order. A pair with no reply gets the largest distance
  // measured (and is counted); a host no other host heard from is an error naming it.
  Result<DistanceMatrix> ProbeDistances(uint32_t* unanswered_pairs = nullptr);
  // The host leaves: it answers nothing from now on.
  void TakeDown(uint32_t host);

 private:
  EmulatedDatacenter() = default;
  std::unique_ptr<Engine> engine_;
  std::vector<NodeLocation> where_;
  std::vector<EngineTransport*> transports_;
  std::vector<std::unique_ptr<PlinkProber>> probers_;
  uint16_t round_ = 0;
};

}  // namespace swemu
