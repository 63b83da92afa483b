#pragma once
// The deparser: brings checksums up to date after the match-action stages (per the
// ParsedHeaders::dirty bits), and the header add/remove helpers that keep pkt.hdr right.
#include <cstdint>

#include "pipeline/core/packet.h"
#include "pipeline/wire/ethernet.h"

namespace swemu {

struct DeparserConfig {
  // Write UDP checksum 0 ("not computed", legal over IPv4) instead of recomputing it.
  bool zero_udp_checksum = false;
};

class Deparser {
 public:
  explicit Deparser(DeparserConfig config = {}) : config_(config) {}

  // Fast path. kDirtyIpv4: recompute the IPv4 header checksum. kDirtyL4: recompute the UDP or
  // TCP checksum over IPv4's or IPv6's pseudo-header (over IPv4 a UDP checksum of 0 stays 0;
  // fragments are left alone, their L4 checksum covers bytes not in this packet). Clears the
  // dirty bits.
  void Deparse(Packet& pkt) const noexcept {
    if (!Untouched(pkt)) DeparseDirty(pkt);
  }
  // Whether Deparse has nothing to do: no header was changed without its checksum.
  static bool Untouched(const Packet& pkt) noexcept { return pkt.hdr.dirty == 0; }

 private:
  void DeparseDirty(Packet& pkt) const noexcept;

  DeparserConfig config_;
};

// Inserts an 802.1Q tag as the outermost tag (right after the MAC addresses) and shifts the
// parsed offsets. False (packet unchanged) when not parsed, already kMaxVlanTags tags, or no
// headroom.
bool PushVlan(Packet& pkt, uint16_t tci, uint16_t tpid = kEtherTypeVlan) noexcept;
// Removes the outermost tag; false (packet unchanged) when there is none.
bool PopVlan(Packet& pkt) noexcept;

}  // namespace swemu
