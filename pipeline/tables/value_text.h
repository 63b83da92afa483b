#pragma once
// Text forms of key and parameter values on the control plane, as BMv2's CLI accepts them:
// decimal, 0x hex, MAC "aa:bb:cc:dd:ee:ff" (two hex digits a byte), dotted IPv4 "10.0.0.1"
// (octets 0..255 without leading zeros, as pipeline/wire/address.h) and IPv6 "2001:db8::1"
// (RFC 4291 text; any ':' text that is not a 17-character MAC). Values up to 128 bits.
// (pipeline/wire/address.h has the same MAC/IPv4 forms, but swemu_tables links only swemu_core.)
#include <string>
#include <string_view>

#include "pipeline/core/status.h"
#include "pipeline/tables/table_spec.h"

namespace swemu {

// The error message is just the problem ("bad IPv4 address", "bad number", ...); callers say
// which key or parameter it was.
Result<MatchKey> ParseValue(std::string_view text);

// Whether a value fits in `bits` bits.
inline bool FitsBits(const MatchKey& value, unsigned bits) {
  return IsZero(value & ~LowBitsMask(bits));
}

enum class ValueStyle : uint8_t { kHex, kDecimal, kMac, kIpv4, kIpv6 };
// How to show a field or parameter of this name and width: 48 bits as a MAC, 32 (128) bits named
// like an IP address ("ip..." or "...addr...") or `ip_hint` as IPv4 (IPv6, RFC 5952), else
// `fallback`.
ValueStyle StyleFor(std::string_view name, unsigned bits, bool ip_hint, ValueStyle fallback);
// kHex pads to the width's hex digits ("0x0800" for 16 bits).
std::string FormatValue(const MatchKey& value, unsigned bits, ValueStyle style);

}  // namespace swemu
