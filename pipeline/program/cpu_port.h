#pragma once
// The switch's CPU port, as P4's packet_in/packet_out: a program's ingress sends a whole packet
// to its control plane by setting meta.egress_spec = kCpuPort; the control plane (the program's
// CpuAgent) gets it after a fixed latency, on the thread that owns the switch, and may send
// packets out of a port or back into ingress. The switch names no protocol here: what a
// packet-in means is the program's business.
#include <cstdint>
#include <span>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet.h"

namespace swemu {

// egress_spec of a packet for the control plane (kPortUnset is 0xFFFF).
inline constexpr PortId kCpuPort = 0xFFFE;

struct CpuPortConfig {
  // Packets waiting for the control plane; one more is dropped (cpu_queue_full).
  uint32_t queue_packets = 256;
  // From packet-in to its handling: the control plane's latency (PCIe, driver, agent). Fixed,
  // so that a virtual-time run stays byte-identical run to run.
  TimeNs latency_ns = 20'000;
  friend bool operator==(const CpuPortConfig&, const CpuPortConfig&) = default;
};

// A program's control-plane half. Runs on the switch's own thread, never in the fast path.
class CpuAgent {
 public:
  virtual ~CpuAgent() = default;
  // A packet-in, with its headers and metadata as ingress left them; the agent owns it now
  // (frees it through CpuPort::Free or sends it on).
  virtual void OnPacketIn(Packet* pkt, TimeNs now) = 0;
  // When OnTimer wants to run next (kNever: no timer).
  virtual TimeNs NextTimer() const { return kNever; }
  virtual void OnTimer(TimeNs /*now*/) {}
  // Frees every packet it holds (shutdown).
  virtual void FreeHeld() {}
};

// What the switch offers an agent. Packets come from and go back to the switch's pool.
class CpuPort {
 public:
  virtual ~CpuPort() = default;
  // The program's agent; at most one, set at Load.
  virtual void Attach(CpuAgent* agent) = 0;
  // A new packet holding a copy of frame; nullptr when the pool is empty.
  virtual Packet* NewPacket(std::span<const uint8_t> frame) = 0;
  // Sends pkt out of `port` (queue `queue`) through the TM and egress, as packet_out does.
  virtual void PacketOut(Packet* pkt, PortId port, uint8_t queue = 0) = 0;
  // Runs pkt through ingress again as if it had arrived on `port` (parsed anew).
  virtual void ToIngress(Packet* pkt, PortId port) = 0;
  // Frees a packet the agent holds.
  virtual void Free(Packet* pkt) = 0;
  // Drops a packet the agent holds, counted under `reason` with the switch's drops.
  virtual void Drop(Packet* pkt, DropReason reason) = 0;
  // The switch's clock (for work a control command starts).
  virtual TimeNs Now() const = 0;
};

// Packet-in and packet-out counts of one switch (counters.json's "cpu"). Conservation: the
// control plane takes packet_in + created packets and gives back packet_out + to_ingress +
// freed + dropped, and holds the difference (queued for it, or kept by its agent).
struct CpuCounters {
  uint64_t packet_in = 0;   // accepted for the control plane
  uint64_t packet_out = 0;  // sent out of a port by the control plane
  uint64_t to_ingress = 0;  // sent back into ingress
  uint64_t freed = 0;       // packets the control plane freed (handled)
  uint64_t dropped = 0;     // packets it dropped (counted with the switch's drops too)
  uint64_t created = 0;     // packets the control plane made (NewPacket)
  uint64_t held() const {
    return packet_in + created - packet_out - to_ingress - freed - dropped;
  }
};

}  // namespace swemu
