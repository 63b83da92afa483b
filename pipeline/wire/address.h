#pragma once
// MAC, IPv4 and IPv6 address types with the text forms the control-plane CLI and the tools
// accept.
#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/core/status.h"

namespace swemu {

struct MacAddr {
  std::array<uint8_t, 6> bytes{};  // in wire order: bytes[0] is sent first

  // The 48-bit value with bytes[0] in bits 47..40 (handy as an exact-match table key).
  static constexpr MacAddr FromU64(uint64_t value) noexcept {
    MacAddr mac;
    for (int i = 5; i >= 0; --i, value >>= 8) mac.bytes[i] = static_cast<uint8_t>(value);
    return mac;
  }
  constexpr uint64_t ToU64() const noexcept {
    uint64_t value = 0;
    for (uint8_t b : bytes) value = (value << 8) | b;
    return value;
  }
  constexpr bool IsBroadcast() const noexcept { return ToU64() == 0xFFFF'FFFF'FFFFULL; }
  constexpr bool IsMulticast() const noexcept { return (bytes[0] & 1) != 0; }
  friend constexpr bool operator==(const MacAddr&, const MacAddr&) = default;
};

inline constexpr MacAddr kBroadcastMac = MacAddr::FromU64(0xFFFF'FFFF'FFFFULL);

// An IPv4 address in host byte order: 10.0.0.1 is 0x0A000001.
using Ipv4Addr = uint32_t;

// The Ethernet address of an IPv4 multicast group: 01:00:5e + its low 23 bits (RFC 1112).
constexpr MacAddr Ipv4MulticastMac(Ipv4Addr group) noexcept {
  return MacAddr::FromU64(0x01005E000000ULL | (group & 0x7FFFFF));
}

constexpr Ipv4Addr MakeIpv4Addr(uint8_t a, uint8_t b, uint8_t c, uint8_t d) noexcept {
  return (uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d;
}

struct Ipv4Prefix {
  Ipv4Addr addr = 0;  // host bits are zero
  uint8_t len = 0;    // 0..32

  constexpr Ipv4Addr Mask() const noexcept { return len == 0 ? 0 : ~Ipv4Addr{0} << (32 - len); }
  constexpr bool Contains(Ipv4Addr a) const noexcept { return (a & Mask()) == addr; }
  friend constexpr bool operator==(const Ipv4Prefix&, const Ipv4Prefix&) = default;
};

// An IPv6 address as two host-order halves: 2001:db8::1 is {0x20010db800000000, 1}. As a
// 128-bit table key: KeyPacker().Push(hi, 64).Push(lo, 64). The order is the numeric order.
struct Ipv6Addr {
  uint64_t hi = 0;
  uint64_t lo = 0;

  static Ipv6Addr FromBytes(const uint8_t* p) noexcept;  // 16 bytes in wire order
  void ToBytes(uint8_t* p) const noexcept;
  // ::ffff:a.b.c.d, an IPv4 address where one 128-bit key holds either family (RFC 4291 2.5.5.2).
  static constexpr Ipv6Addr MappedIpv4(Ipv4Addr v4) noexcept {
    return {0, 0xFFFF'0000'0000ULL | v4};
  }
  constexpr bool IsMappedIpv4() const noexcept { return hi == 0 && (lo >> 32) == 0xFFFF; }
  constexpr Ipv4Addr Ipv4() const noexcept { return static_cast<Ipv4Addr>(lo); }
  // The mask of a /len prefix.
  static constexpr Ipv6Addr Mask(unsigned len) noexcept {
    return {len == 0    ? 0
            : len >= 64 ? ~uint64_t{0}
                        : ~uint64_t{0} << (64 - len),
            len <= 64    ? 0
            : len >= 128 ? ~uint64_t{0}
                         : ~uint64_t{0} << (128 - len)};
  }
  constexpr Ipv6Addr operator&(const Ipv6Addr& m) const noexcept { return {hi & m.hi, lo & m.lo}; }
  friend constexpr auto operator<=>(const Ipv6Addr&, const Ipv6Addr&) = default;
};

struct Ipv6Prefix {
  Ipv6Addr addr;    // host bits are zero
  uint8_t len = 0;  // 0..128

  constexpr bool Contains(const Ipv6Addr& a) const noexcept {
    return (a & Ipv6Addr::Mask(len)) == addr;
  }
  friend constexpr bool operator==(const Ipv6Prefix&, const Ipv6Prefix&) = default;
};

// The link-local address of an interface with this MAC: fe80::/64 with the modified EUI-64
// interface id (RFC 4291 appendix A: ff:fe in the middle, the universal/local bit flipped).
constexpr Ipv6Addr LinkLocalIpv6(uint64_t mac) noexcept {
  const uint64_t eui = ((mac >> 24) << 40) | (0xFFFEULL << 24) | (mac & 0xFFFFFF);
  return {0xFE80'0000'0000'0000ULL, eui ^ (uint64_t{0x02} << 56)};
}
// The solicited-node multicast address of `target`, ff02::1:ffXX:XXXX (RFC 4291 2.7.1).
constexpr Ipv6Addr SolicitedNodeIpv6(const Ipv6Addr& target) noexcept {
  return {0xFF02'0000'0000'0000ULL, 0x0000'0001'FF00'0000ULL | (target.lo & 0xFFFFFF)};
}
// The Ethernet address of an IPv6 multicast group: 33:33 + its low 32 bits (RFC 2464 7).
constexpr MacAddr Ipv6MulticastMac(const Ipv6Addr& group) noexcept {
  return MacAddr::FromU64(0x3333'0000'0000ULL | (group.lo & 0xFFFF'FFFFULL));
}

// "00:11:22:33:44:55" (six pairs of hex digits, either case, separated by ':').
Result<MacAddr> ParseMac(std::string_view text);
// Dotted quad "10.0.0.1": four decimal octets 0..255, no leading zeros (no octal ambiguity).
Result<Ipv4Addr> ParseIpv4(std::string_view text);
// "10.0.0.0/24"; a bare address means /32. Host bits beyond the length are an error.
Result<Ipv4Prefix> ParseIpv4Prefix(std::string_view text);

// RFC 4291 text: "2001:db8::1", "fe80::1", "::ffff:10.0.0.1".
Result<Ipv6Addr> ParseIpv6(std::string_view text);
// "2001:db8:1::/64"; a bare address means /128. Host bits beyond the length are an error.
Result<Ipv6Prefix> ParseIpv6Prefix(std::string_view text);

std::string FormatMac(const MacAddr& mac);               // lower-case "00:11:22:33:44:55"
std::string FormatIpv4(Ipv4Addr addr);                   // "10.0.0.1"
std::string FormatIpv4Prefix(const Ipv4Prefix& prefix);  // "10.0.0.0/24"
std::string FormatIpv6(const Ipv6Addr& addr);            // RFC 5952: "2001:db8::1"
std::string FormatIpv6Prefix(const Ipv6Prefix& prefix);  // "2001:db8:1::/64"

}  // namespace swemu
