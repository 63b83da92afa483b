#pragma once
// DLCP's minimal rate control (3.2.1, Figure 7), per flow. A flow starts at line rate. Every
// period (200 us) the receiver reports the rate it received at; the sender compares:
//   line-rate start:       send > Delta * recv  -> congestion avoidance, rate halved;
//   congestion avoidance:  send > Delta * recv  -> rate halved, else rate + 5% of the link.
// A retransmission request returns the flow to line-rate start at line rate. The paper's
// congestion-avoidance test reads "when the former is smaller than Delta times the latter, we
// half", which contradicts the first rule; swemu halves when send exceeds Delta * recv in both
// states (docs/papers.md, "DLCP"). What the paper leaves out, defined: the rate never exceeds the
// link nor falls below `floor_share` of it (with nothing received, it would halve for ever); a
// period without a report counts as a report of 0 received.
#include <cstdint>

#include "pipeline/core/clock.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {

struct DlcpRateOptions {
  uint64_t link_bps = kDefaultPortRateBps;
  TimeNs period_ns = 200'000;
  double delta = 2.0;
  double increase_share = 0.05;  // additive increase per period, share of the link
  double floor_share = 0.01;     // the lowest rate, share of the link
};

class DlcpRateControl {
 public:
  enum class State : uint8_t { kLineRateStart, kCongestionAvoidance };

  explicit DlcpRateControl(const DlcpRateOptions& options = {});
  // The receiver's report for a period: bits it received at per second, against the rate the
  // sender sent at over the same period.
  void OnReport(double send_bps, double recv_bps) noexcept;
  void OnRetransmitRequest() noexcept;

  double rate_bps() const noexcept { return rate_; }
  State state() const noexcept { return state_; }
  const DlcpRateOptions& options() const noexcept { return opt_; }

 private:
  void Halve() noexcept;
  DlcpRateOptions opt_;
  State state_ = State::kLineRateStart;
  double rate_;
};

}  // namespace swemu
