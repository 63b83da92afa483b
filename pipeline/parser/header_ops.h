#pragma once
// Per-packet IPv4 field rewrites that keep the header checksum valid by RFC 1624 incremental
// update, so no dirty bit and no full recompute is needed. The SetIpv4* ones are no-ops on
// packets without a parsed IPv4 header; DecrementTtl and MarkEcnCe act on IPv6's hop limit and
// traffic class too (IPv6 has no header checksum). None of these fields is in the UDP/TCP
// pseudo-header.
#include <cstdint>

#include "pipeline/core/packet.h"

namespace swemu {

void SetIpv4Tos(Packet& pkt, uint8_t tos) noexcept;
void SetIpv4Dscp(Packet& pkt, uint8_t dscp) noexcept;  // keeps the ECN bits

// TTL (or IPv6's hop limit) - 1. A TTL of 0 is left at 0 (expiry is the program's decision:
// kTtlExpired, kHopLimitExpired).
void DecrementTtl(Packet& pkt) noexcept;

// Congestion Experienced on an ECN-capable packet (ECT(0), ECT(1) or already CE): returns true
// and sets pkt.meta.ecn_marked when it changed the codepoint. Returns false for Not-ECT (the
// caller may drop instead) and for packets with neither IPv4 nor IPv6. Under IPv6 the ECN bits
// are the traffic class's two low bits.
bool MarkEcnCe(Packet& pkt) noexcept;

}  // namespace swemu
