#pragma once
// ARP for IPv4 over Ethernet (RFC 826): hardware type 1, protocol type 0x0800, 6-byte hardware
// and 4-byte protocol addresses, 28 bytes after the Ethernet header.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kArpLen = 28;
inline constexpr uint16_t kArpRequest = 1;
inline constexpr uint16_t kArpReply = 2;

struct __attribute__((packed)) ArpHeader {
  uint8_t htype[2];
  uint8_t ptype[2];
  uint8_t hlen;
  uint8_t plen;
  uint8_t oper[2];
  uint8_t sha[6];  // sender hardware address
  uint8_t spa[4];  // sender protocol address
  uint8_t tha[6];  // target hardware address
  uint8_t tpa[4];  // target protocol address

  // Ethernet/IPv4 ARP, the only kind swemu reads.
  bool IsEthernetIpv4() const noexcept {
    return LoadBe16(htype) == 1 && LoadBe16(ptype) == 0x0800 && hlen == 6 && plen == 4;
  }
  uint16_t Oper() const noexcept { return LoadBe16(oper); }
  uint32_t SenderIp() const noexcept { return LoadBe32(spa); }
  uint32_t TargetIp() const noexcept { return LoadBe32(tpa); }
};
static_assert(sizeof(ArpHeader) == kArpLen);

// Host-order fields; MACs in the low 48 bits.
struct ArpFields {
  uint16_t oper = kArpRequest;
  uint64_t sender_mac = 0;
  uint32_t sender_ip = 0;
  uint64_t target_mac = 0;
  uint32_t target_ip = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<ArpHeader>(out);
    StoreBe16(h->htype, 1);
    StoreBe16(h->ptype, 0x0800);
    h->hlen = 6;
    h->plen = 4;
    StoreBe16(h->oper, oper);
    StoreMac48(h->sha, sender_mac);
    StoreBe32(h->spa, sender_ip);
    StoreMac48(h->tha, target_mac);
    StoreBe32(h->tpa, target_ip);
  }
  // Ethernet/IPv4 ARP only.
  static std::optional<ArpFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kArpLen) return std::nullopt;
    const auto* h = HeaderAt<ArpHeader>(in);
    if (!h->IsEthernetIpv4()) return std::nullopt;
    return ArpFields{h->Oper(), LoadMac48(h->sha), h->SenderIp(), LoadMac48(h->tha),
                     h->TargetIp()};
  }
  friend bool operator==(const ArpFields&, const ArpFields&) = default;

 private:
  static uint64_t LoadMac48(const uint8_t* p) noexcept {
    return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2);
  }
  static void StoreMac48(uint8_t* p, uint64_t mac) noexcept {
    StoreBe16(p, static_cast<uint16_t>(mac >> 32));
    StoreBe32(p + 2, static_cast<uint32_t>(mac));
  }
};

}  // namespace swemu
