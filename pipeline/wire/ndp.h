#pragma once
// IPv6 neighbour discovery (RFC 4861) as a router's control plane speaks it: Neighbor
// Solicitation and Advertisement with one link-layer address option, and ICMPv6 echo's types
// (RFC 4443). An ND message follows the IPv6 header directly and has hop limit 255.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/address.h"

namespace swemu {

inline constexpr uint8_t kIcmpv6EchoRequest = 128;
inline constexpr uint8_t kIcmpv6EchoReply = 129;
inline constexpr uint8_t kNdNeighborSolicit = 135;
inline constexpr uint8_t kNdNeighborAdvert = 136;
inline constexpr uint8_t kNdHopLimit = 255;  // sent and required on receipt (RFC 4861 7.1)

// NA flags, in the word after the checksum.
inline constexpr uint32_t kNaRouter = 0x8000'0000;
inline constexpr uint32_t kNaSolicited = 0x4000'0000;
inline constexpr uint32_t kNaOverride = 0x2000'0000;

inline constexpr uint8_t kNdOptSourceLinkAddr = 1;  // in an NS
inline constexpr uint8_t kNdOptTargetLinkAddr = 2;  // in an NA
inline constexpr std::size_t kNdHeaderLen = 24;     // type, code, checksum, flags, target
inline constexpr std::size_t kNdLinkAddrOptionLen = 8;
inline constexpr std::size_t kNdMaxLen = kNdHeaderLen + kNdLinkAddrOptionLen;

// An NS or NA, host order. `link_mac` is the source (NS) or target (NA) link-layer address
// option, 0 when absent (a DAD probe's NS has none).
struct NdFields {
  uint8_t type = kNdNeighborSolicit;
  uint32_t flags = 0;  // NA only
  Ipv6Addr target;
  uint64_t link_mac = 0;

  // Writes the ICMPv6 message with a zero checksum; returns its length.
  std::size_t Encode(uint8_t* icmp) const noexcept;
  // The ICMPv6 message of `len` bytes, if it is a valid NS or NA (RFC 4861 7.1.1 and 7.1.2:
  // code 0, at least 24 bytes, no option of length 0, a target that is not multicast). The
  // hop limit of 255 is the caller's to check.
  static std::optional<NdFields> Decode(const uint8_t* icmp, std::size_t len) noexcept;
  friend bool operator==(const NdFields&, const NdFields&) = default;
};

// Writes an IPv6 header (hop limit 255, next header ICMPv6) and the ND message after it at
// `ip6`, with its checksum over the IPv6 pseudo-header; returns the bytes written from `ip6`.
std::size_t WriteNdPacket(uint8_t* ip6, const Ipv6Addr& src, const Ipv6Addr& dst,
                          const NdFields& nd) noexcept;

}  // namespace swemu
