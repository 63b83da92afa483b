#pragma once
// UDP header (RFC 768).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kUdpHeaderLen = 8;

struct __attribute__((packed)) UdpHeader {
  uint8_t src_port[2];
  uint8_t dst_port[2];
  uint8_t length[2];    // header + payload bytes
  uint8_t checksum[2];  // 0 = not computed (IPv4 only)

  uint16_t SrcPort() const noexcept { return LoadBe16(src_port); }
  uint16_t DstPort() const noexcept { return LoadBe16(dst_port); }
  uint16_t Length() const noexcept { return LoadBe16(length); }
  uint16_t Checksum() const noexcept { return LoadBe16(checksum); }
  void SetSrcPort(uint16_t v) noexcept { StoreBe16(src_port, v); }
  void SetDstPort(uint16_t v) noexcept { StoreBe16(dst_port, v); }
  void SetLength(uint16_t v) noexcept { StoreBe16(length, v); }
  void SetChecksum(uint16_t v) noexcept { StoreBe16(checksum, v); }
};
static_assert(sizeof(UdpHeader) == kUdpHeaderLen);

struct UdpFields {
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint16_t length = kUdpHeaderLen;
  uint16_t checksum = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<UdpHeader>(out);
    h->SetSrcPort(src_port);
    h->SetDstPort(dst_port);
    h->SetLength(length);
    h->SetChecksum(checksum);
  }
  static std::optional<UdpFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kUdpHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<UdpHeader>(in);
    return UdpFields{h->SrcPort(), h->DstPort(), h->Length(), h->Checksum()};
  }
  friend bool operator==(const UdpFields&, const UdpFields&) = default;
};

}  // namespace swemu
