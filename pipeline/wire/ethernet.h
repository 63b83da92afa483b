#pragma once
// Ethernet II header (no FCS: swemu frames never carry it).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "pipeline/wire/address.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeArp = 0x0806;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;  // 802.1Q C-tag TPID
inline constexpr uint16_t kEtherTypeQinQ = 0x88A8;  // 802.1ad S-tag TPID
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;

inline constexpr std::size_t kEthernetHeaderLen = 14;
inline constexpr std::size_t kEthernetMinFrameLen = 60;  // without FCS; shorter frames are padded

// Wire layout; multi-byte fields are big-endian byte arrays, read them with the accessors.
struct __attribute__((packed)) EthernetHeader {
  uint8_t dst_addr[6];
  uint8_t src_addr[6];
  uint8_t ether_type[2];

  MacAddr DstAddr() const noexcept { return Mac(dst_addr); }
  MacAddr SrcAddr() const noexcept { return Mac(src_addr); }
  uint16_t EtherType() const noexcept { return LoadBe16(ether_type); }
  void SetDstAddr(const MacAddr& mac) noexcept { std::memcpy(dst_addr, mac.bytes.data(), 6); }
  void SetSrcAddr(const MacAddr& mac) noexcept { std::memcpy(src_addr, mac.bytes.data(), 6); }
  void SetEtherType(uint16_t type) noexcept { StoreBe16(ether_type, type); }

 private:
  static MacAddr Mac(const uint8_t* p) noexcept {
    MacAddr mac;
    std::memcpy(mac.bytes.data(), p, 6);
    return mac;
  }
};
static_assert(sizeof(EthernetHeader) == kEthernetHeaderLen);

// Host-order form.
struct EthernetFields {
  MacAddr dst_addr;
  MacAddr src_addr;
  uint16_t ether_type = kEtherTypeIpv4;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<EthernetHeader>(out);
    h->SetDstAddr(dst_addr);
    h->SetSrcAddr(src_addr);
    h->SetEtherType(ether_type);
  }
  static std::optional<EthernetFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kEthernetHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<EthernetHeader>(in);
    return EthernetFields{h->DstAddr(), h->SrcAddr(), h->EtherType()};
  }
  friend bool operator==(const EthernetFields&, const EthernetFields&) = default;
};

}  // namespace swemu
