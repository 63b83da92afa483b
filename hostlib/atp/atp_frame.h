#pragma once
// ATP frames as hosts build and read them: Ethernet | IPv4 | UDP | AtpHeader | elements
// (hostlib/common/udp_frame.h with the ATP header at the start of the payload).
#include <cstddef>
#include <cstdint>
#include <span>

#include "hostlib/common/udp_frame.h"
#include "pipeline/wire/atp.h"

namespace swemu {

static_assert(kAtpHeaderOffset == kUdpPayloadOffset);

// The headers of one job's ATP frames in one direction, of `elements` elements each.
class AtpFrameTemplate : public UdpFrameTemplate {
 public:
  AtpFrameTemplate() = default;
  AtpFrameTemplate(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip, Ipv4Addr dst_ip,
                   uint16_t port, uint16_t elements, uint8_t tos)
      : UdpFrameTemplate(src_mac, dst_mac, src_ip, dst_ip, port, AtpPayloadLen(elements), tos) {}
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

// The frame is of a job on UDP `port`, in either direction: kernel sockets on one address need
// different local ports, so only one of the two may be the job's.
inline bool AtpFrameOnPort(const AtpFrameView& view, uint16_t port) noexcept {
  return view.dst_port == port || view.src_port == port;
}

}  // namespace swemu
