#pragma once
// UDP frames as hosts build and read them: Ethernet | IPv4 (no options on send) | UDP | payload.
// The protocols' frames (ATP, GOAT) are this with their header at the start of the payload.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "pipeline/wire/address.h"

namespace swemu {

// Ethernet 14 + IPv4 20 + UDP 8: where the payload starts in a frame a host builds.
inline constexpr std::size_t kUdpPayloadOffset = 14 + 20 + 8;

// The Ethernet + IPv4 + UDP headers of one flow's frames of one payload length, built once
// (lengths and the IPv4 checksum included; UDP checksum 0, "not computed", so switches that
// rewrite the payload need not update it). Source and destination port are both `port`.
class UdpFrameTemplate {
 public:
  UdpFrameTemplate() = default;
  UdpFrameTemplate(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip, Ipv4Addr dst_ip,
                   uint16_t port, std::size_t payload_len, uint8_t tos);

  std::size_t frame_len() const { return frame_len_; }
  // Writes the headers at out (frame_len() bytes long); returns where the payload goes.
  uint8_t* Write(uint8_t* out) const noexcept {
    std::memcpy(out, headers_, kUdpPayloadOffset);
    return out + kUdpPayloadOffset;
  }

 private:
  uint8_t headers_[kUdpPayloadOffset] = {};
  std::size_t frame_len_ = 0;
};

struct UdpFrameView {
  std::span<const uint8_t> payload;  // up to the end of the frame (not the UDP length)
  Ipv4Addr src_ip = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  bool ce = false;  // the IPv4 ECN field says Congestion Experienced
};

// True for an untagged, unfragmented IPv4/UDP frame with at least min_payload payload bytes.
bool ParseUdpFrame(std::span<const uint8_t> frame, std::size_t min_payload,
                   UdpFrameView* view) noexcept;

}  // namespace swemu
