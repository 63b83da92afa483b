#pragma once
// IPv4 header (RFC 791) and the TOS byte's DSCP/ECN split (RFC 2474, RFC 3168).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/address.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;

inline constexpr std::size_t kIpv4MinHeaderLen = 20;  // IHL 5
inline constexpr std::size_t kIpv4MaxHeaderLen = 60;  // IHL 15
inline constexpr uint16_t kIpv4FlagDf = 0x4000;       // in flags_fragment_offset
inline constexpr uint16_t kIpv4FlagMf = 0x2000;
inline constexpr uint16_t kIpv4FragmentOffsetMask = 0x1FFF;  // in 8-byte units

// ECN codepoints: the two low bits of the TOS byte.
inline constexpr uint8_t kEcnNotEct = 0b00;
inline constexpr uint8_t kEcnEct1 = 0b01;
inline constexpr uint8_t kEcnEct0 = 0b10;
inline constexpr uint8_t kEcnCe = 0b11;

constexpr uint8_t TosDscp(uint8_t tos) noexcept { return tos >> 2; }
constexpr uint8_t TosEcn(uint8_t tos) noexcept { return tos & 0x3; }
constexpr uint8_t MakeTos(uint8_t dscp, uint8_t ecn) noexcept {
  return static_cast<uint8_t>((dscp << 2) | (ecn & 0x3));
}
constexpr uint8_t TosWithEcn(uint8_t tos, uint8_t ecn) noexcept {
  return static_cast<uint8_t>((tos & 0xFC) | (ecn & 0x3));
}
constexpr uint8_t TosWithDscp(uint8_t tos, uint8_t dscp) noexcept {
  return static_cast<uint8_t>((dscp << 2) | (tos & 0x3));
}

struct __attribute__((packed)) Ipv4Header {
  uint8_t version_ihl;  // version (high nibble, 4) | IHL in 32-bit words (low nibble)
  uint8_t tos;          // DSCP (6 bits) | ECN (2 bits)
  uint8_t total_length[2];
  uint8_t identification[2];
  uint8_t flags_fragment_offset[2];  // reserved | DF | MF | 13-bit offset
  uint8_t ttl;
  uint8_t protocol;
  uint8_t header_checksum[2];
  uint8_t src_addr[4];
  uint8_t dst_addr[4];

  uint8_t Version() const noexcept { return version_ihl >> 4; }
  uint8_t Ihl() const noexcept { return version_ihl & 0x0F; }
  uint16_t HeaderLen() const noexcept { return static_cast<uint16_t>(Ihl() * 4); }
  uint8_t Dscp() const noexcept { return TosDscp(tos); }
  uint8_t Ecn() const noexcept { return TosEcn(tos); }
  uint16_t TotalLength() const noexcept { return LoadBe16(total_length); }
  uint16_t Identification() const noexcept { return LoadBe16(identification); }
  uint16_t FlagsFragmentOffset() const noexcept { return LoadBe16(flags_fragment_offset); }
  uint16_t FragmentOffset() const noexcept {
    return FlagsFragmentOffset() & kIpv4FragmentOffsetMask;
  }
  bool DontFragment() const noexcept { return (FlagsFragmentOffset() & kIpv4FlagDf) != 0; }
  bool MoreFragments() const noexcept { return (FlagsFragmentOffset() & kIpv4FlagMf) != 0; }
  // Any piece of a fragmented datagram (first, middle or last).
  bool IsFragment() const noexcept {
    return (FlagsFragmentOffset() & (kIpv4FlagMf | kIpv4FragmentOffsetMask)) != 0;
  }
  uint16_t HeaderChecksum() const noexcept { return LoadBe16(header_checksum); }
  Ipv4Addr SrcAddr() const noexcept { return LoadBe32(src_addr); }
  Ipv4Addr DstAddr() const noexcept { return LoadBe32(dst_addr); }

  void SetVersionIhl(uint8_t version, uint8_t ihl) noexcept {
    version_ihl = static_cast<uint8_t>((version << 4) | (ihl & 0x0F));
  }
  void SetTotalLength(uint16_t v) noexcept { StoreBe16(total_length, v); }
  void SetIdentification(uint16_t v) noexcept { StoreBe16(identification, v); }
  void SetFlagsFragmentOffset(uint16_t v) noexcept { StoreBe16(flags_fragment_offset, v); }
  void SetHeaderChecksum(uint16_t v) noexcept { StoreBe16(header_checksum, v); }
  void SetSrcAddr(Ipv4Addr a) noexcept { StoreBe32(src_addr, a); }
  void SetDstAddr(Ipv4Addr a) noexcept { StoreBe32(dst_addr, a); }
};
static_assert(sizeof(Ipv4Header) == kIpv4MinHeaderLen);

// Host-order form of the fixed 20 bytes (options, if any, follow them on the wire).
struct Ipv4Fields {
  uint8_t version = 4;
  uint8_t ihl = 5;
  uint8_t tos = 0;
  uint16_t total_length = 0;
  uint16_t identification = 0;
  uint16_t flags_fragment_offset = 0;
  uint8_t ttl = 64;
  uint8_t protocol = 0;
  uint16_t header_checksum = 0;  // written as given: see Ipv4HeaderChecksum() in checksum.h
  Ipv4Addr src_addr = 0;
  Ipv4Addr dst_addr = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<Ipv4Header>(out);
    h->SetVersionIhl(version, ihl);
    h->tos = tos;
    h->SetTotalLength(total_length);
    h->SetIdentification(identification);
    h->SetFlagsFragmentOffset(flags_fragment_offset);
    h->ttl = ttl;
    h->protocol = protocol;
    h->SetHeaderChecksum(header_checksum);
    h->SetSrcAddr(src_addr);
    h->SetDstAddr(dst_addr);
  }
  // Only checks that the 20 fixed bytes are there; validation is the parser's job.
  static std::optional<Ipv4Fields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kIpv4MinHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<Ipv4Header>(in);
    return Ipv4Fields{h->Version(),
                      h->Ihl(),
                      h->tos,
                      h->TotalLength(),
                      h->Identification(),
                      h->FlagsFragmentOffset(),
                      h->ttl,
                      h->protocol,
                      h->HeaderChecksum(),
                      h->SrcAddr(),
                      h->DstAddr()};
  }
  friend bool operator==(const Ipv4Fields&, const Ipv4Fields&) = default;
};

}  // namespace swemu
