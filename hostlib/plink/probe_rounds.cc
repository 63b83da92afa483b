#include "hostlib/plink/probe_rounds.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace swemu {

Result<DistanceMatrix> RunProbeRounds(const std::vector<PlinkProber*>& probers,
                                      const ProbeRoundsDriver& driver, uint16_t* round,
                                      uint32_t* unanswered_pairs) {
  const auto n = static_cast<uint32_t>(probers.size());
  const auto all_idle = [&] {
    return std::all_of(probers.begin(), probers.end(),
                       [](const PlinkProber* p) { return p->idle(); });
  };
  const auto rounds = CircleRounds(n);
  for (uint32_t r = 0; r < rounds.size(); ++r) {
    const TimeNs now = driver.now();
    for (const auto& [a, b] : rounds[r]) {
      probers[a]->Probe(static_cast<uint16_t>(b), *round, now);
      if (driver.started) driver.started(a);
    }
    ++*round;
    SWEMU_RETURN_IF_ERROR(driver.run(r, all_idle));
  }
  return MeasuredDistances(probers, unanswered_pairs);
}

Result<DistanceMatrix> MeasuredDistances(const std::vector<PlinkProber*>& probers,
                                         uint32_t* unanswered_pairs) {
  const auto n = static_cast<uint32_t>(probers.size());
  DistanceMatrix m(n);
  double largest = 0;
  std::vector<bool> heard(n, false);
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b) {
      const double d = std::min(probers[a]->min_rtt_ns()[b], probers[b]->min_rtt_ns()[a]);
      if (std::isfinite(d)) {
        m.at(a, b) = m.at(b, a) = d / 1000.0;  // microseconds
        largest = std::max(largest, d / 1000.0);
        heard[a] = heard[b] = true;
      } else {
        m.at(a, b) = m.at(b, a) = -1;
      }
    }
  }
  uint32_t missing = 0;
  for (uint32_t a = 0; a < n; ++a) {
    if (!heard[a] && n > 1) {
      return Status::Error("probes: no reply between node " + std::to_string(a) +
                           " and any other node (is it down?)");
    }
    for (uint32_t b = a + 1; b < n; ++b) {
      if (m.at(a, b) < 0) {
        m.at(a, b) = m.at(b, a) = largest;
        ++missing;
      }
    }
  }
  if (unanswered_pairs != nullptr) *unanswered_pairs = missing;
  return m;
}

}  // namespace swemu
