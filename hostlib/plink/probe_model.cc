#include "hostlib/plink/probe_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipeline/engine/rng.h"

namespace swemu {

std::vector<NodeLocation> RackLocations(uint32_t racks, uint32_t per_rack,
                                        const std::vector<uint32_t>& fanout) {
  std::vector<NodeLocation> out;
  for (uint32_t r = 0; r < racks; ++r) {
    NodeLocation upper(fanout.size(), 0);
    uint32_t rest = r;
    // The rack's position in the tree: the last upper level varies fastest.
    for (std::size_t l = fanout.size(); l-- > 0;) {
      const uint32_t f = std::max<uint32_t>(fanout[l], 1);
      upper[l] = rest % f;
      rest /= f;
    }
    // Levels above the first are ancestors; make each path unique by carrying the prefix.
    NodeLocation loc;
    uint32_t id = 0;
    for (std::size_t l = 0; l < upper.size(); ++l) {
      id = id * std::max<uint32_t>(fanout[l], 1) + upper[l];
      loc.push_back(id);
    }
    loc.push_back(r);
    for (uint32_t h = 0; h < per_rack; ++h) {
      NodeLocation host = loc;
      host.push_back(r * per_rack + h);
      out.push_back(host);
    }
  }
  return out;
}

DistanceMatrix ModelLatencyProbes(const std::vector<NodeLocation>& where, const ProbeNoise& noise) {
  const auto n = static_cast<uint32_t>(where.size());
  SplitMix64 rng(noise.seed);
  std::vector<double> host(n);
  for (double& c : host) c = rng.NextUnit() * noise.host_constant_us;
  DistanceMatrix m(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < i; ++j) {
      const uint32_t depth = static_cast<uint32_t>(std::max(where[i].size(), where[j].size()));
      double base = 0;
      for (uint32_t l = CommonPrefix(where[i], where[j]); l + 1 < depth; ++l) {
        if (l < noise.level_latency_us.size()) base += 2 * noise.level_latency_us[l];
      }
      double best = std::numeric_limits<double>::infinity();
      for (uint32_t s = 0; s < std::max<uint32_t>(noise.samples, 1); ++s) {
        const double queue = -noise.queue_mean_us * std::log(std::max(rng.NextUnit(), 1e-300));
        best = std::min(best, base + queue + host[i] + host[j]);
      }
      m.at(i, j) = m.at(j, i) = best;
    }
  }
  return m;
}

}  // namespace swemu
