#include "pipeline/wire/address.h"

#include <arpa/inet.h>

#include <cstdio>

#include "pipeline/wire/byte_order.h"

namespace swemu {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends rather than `"'" + std::string(text)`, which trips GCC 12's -Wrestrict at -O3.
std::string Quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('\'');
  out.append(text);
  out.push_back('\'');
  return out;
}

}  // namespace

Result<MacAddr> ParseMac(std::string_view text) {
  // 6 pairs + 5 separators.
  auto error = [&] {
    return Status::Error("bad MAC address " + Quoted(text) +
                         ": expected six ':'-separated hex pairs like 00:11:22:33:44:55");
  };
  if (text.size() != 17) return error();
  MacAddr mac;
  for (int i = 0; i < 6; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * 3;
    if (i > 0 && text[at - 1] != ':') return error();
    const int hi = HexValue(text[at]);
    const int lo = HexValue(text[at + 1]);
    if (hi < 0 || lo < 0) return error();
    mac.bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return mac;
}

Result<Ipv4Addr> ParseIpv4(std::string_view text) {
  auto error = [&](const char* why) {
    return Status::Error("bad IPv4 address " + Quoted(text) + ": " + why);
  };
  Ipv4Addr addr = 0;
  std::size_t pos = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (pos >= text.size() || text[pos] != '.') return error("expected four dotted octets");
      ++pos;
    }
    const std::size_t start = pos;
    uint32_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 4) {
      value = value * 10 + static_cast<uint32_t>(text[pos] - '0');
      ++pos;
    }
    const std::size_t digits = pos - start;
    if (digits == 0) return error("expected four dotted octets");
    if (digits > 3 || value > 255) return error("octet out of range 0..255");
    if (digits > 1 && text[start] == '0') return error("octet with a leading zero");
    addr = (addr << 8) | value;
  }
  if (pos != text.size()) return error("unexpected text after the fourth octet");
  return addr;
}

Result<Ipv4Prefix> ParseIpv4Prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  Result<Ipv4Addr> addr = ParseIpv4(text.substr(0, slash));
  if (!addr.ok()) return addr.status();
  Ipv4Prefix prefix{*addr, 32};
  if (slash != std::string_view::npos) {
    const std::string_view len = text.substr(slash + 1);
    if (len.empty() || len.size() > 2 || len.find_first_not_of("0123456789") != len.npos ||
        (len.size() == 2 && len[0] == '0')) {
      return Status::Error("bad IPv4 prefix " + Quoted(text) + ": length must be 0..32");
    }
    const int value = len.size() == 1 ? len[0] - '0' : (len[0] - '0') * 10 + (len[1] - '0');
    if (value > 32)
      return Status::Error("bad IPv4 prefix " + Quoted(text) + ": length must be 0..32");
    prefix.len = static_cast<uint8_t>(value);
  }
  if ((prefix.addr & ~prefix.Mask()) != 0) {
    return Status::Error("bad IPv4 prefix " + Quoted(text) + ": host bits set beyond /" +
                         std::to_string(prefix.len));
  }
  return prefix;
}

Ipv6Addr Ipv6Addr::FromBytes(const uint8_t* p) noexcept { return {LoadBe64(p), LoadBe64(p + 8)}; }

void Ipv6Addr::ToBytes(uint8_t* p) const noexcept {
  StoreBe64(p, hi);
  StoreBe64(p + 8, lo);
}

// inet_pton and inet_ntop are the C library's RFC 4291 / RFC 5952 forms (what `ip -6` prints).
Result<Ipv6Addr> ParseIpv6(std::string_view text) {
  uint8_t bytes[16];
  const std::string copy(text);
  if (text.empty() || text.size() > 45 || inet_pton(AF_INET6, copy.c_str(), bytes) != 1) {
    return Status::Error("bad IPv6 address " + Quoted(text) +
                         ": expected RFC 4291 text such "
                         "as 2001:db8::1");
  }
  return Ipv6Addr::FromBytes(bytes);
}

Result<Ipv6Prefix> ParseIpv6Prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  Result<Ipv6Addr> addr = ParseIpv6(text.substr(0, slash));
  if (!addr.ok()) return addr.status();
  Ipv6Prefix prefix{*addr, 128};
  if (slash != std::string_view::npos) {
    const std::string_view len = text.substr(slash + 1);
    int value = 0;
    for (char c : len) value = c >= '0' && c <= '9' && value <= 128 ? value * 10 + (c - '0') : 999;
    if (len.empty() || len.size() > 3 || (len.size() > 1 && len[0] == '0') || value > 128) {
      return Status::Error("bad IPv6 prefix " + Quoted(text) + ": length must be 0..128");
    }
    prefix.len = static_cast<uint8_t>(value);
  }
  if ((prefix.addr & Ipv6Addr::Mask(prefix.len)) != prefix.addr) {
    return Status::Error("bad IPv6 prefix " + Quoted(text) + ": host bits set beyond /" +
                         std::to_string(prefix.len));
  }
  return prefix;
}

std::string FormatIpv6(const Ipv6Addr& addr) {
  uint8_t bytes[16];
  addr.ToBytes(bytes);
  char text[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, bytes, text, sizeof(text));
  return text;
}

std::string FormatIpv6Prefix(const Ipv6Prefix& prefix) {
  return FormatIpv6(prefix.addr) + "/" + std::to_string(prefix.len);
}

std::string FormatMac(const MacAddr& mac) {
  char text[18];
  std::snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac.bytes[0], mac.bytes[1],
                mac.bytes[2], mac.bytes[3], mac.bytes[4], mac.bytes[5]);
  return text;
}

std::string FormatIpv4(Ipv4Addr addr) {
  char text[16];
  std::snprintf(text, sizeof(text), "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xFF,
                (addr >> 8) & 0xFF, addr & 0xFF);
  return text;
}

std::string FormatIpv4Prefix(const Ipv4Prefix& prefix) {
  return FormatIpv4(prefix.addr) + "/" + std::to_string(prefix.len);
}

}  // namespace swemu
