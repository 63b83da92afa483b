#include "pipeline/tables/value_text.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "pipeline/wire/address.h"

namespace swemu {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<MatchKey> ParseHex(std::string_view digits) {
  if (digits.empty()) return Status::Error("bad hex number");
  MatchKey value;
  for (char c : digits) {
    int d = HexDigit(c);
    if (d < 0) return Status::Error("bad hex number");
    if ((value.w[1] >> 60) != 0) return Status::Error("value wider than 128 bits");
    value = ShiftLeft(value, 4);
    value.w[0] |= static_cast<uint64_t>(d);
  }
  return value;
}

Result<MatchKey> ParseDecimal(std::string_view digits) {
  __extension__ typedef unsigned __int128 U128;
  const U128 max = ~U128{0};
  U128 v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return Status::Error("bad number");
    unsigned d = static_cast<unsigned>(c - '0');
    if (v > (max - d) / 10) return Status::Error("value wider than 128 bits");
    v = v * 10 + d;
  }
  return MatchKey{{static_cast<uint64_t>(v), static_cast<uint64_t>(v >> 64)}};
}

// MAC and IPv4 text use the one definition in pipeline/wire/address.h.
Result<MatchKey> ParseMacText(std::string_view text) {
  Result<MacAddr> mac = ParseMac(text);
  if (!mac.ok()) return Status::Error("bad MAC address");
  return MatchKey{{mac->ToU64(), 0}};
}

// IPv6 text has seven ':' or a "::" ("2001:db8::1"); other text with a ':' is read as a MAC,
// so a MAC with a group missing is named a bad MAC.
Result<MatchKey> ParseColonText(std::string_view text) {
  const auto colons = std::count(text.begin(), text.end(), ':');
  if (colons != 7 && text.find("::") == std::string_view::npos) return ParseMacText(text);
  Result<Ipv6Addr> ip = ParseIpv6(text);
  if (!ip.ok()) return Status::Error("bad IPv6 address");
  return MatchKey{{ip->lo, ip->hi}};
}

Result<MatchKey> ParseIpv4Text(std::string_view text) {
  Result<Ipv4Addr> ip = ParseIpv4(text);
  if (!ip.ok()) return Status::Error("bad IPv4 address");
  return MatchKey{{*ip, 0}};
}

std::string Hex(const MatchKey& value, unsigned digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (unsigned i = digits; i-- > 0;) out += kDigits[ShiftRight(value, i * 4).w[0] & 0xF];
  return out;
}

}  // namespace

Result<MatchKey> ParseValue(std::string_view text) {
  if (text.empty()) return Status::Error("empty value");
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    return ParseHex(text.substr(2));
  }
  if (text.find(':') != std::string_view::npos) return ParseColonText(text);
  if (text.find('.') != std::string_view::npos) return ParseIpv4Text(text);
  return ParseDecimal(text);
}

ValueStyle StyleFor(std::string_view name, unsigned bits, bool ip_hint, ValueStyle fallback) {
  if (bits == 48) return ValueStyle::kMac;
  if (bits != 32 && bits != 128) return fallback;
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool ip_token = false;  // "ip" at the start of a word: "ip_dst", "hdr.ipv4.dst"
  for (std::size_t i = lower.find("ip"); i != std::string::npos; i = lower.find("ip", i + 1)) {
    if (i == 0 || !std::isalpha(static_cast<unsigned char>(lower[i - 1]))) ip_token = true;
  }
  if (ip_hint || ip_token || lower.find("addr") != std::string::npos) {
    return bits == 32 ? ValueStyle::kIpv4 : ValueStyle::kIpv6;
  }
  return fallback;
}

std::string FormatValue(const MatchKey& value, unsigned bits, ValueStyle style) {
  switch (style) {
    case ValueStyle::kMac: {
      const std::string hex = Hex(value, 12);
      std::string out;
      for (std::size_t i = 2; i < hex.size(); i += 2) {
        if (i > 2) out += ':';
        out.append(hex, i, 2);
      }
      return out;
    }
    case ValueStyle::kIpv4: {
      std::string out;
      for (int shift = 24; shift >= 0; shift -= 8) {
        out += std::to_string((value.w[0] >> shift) & 0xFF);
        if (shift > 0) out += '.';
      }
      return out;
    }
    case ValueStyle::kIpv6:
      return FormatIpv6(Ipv6Addr{value.w[1], value.w[0]});
    case ValueStyle::kDecimal:
      if (value.w[1] == 0) return std::to_string(value.w[0]);
      break;
    case ValueStyle::kHex:
      break;
  }
  return Hex(value, (bits + 3) / 4);
}

}  // namespace swemu
