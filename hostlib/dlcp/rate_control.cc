#include "hostlib/dlcp/rate_control.h"

#include <algorithm>

namespace swemu {

DlcpRateControl::DlcpRateControl(const DlcpRateOptions& options)
    : opt_(options), rate_(static_cast<double>(options.link_bps)) {}

void DlcpRateControl::Halve() noexcept {
  rate_ = std::max(rate_ / 2, opt_.floor_share * static_cast<double>(opt_.link_bps));
}

void DlcpRateControl::OnReport(double send_bps, double recv_bps) noexcept {
  const bool congested = send_bps > opt_.delta * recv_bps;
  if (state_ == State::kLineRateStart) {
    if (congested) {
      state_ = State::kCongestionAvoidance;
      Halve();
    }
    return;
  }
  if (congested) {
    Halve();
  } else {
    rate_ = std::min(rate_ + opt_.increase_share * static_cast<double>(opt_.link_bps),
                     static_cast<double>(opt_.link_bps));
  }
}

void DlcpRateControl::OnRetransmitRequest() noexcept {
  state_ = State::kLineRateStart;
  rate_ = static_cast<double>(opt_.link_bps);
}

}  // namespace swemu
