#include "hostlib/common/background_traffic.h"

#include <algorithm>
#include <cmath>

namespace swemu {

BackgroundSource::BackgroundSource(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip,
                                   Ipv4Addr dst_ip, std::size_t frame_len,
                                   std::vector<BackgroundPhase> phases, Transport* transport,
                                   uint16_t port)
    : phases_(std::move(phases)), transport_(transport) {
  frame_len = std::clamp<std::size_t>(frame_len, 60, 9000);
  const UdpFrameTemplate tmpl(src_mac, dst_mac, src_ip, dst_ip, port, frame_len - kUdpPayloadOffset,
                              0);
  frame_.assign(tmpl.frame_len(), 0);
  tmpl.Write(frame_.data());
  std::stable_sort(phases_.begin(), phases_.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  next_ = phases_.empty() ? kNever : phases_.front().start_ns;
}

uint64_t BackgroundSource::RateAt(TimeNs t, TimeNs* ends) const {
  auto it = std::upper_bound(phases_.begin(), phases_.end(), t,
                             [](TimeNs v, const BackgroundPhase& p) { return v < p.start_ns; });
  *ends = it == phases_.end() ? kNever : it->start_ns;
  return it == phases_.begin() ? 0 : std::prev(it)->rate_bps;
}

void BackgroundSource::Pump(TimeNs now) noexcept {
  while (next_ <= now) {
    TimeNs ends = kNever;
    const uint64_t rate = RateAt(next_, &ends);
    if (rate == 0) {
      next_ = ends;
      continue;
    }
    transport_->Send(frame_);
    ++frames_sent_;
    const double bits = static_cast<double>((frame_.size() + 24) * 8);  // + FCS, preamble, gap
    next_ += std::max<TimeNs>(1, static_cast<TimeNs>(bits * 1e9 / static_cast<double>(rate)));
  }
}

}  // namespace swemu
