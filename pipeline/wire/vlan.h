#pragma once
// 802.1Q tag. As in P4 programs, the tag "header" is the 4 bytes after the TPID: the TCI and the
// next ethertype. The TPID itself (0x8100, or 0x88A8 for an outer 802.1ad tag) is the
// ether_type of the header before it.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"

namespace swemu {

inline constexpr std::size_t kVlanTagLen = 4;

// TCI = PCP (3 bits) | DEI (1 bit) | VID (12 bits).
constexpr uint16_t MakeVlanTci(uint8_t pcp, bool dei, uint16_t vid) noexcept {
  return static_cast<uint16_t>(((pcp & 0x7) << 13) | (dei ? 1 << 12 : 0) | (vid & 0x0FFF));
}
constexpr bool IsVlanTpid(uint16_t ether_type) noexcept {
  return ether_type == kEtherTypeVlan || ether_type == kEtherTypeQinQ;
}

struct __attribute__((packed)) VlanTag {
  uint8_t tci[2];
  uint8_t ether_type[2];

  uint16_t Tci() const noexcept { return LoadBe16(tci); }
  uint8_t Pcp() const noexcept { return tci[0] >> 5; }
  bool Dei() const noexcept { return (tci[0] & 0x10) != 0; }
  uint16_t Vid() const noexcept { return Tci() & 0x0FFF; }
  uint16_t EtherType() const noexcept { return LoadBe16(ether_type); }
  void SetTci(uint16_t value) noexcept { StoreBe16(tci, value); }
  void SetEtherType(uint16_t type) noexcept { StoreBe16(ether_type, type); }
};
static_assert(sizeof(VlanTag) == kVlanTagLen);

struct VlanFields {
  uint16_t tci = 0;
  uint16_t ether_type = kEtherTypeIpv4;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<VlanTag>(out);
    h->SetTci(tci);
    h->SetEtherType(ether_type);
  }
  static std::optional<VlanFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kVlanTagLen) return std::nullopt;
    const auto* h = HeaderAt<VlanTag>(in);
    return VlanFields{h->Tci(), h->EtherType()};
  }
  friend bool operator==(const VlanFields&, const VlanFields&) = default;
};

}  // namespace swemu
