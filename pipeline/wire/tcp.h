#pragma once
// TCP header (RFC 9293), fixed part; options follow up to data offset * 4 bytes.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kTcpMinHeaderLen = 20;  // data offset 5
inline constexpr std::size_t kTcpMaxHeaderLen = 60;  // data offset 15

// Bits of TcpHeader::flags.
inline constexpr uint8_t kTcpFin = 0x01;
inline constexpr uint8_t kTcpSyn = 0x02;
inline constexpr uint8_t kTcpRst = 0x04;
inline constexpr uint8_t kTcpPsh = 0x08;
inline constexpr uint8_t kTcpAck = 0x10;
inline constexpr uint8_t kTcpUrg = 0x20;
inline constexpr uint8_t kTcpEce = 0x40;
inline constexpr uint8_t kTcpCwr = 0x80;

struct __attribute__((packed)) TcpHeader {
  uint8_t src_port[2];
  uint8_t dst_port[2];
  uint8_t seq_num[4];
  uint8_t ack_num[4];
  uint8_t data_offset;  // header length in 32-bit words (high nibble) | reserved (low nibble)
  uint8_t flags;        // CWR ECE URG ACK PSH RST SYN FIN
  uint8_t window[2];
  uint8_t checksum[2];
  uint8_t urgent_ptr[2];

  uint16_t SrcPort() const noexcept { return LoadBe16(src_port); }
  uint16_t DstPort() const noexcept { return LoadBe16(dst_port); }
  uint32_t SeqNum() const noexcept { return LoadBe32(seq_num); }
  uint32_t AckNum() const noexcept { return LoadBe32(ack_num); }
  uint8_t DataOffset() const noexcept { return data_offset >> 4; }
  uint16_t HeaderLen() const noexcept { return static_cast<uint16_t>(DataOffset() * 4); }
  uint16_t Window() const noexcept { return LoadBe16(window); }
  uint16_t Checksum() const noexcept { return LoadBe16(checksum); }
  uint16_t UrgentPtr() const noexcept { return LoadBe16(urgent_ptr); }
  void SetSrcPort(uint16_t v) noexcept { StoreBe16(src_port, v); }
  void SetDstPort(uint16_t v) noexcept { StoreBe16(dst_port, v); }
  void SetSeqNum(uint32_t v) noexcept { StoreBe32(seq_num, v); }
  void SetAckNum(uint32_t v) noexcept { StoreBe32(ack_num, v); }
  void SetDataOffset(uint8_t words) noexcept {
    data_offset = static_cast<uint8_t>((words << 4) | (data_offset & 0x0F));
  }
  void SetWindow(uint16_t v) noexcept { StoreBe16(window, v); }
  void SetChecksum(uint16_t v) noexcept { StoreBe16(checksum, v); }
  void SetUrgentPtr(uint16_t v) noexcept { StoreBe16(urgent_ptr, v); }
};
static_assert(sizeof(TcpHeader) == kTcpMinHeaderLen);

struct TcpFields {
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint32_t seq_num = 0;
  uint32_t ack_num = 0;
  uint8_t data_offset = 5;  // in 32-bit words
  uint8_t flags = 0;
  uint16_t window = 65535;
  uint16_t checksum = 0;
  uint16_t urgent_ptr = 0;

  void Encode(uint8_t* out) const noexcept {
    auto* h = HeaderAt<TcpHeader>(out);
    h->SetSrcPort(src_port);
    h->SetDstPort(dst_port);
    h->SetSeqNum(seq_num);
    h->SetAckNum(ack_num);
    h->data_offset = static_cast<uint8_t>(data_offset << 4);
    h->flags = flags;
    h->SetWindow(window);
    h->SetChecksum(checksum);
    h->SetUrgentPtr(urgent_ptr);
  }
  static std::optional<TcpFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kTcpMinHeaderLen) return std::nullopt;
    const auto* h = HeaderAt<TcpHeader>(in);
    return TcpFields{h->SrcPort(), h->DstPort(), h->SeqNum(),   h->AckNum(),   h->DataOffset(),
                     h->flags,     h->Window(),  h->Checksum(), h->UrgentPtr()};
  }
  friend bool operator==(const TcpFields&, const TcpFields&) = default;
};

}  // namespace swemu
