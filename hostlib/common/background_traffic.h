#pragma once
// Background traffic from one host to another: UDP frames of a fixed size at a rate that changes
// over time (phases), e.g. the time-varying cross traffic of PLink's emulated cloud. The frames
// go to `port` (default 9, discard); nothing answers them. A rate of 0 is silence.
#include <cstdint>
#include <span>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/udp_frame.h"

namespace swemu {

struct BackgroundPhase {
  TimeNs start_ns = 0;
  uint64_t rate_bps = 0;  // on the wire, Ethernet frame bytes
};

class BackgroundSource final : public Endpoint {
 public:
  // Phases sorted by start; before the first, silence. frame_len: 60..9000 bytes.
  BackgroundSource(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip, Ipv4Addr dst_ip,
                   std::size_t frame_len, std::vector<BackgroundPhase> phases, Transport* transport,
                   uint16_t port = 9);

  uint64_t frames_sent() const { return frames_sent_; }

  void OnFrame(TimeNs, std::span<const uint8_t>) noexcept override {}
  void OnTimer(TimeNs now) noexcept override { Pump(now); }
  TimeNs NextTimer() const noexcept override { return next_; }
  void Pump(TimeNs now) noexcept override;

 private:
  // The rate at `t` and when the phase holding it ends (kNever for the last).
  uint64_t RateAt(TimeNs t, TimeNs* ends) const;

  std::vector<uint8_t> frame_;
  std::vector<BackgroundPhase> phases_;
  Transport* transport_;
  TimeNs next_ = 0;
  uint64_t frames_sent_ = 0;
};

}  // namespace swemu
