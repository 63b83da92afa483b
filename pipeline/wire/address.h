#pragma once
// MAC and IPv4 address types with the text forms the control-plane CLI and the tools accept.
#include <array>
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

// "00:11:22:33:44:55" (six pairs of hex digits, either case, separated by ':').
Result<MacAddr> ParseMac(std::string_view text);
// Dotted quad "10.0.0.1": four decimal octets 0..255, no leading zeros (no octal ambiguity).
Result<Ipv4Addr> ParseIpv4(std::string_view text);
// "10.0.0.0/24"; a bare address means /32. Host bits beyond the length are an error.
Result<Ipv4Prefix> ParseIpv4Prefix(std::string_view text);

std::string FormatMac(const MacAddr& mac);               // lower-case "00:11:22:33:44:55"
std::string FormatIpv4(Ipv4Addr addr);                   // "10.0.0.1"
std::string FormatIpv4Prefix(const Ipv4Prefix& prefix);  // "10.0.0.0/24"

}  // namespace swemu
