#pragma once
// What a match-action table is (its declaration, checked once at load) and the values that flow
// through it: packed keys, action calls and entries. Names are resolved to indices at load time;
// the fast path only sees MatchKey and ActionCall.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

enum class MatchKind : uint8_t { kExact, kLpm, kTernary };

inline constexpr unsigned kMaxKeyBits = 128;
inline constexpr unsigned kMaxLpmKeyBits = 128;
// LPM keys up to this width use the 16-8-8 trie (lpm_table.h), wider ones lpm_wide_table.h.
inline constexpr unsigned kMaxTrieLpmKeyBits = 32;
inline constexpr unsigned kMaxActionParams = 4;
inline constexpr unsigned kMaxParamBits = 64;
inline constexpr uint32_t kMaxTableSize = 1u << 24;  // keeps handles and slot indices 32-bit

struct KeyField {
  std::string name;
  uint8_t bits = 0;
};

struct ActionParam {
  std::string name;
  uint8_t bits = 0;
  // Nonzero: a value must be below it. An egress port's limit is the switch's port count, so
  // an entry naming a port that does not exist is refused when added, not dropped per packet.
  uint64_t below = 0;
};

struct ActionSpec {
  std::string name;
  std::vector<ActionParam> params;  // at most kMaxActionParams, each at most 64 bits
};

struct TableSpec {
  std::string name;
  MatchKind kind = MatchKind::kExact;
  std::vector<KeyField> fields;  // 1..128 bits in total; LPM: exactly one field
  std::vector<ActionSpec> actions;
  uint32_t size = 0;           // declared capacity in entries
  std::string default_action;  // must name one of `actions`
  std::vector<uint64_t> default_params;
};

// A key as one unsigned integer of the table's total key width: the fields concatenated in
// declaration order, field 0 in the most significant used bits and the last field in the least
// significant bits (as P4 concatenates key fields). w[0] holds bits 0..63, w[1] bits 64..127;
// bits above the key width are zero. A single 32-bit field therefore sits in the low 32 bits of
// w[0], a 48-bit MAC in the low 48 bits of w[0].
struct MatchKey {
  uint64_t w[2] = {0, 0};
  friend bool operator==(const MatchKey&, const MatchKey&) = default;
};

constexpr MatchKey operator&(const MatchKey& a, const MatchKey& b) noexcept {
  return MatchKey{{a.w[0] & b.w[0], a.w[1] & b.w[1]}};
}
constexpr MatchKey operator|(const MatchKey& a, const MatchKey& b) noexcept {
  return MatchKey{{a.w[0] | b.w[0], a.w[1] | b.w[1]}};
}
constexpr MatchKey operator~(const MatchKey& a) noexcept { return MatchKey{{~a.w[0], ~a.w[1]}}; }

constexpr MatchKey ShiftLeft(const MatchKey& k, unsigned n) noexcept {
  if (n == 0) return k;
  if (n >= 128) return MatchKey{};
  if (n >= 64) return MatchKey{{0, k.w[0] << (n - 64)}};
  return MatchKey{{k.w[0] << n, (k.w[1] << n) | (k.w[0] >> (64 - n))}};
}
constexpr MatchKey ShiftRight(const MatchKey& k, unsigned n) noexcept {
  if (n == 0) return k;
  if (n >= 128) return MatchKey{};
  if (n >= 64) return MatchKey{{k.w[1] >> (n - 64), 0}};
  return MatchKey{{(k.w[0] >> n) | (k.w[1] << (64 - n)), k.w[1] >> n}};
}
// The low `bits` bits set (bits 0..128).
constexpr MatchKey LowBitsMask(unsigned bits) noexcept {
  if (bits >= 128) return MatchKey{{~uint64_t{0}, ~uint64_t{0}}};
  if (bits >= 64) return MatchKey{{~uint64_t{0}, bits == 64 ? 0 : ~uint64_t{0} >> (128 - bits)}};
  return MatchKey{{bits == 0 ? 0 : ~uint64_t{0} >> (64 - bits), 0}};
}
constexpr bool IsZero(const MatchKey& k) noexcept { return (k.w[0] | k.w[1]) == 0; }

// Builds a key field by field in declaration order: each Push shifts what is already packed left
// by the new field's width, so the first field ends up most significant. Values are truncated
// to the field width, as a header field of that width would be.
class KeyPacker {
 public:
  KeyPacker& Push(uint64_t value, unsigned bits) noexcept {
    key_ = ShiftLeft(key_, bits);
    key_.w[0] |= bits >= 64 ? value : value & ((uint64_t{1} << bits) - 1);
    return *this;
  }
  KeyPacker& Push(const MatchKey& value, unsigned bits) noexcept {
    key_ = ShiftLeft(key_, bits) | (value & LowBitsMask(bits));
    return *this;
  }
  const MatchKey& key() const noexcept { return key_; }

 private:
  MatchKey key_;
};

struct ActionCall {
  uint16_t action = 0;  // index into TableSpec::actions
  uint8_t num_params = 0;
  uint64_t params[kMaxActionParams] = {};
  friend bool operator==(const ActionCall&, const ActionCall&) = default;
};

// One table entry as the control plane gives it. Which parts count depends on the table kind:
// exact uses `key`; LPM uses `key` and `prefix_len`; ternary uses `key`, `mask` and `priority`
// (lower value wins, as in BMv2's simple_switch; see ternary_table.h).
struct TableEntry {
  MatchKey key;
  MatchKey mask;
  uint8_t prefix_len = 0;
  int32_t priority = 0;
  ActionCall action;
};

using EntryHandle = uint32_t;
inline constexpr EntryHandle kNoEntry = ~EntryHandle{0};

struct LookupResult {
  const ActionCall* action = nullptr;  // the entry's action on a hit, the default on a miss
  bool hit = false;
  EntryHandle handle = kNoEntry;  // kNoEntry on a miss
};

// Total key width in bits (the sum of the field widths).
unsigned KeyBits(const TableSpec& spec);
// Bit position of each field's least significant bit in the packed key.
std::vector<unsigned> FieldShifts(const TableSpec& spec);
// Checks everything the fast path relies on; the message names the table and the problem.
Status ValidateSpec(const TableSpec& spec);

}  // namespace swemu
