#pragma once
// ATP frames as hosts build and read them: Ethernet | IPv4 | UDP | AtpHeader | elements.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "pipeline/wire/address.h"
#include "pipeline/wire/atp.h"

namespace swemu {

// The Ethernet + IPv4 + UDP headers of one job's frames in one direction, built once (lengths
// and the IPv4 checksum included; UDP checksum 0, "not computed", so switches that rewrite the
// ATP payload need not update it).
class AtpFrameTemplate {
 public:
  AtpFrameTemplate() = default;
  AtpFrameTemplate(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip, Ipv4Addr dst_ip,
                   uint16_t port, uint16_t elements, uint8_t tos);

  std::size_t frame_len() const { return frame_len_; }
  // Writes the headers at out (frame_len() bytes long); returns where the ATP header goes.
  uint8_t* Write(uint8_t* out) const noexcept {
    std::memcpy(out, headers_, kAtpHeaderOffset);
    return out + kAtpHeaderOffset;
  }

 private:
  uint8_t headers_[kAtpHeaderOffset] = {};
  std::size_t frame_len_ = 0;
};

struct AtpFrameView {
  const AtpHeader* header = nullptr;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  bool ce = false;  // the IPv4 ECN field says Congestion Experienced
};

// True for an untagged IPv4/UDP frame carrying an ATP header of our version whose elements
// (num_elements of them) are all inside the frame.
bool ParseAtpFrame(std::span<const uint8_t> frame, AtpFrameView* view) noexcept;

}  // namespace swemu
