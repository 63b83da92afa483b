#pragma once
// ProbeEmbed's probing rounds over any driver (the virtual-time engine, a DPDK host runner, a
// kernel-socket event loop): every pair of nodes probed once, in CircleRounds order (in each
// round the smaller node of a pair probes the larger), then the measured distance matrix. A pair
// with no reply either way gets the largest distance measured (and is counted); a node no other
// node heard from is an error naming it.
#include <cstdint>
#include <functional>
#include <vector>

#include "hostlib/plink/locality.h"
#include "hostlib/plink/prober.h"
#include "pipeline/core/status.h"

namespace swemu {

struct ProbeRoundsDriver {
  // The endpoints' clock.
  std::function<TimeNs()> now;
  // Optional: node `node` was just given a probe (a virtual-time transport wakes it up).
  std::function<void(uint32_t node)> started;
  // Runs the endpoints until all_idle() holds or the driver's own limit passes; an error (a real-
  // time run that timed out, say) ends the probing with that error. `round` is the round's index
  // in CircleRounds, for messages.
  std::function<Status(uint32_t round, const std::function<bool()>& all_idle)> run;
};

// probers[i] is node i's. `round` is the first probe round's id (the epoch the probes carry); it
// is advanced past the rounds used, so that a later call's replies are not taken for this one's.
Result<DistanceMatrix> RunProbeRounds(const std::vector<PlinkProber*>& probers,
                                      const ProbeRoundsDriver& driver, uint16_t* round,
                                      uint32_t* unanswered_pairs = nullptr);

// The distance matrix from what the probers measured so far (microseconds, the least RTT of
// either direction), with the fallbacks above.
Result<DistanceMatrix> MeasuredDistances(const std::vector<PlinkProber*>& probers,
                                         uint32_t* unanswered_pairs = nullptr);

}  // namespace swemu
