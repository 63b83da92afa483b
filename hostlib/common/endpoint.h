#pragma once
// The two small interfaces every hostlib endpoint is written against (ARCHITECTURE.md,
// "hostlib"): a Transport that sends whole Ethernet frames out of one host port, and an
// event-driven Endpoint that the driver feeds with received frames and due timers. Drivers:
//   - hostlib/common/event_loop.h: real time, polling a Transport (kernel UDP sockets, a DPDK
//     port) with a wall clock;
//   - hostlib/common/engine_transport.h: the virtual-time engine, so endpoints and switches
//     co-simulate deterministically.
// Endpoints never block and never read a clock of their own: `now` comes with every call.
#include <cstdint>
#include <span>

#include "pipeline/core/clock.h"

namespace swemu {

// One host port's transmit side.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends one Ethernet frame (no FCS). False when it could not be queued (counted by the
  // transport); protocols treat that as a loss.
  virtual bool Send(std::span<const uint8_t> frame) noexcept = 0;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // A frame arrived at the host's port. The span is valid only during the call.
  virtual void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept = 0;
  // Called when now >= NextTimer(); the endpoint does its due work (retransmissions, pacing).
  virtual void OnTimer(TimeNs now) noexcept = 0;
  // When the endpoint next wants OnTimer, or kNever. Read again after every call.
  virtual TimeNs NextTimer() const noexcept = 0;
  // Sends whatever the endpoint may send now (e.g. after new work was submitted). Drivers
  // call it once at start and after every OnFrame/OnTimer.
  virtual void Pump(TimeNs now) noexcept = 0;
};

}  // namespace swemu
