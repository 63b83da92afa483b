#include "hostlib/atp/atp_frame.h"

namespace swemu {

bool ParseAtpFrame(std::span<const uint8_t> frame, AtpFrameView* view) noexcept {
  UdpFrameView udp;
  if (!ParseUdpFrame(frame, kAtpHeaderLen, &udp)) return false;
  const auto* atp = HeaderAt<AtpHeader>(udp.payload.data());
  if (atp->Version() != kAtpVersion || AtpPayloadLen(atp->NumElements()) > udp.payload.size()) {
    return false;
  }
  view->header = atp;
  view->src_port = udp.src_port;
  view->dst_port = udp.dst_port;
  view->ce = udp.ce;
  return true;
}

}  // namespace swemu
