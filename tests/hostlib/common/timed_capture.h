#pragma once
// A Transport that records each frame with the virtual time its driver has reached, and the
// driver: the engine's part for one host without an engine (pump, fire the timer, pump).
#include <span>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/pacer.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {

struct SentFrame {
  TimeNs at;
  std::vector<uint8_t> bytes;
};

class TimedCapture final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    frames.push_back({now, std::vector<uint8_t>(frame.begin(), frame.end())});
    return true;
  }
  TimeNs now = 0;
  std::vector<SentFrame> frames;
};

// Pumps at 0, then fires the host's timer and pumps, up to `until`.
inline void DriveHost(Endpoint& host, TimedCapture& capture, TimeNs until) {
  host.Pump(0);
  for (TimeNs t = host.NextTimer(); t <= until; t = host.NextTimer()) {
    capture.now = t;
    host.OnTimer(t);
    host.Pump(t);
  }
}

// One frame's serialization time at rate_bps, preamble and gap included (HostPacer's rounding).
inline TimeNs WireGap(std::size_t frame_bytes, uint64_t rate_bps) {
  return HostPacer().Gap(frame_bytes + kEthernetWireOverheadBytes, static_cast<double>(rate_bps));
}

}  // namespace swemu
