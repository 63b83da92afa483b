#pragma once
// IPv6 fixed header (RFC 8200), the extension headers the parser skips and the fragment header.
// The traffic class byte splits into DSCP and ECN as IPv4's TOS does (ipv4.h's Tos* helpers).
#include <cstddef>
#include <cstdint>

#include "pipeline/wire/address.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kIpv6HeaderLen = 40;
inline constexpr std::size_t kIpv6FragmentHeaderLen = 8;

// Next-header values (IANA protocol numbers) beyond ipv4.h's UDP and TCP.
inline constexpr uint8_t kIpProtoHopByHop = 0;
inline constexpr uint8_t kIpProtoRouting = 43;
inline constexpr uint8_t kIpProtoFragment = 44;
inline constexpr uint8_t kIpProtoIcmpv6 = 58;
inline constexpr uint8_t kIpProtoNoNext = 59;
inline constexpr uint8_t kIpProtoDestOptions = 60;

// Hop-by-hop, routing and destination options: (length byte + 1) * 8 bytes, next header first.
constexpr bool IsIpv6OptionsHeader(uint8_t next_header) noexcept {
  return next_header == kIpProtoHopByHop || next_header == kIpProtoRouting ||
         next_header == kIpProtoDestOptions;
}

struct __attribute__((packed)) Ipv6Header {
  uint8_t version_class_flow[4];  // version (4 bits, 6) | traffic class (8) | flow label (20)
  uint8_t payload_length[2];      // bytes after this header, extension headers included
  uint8_t next_header;
  uint8_t hop_limit;
  uint8_t src_addr[16];
  uint8_t dst_addr[16];

  uint8_t Version() const noexcept { return version_class_flow[0] >> 4; }
  uint8_t TrafficClass() const noexcept {
    return static_cast<uint8_t>((version_class_flow[0] << 4) | (version_class_flow[1] >> 4));
  }
  uint32_t FlowLabel() const noexcept { return LoadBe32(version_class_flow) & 0xFFFFF; }
  uint16_t PayloadLength() const noexcept { return LoadBe16(payload_length); }
  Ipv6Addr SrcAddr() const noexcept { return Ipv6Addr::FromBytes(src_addr); }
  Ipv6Addr DstAddr() const noexcept { return Ipv6Addr::FromBytes(dst_addr); }

  void SetVersionClassFlow(uint8_t version, uint8_t traffic_class, uint32_t flow) noexcept {
    StoreBe32(version_class_flow,
              (uint32_t{version} << 28) | (uint32_t{traffic_class} << 20) | (flow & 0xFFFFF));
  }
  void SetTrafficClass(uint8_t traffic_class) noexcept {
    version_class_flow[0] =
        static_cast<uint8_t>((version_class_flow[0] & 0xF0) | (traffic_class >> 4));
    version_class_flow[1] =
        static_cast<uint8_t>((version_class_flow[1] & 0x0F) | (traffic_class << 4));
  }
  void SetPayloadLength(uint16_t v) noexcept { StoreBe16(payload_length, v); }
  void SetSrcAddr(const Ipv6Addr& a) noexcept { a.ToBytes(src_addr); }
  void SetDstAddr(const Ipv6Addr& a) noexcept { a.ToBytes(dst_addr); }
};
static_assert(sizeof(Ipv6Header) == kIpv6HeaderLen);

inline constexpr uint16_t kIpv6FragmentOffsetMask = 0xFFF8;  // in offset_flags, 8-byte units << 3
inline constexpr uint16_t kIpv6FragmentMore = 0x0001;

struct __attribute__((packed)) Ipv6FragmentHeader {
  uint8_t next_header;
  uint8_t reserved;
  uint8_t offset_flags[2];  // 13-bit offset | 2 reserved bits | M
  uint8_t identification[4];

  uint16_t OffsetFlags() const noexcept { return LoadBe16(offset_flags); }
  // In bytes (the field counts 8-byte units).
  uint16_t FragmentOffset() const noexcept { return OffsetFlags() & kIpv6FragmentOffsetMask; }
  bool MoreFragments() const noexcept { return (OffsetFlags() & kIpv6FragmentMore) != 0; }
};
static_assert(sizeof(Ipv6FragmentHeader) == kIpv6FragmentHeaderLen);

// Whether the extension headers between the IPv6 header at ip and the upper layer upper_at
// bytes after it include a fragment header. Trusts the chain's lengths: for one the parser
// accepted.
inline bool Ipv6ChainHasFragment(const uint8_t* ip, uint32_t upper_at) noexcept {
  uint8_t next = HeaderAt<Ipv6Header>(ip)->next_header;
  for (uint32_t off = kIpv6HeaderLen; off < upper_at;) {
    if (next == kIpProtoFragment) return true;
    next = ip[off];
    off += (uint32_t{ip[off + 1]} + 1) * 8;
  }
  return false;
}

}  // namespace swemu
