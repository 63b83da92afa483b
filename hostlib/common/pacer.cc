#include "hostlib/common/pacer.h"

#include <algorithm>
#include <cmath>

namespace swemu {

TimeNs HostPacer::Gap(uint64_t bytes, double rate_bps) const {
  if (rate_bps <= 0) return 0;
  // bytes * 8 * 1e9 is an integer below 2^53, so exact; only the division rounds.
  const double ns = static_cast<double>(bytes * 8) * 1e9 / rate_bps;
  return static_cast<TimeNs>(rounding_ == Rounding::kUp ? std::ceil(ns) : ns);
}

void HostPacer::OnSend(TimeNs now, uint64_t bytes, double rate_bps) {
  next_ns_ = std::max(next_ns_, now) + Gap(bytes, rate_bps);
}

void HostPacer::CatchUp(TimeNs now) { next_ns_ = std::max(next_ns_, now); }

}  // namespace swemu
