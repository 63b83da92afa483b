#include "pipeline/tables/value_text.h"

#include <cctype>
#include <vector>

namespace swemu {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
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

Result<MatchKey> ParseMacText(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, ':');
  if (parts.size() != 6) return Status::Error("bad MAC address");
  MatchKey value;
  for (std::string_view part : parts) {
    if (part.empty() || part.size() > 2) return Status::Error("bad MAC address");
    uint64_t byte = 0;
    for (char c : part) {
      int d = HexDigit(c);
      if (d < 0) return Status::Error("bad MAC address");
      byte = byte * 16 + static_cast<uint64_t>(d);
    }
    value.w[0] = (value.w[0] << 8) | byte;
  }
  return value;
}

Result<MatchKey> ParseIpv4Text(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '.');
  if (parts.size() != 4) return Status::Error("bad IPv4 address");
  MatchKey value;
  for (std::string_view part : parts) {
    if (part.empty() || part.size() > 3) return Status::Error("bad IPv4 address");
    uint64_t octet = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return Status::Error("bad IPv4 address");
      octet = octet * 10 + static_cast<uint64_t>(c - '0');
    }
    if (octet > 255) return Status::Error("bad IPv4 address");
    value.w[0] = (value.w[0] << 8) | octet;
  }
  return value;
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
  if (text.find(':') != std::string_view::npos) return ParseMacText(text);
  if (text.find('.') != std::string_view::npos) return ParseIpv4Text(text);
  return ParseDecimal(text);
}

ValueStyle StyleFor(std::string_view name, unsigned bits, bool ip_hint, ValueStyle fallback) {
  if (bits == 48) return ValueStyle::kMac;
  if (bits != 32) return fallback;
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool ip_token = false;  // "ip" at the start of a word: "ip_dst", "hdr.ipv4.dst"
  for (std::size_t i = lower.find("ip"); i != std::string::npos; i = lower.find("ip", i + 1)) {
    if (i == 0 || !std::isalpha(static_cast<unsigned char>(lower[i - 1]))) ip_token = true;
  }
  if (ip_hint || ip_token || lower.find("addr") != std::string::npos) return ValueStyle::kIpv4;
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
    case ValueStyle::kDecimal:
      if (value.w[1] == 0) return std::to_string(value.w[0]);
      break;
    case ValueStyle::kHex:
      break;
  }
  return Hex(value, (bits + 3) / 4);
}

}  // namespace swemu
