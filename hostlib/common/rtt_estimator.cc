#include "hostlib/common/rtt_estimator.h"

#include <algorithm>
#include <cmath>

namespace swemu {

RttEstimatorOptions UncappedEstimateRtt(TimeNs initial_rto_ns, TimeNs min_rto_ns,
                                        TimeNs max_rto_ns) {
  RttEstimatorOptions r;
  r.initial_rto_ns = initial_rto_ns;
  r.min_rto_ns = min_rto_ns;
  r.max_rto_ns = max_rto_ns;
  r.cap_estimate = false;
  return r;
}

RttEstimator::RttEstimator(const RttEstimatorOptions& options)
    : options_(options), rto_ns_(options.initial_rto_ns) {}

void RttEstimator::Sample(TimeNs rtt_ns) {
  if (options_.integer_ns) {
    UpdateInteger(rtt_ns);
  } else {
    UpdateDouble(rtt_ns);
  }
  has_sample_ = true;
  if (options_.sample_resets_backoff) rto_ns_ = BaseRto();
}

// Whole nanoseconds, rounded down at each step (exact in a double below 2^53 ns, 104 days).
void RttEstimator::UpdateInteger(TimeNs rtt) {
  if (!has_sample_) {
    srtt_ = static_cast<double>(std::max<TimeNs>(rtt, 1));
    rttvar_ = static_cast<double>(rtt / 2);
    return;
  }
  const auto srtt = static_cast<TimeNs>(srtt_);
  const auto rttvar = static_cast<TimeNs>(rttvar_);
  const TimeNs diff = rtt > srtt ? rtt - srtt : srtt - rtt;
  rttvar_ = static_cast<double>((3 * rttvar + diff) / 4);
  srtt_ = static_cast<double>(std::max<TimeNs>((7 * srtt + rtt) / 8, 1));
}

void RttEstimator::UpdateDouble(TimeNs rtt_ns) {
  const auto rtt = static_cast<double>(rtt_ns);
  if (!has_sample_) {
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    return;
  }
  rttvar_ = 0.75 * rttvar_ + 0.25 * std::abs(srtt_ - rtt);
  srtt_ = 0.875 * srtt_ + 0.125 * rtt;
}

void RttEstimator::Backoff() { rto_ns_ = std::min(rto_ns_ * 2, options_.max_rto_ns); }

TimeNs RttEstimator::BaseRto() const {
  if (!has_sample_) return options_.initial_rto_ns;
  const double spread = std::max(static_cast<double>(options_.granularity_ns), 4 * rttvar_);
  const auto estimate = static_cast<TimeNs>(srtt_ + spread);
  if (!options_.cap_estimate) return std::max(options_.min_rto_ns, estimate);
  return std::clamp(estimate, std::min(options_.min_rto_ns, options_.max_rto_ns),
                    options_.max_rto_ns);
}

}  // namespace swemu
