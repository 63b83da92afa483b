#include "hostlib/atp/atp_frame.h"

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {

AtpFrameTemplate::AtpFrameTemplate(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip,
                                   Ipv4Addr dst_ip, uint16_t port, uint16_t elements, uint8_t tos)
    : frame_len_(AtpFrameLen(elements)) {
  EthernetFields{dst_mac, src_mac, kEtherTypeIpv4}.Encode(headers_);
  Ipv4Fields ip;
  ip.tos = tos;
  ip.total_length = static_cast<uint16_t>(frame_len_ - kEthernetHeaderLen);
  ip.flags_fragment_offset = kIpv4FlagDf;
  ip.protocol = kIpProtoUdp;
  ip.src_addr = src_ip;
  ip.dst_addr = dst_ip;
  uint8_t* ip_at = headers_ + kEthernetHeaderLen;
  ip.Encode(ip_at);
  HeaderAt<Ipv4Header>(ip_at)->SetHeaderChecksum(Ipv4HeaderChecksum(ip_at, kIpv4MinHeaderLen));
  UdpFields{port, port, static_cast<uint16_t>(kUdpHeaderLen + AtpPayloadLen(elements)), 0}.Encode(
      ip_at + kIpv4MinHeaderLen);
}

bool ParseAtpFrame(std::span<const uint8_t> frame, AtpFrameView* view) noexcept {
  const uint8_t* p = frame.data();
  if (frame.size() < kAtpHeaderOffset + kAtpHeaderLen ||
      HeaderAt<EthernetHeader>(p)->EtherType() != kEtherTypeIpv4) {
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(p + kEthernetHeaderLen);
  const std::size_t udp_at = kEthernetHeaderLen + ip->HeaderLen();
  const std::size_t atp_at = udp_at + kUdpHeaderLen;
  if (ip->Version() != 4 || ip->protocol != kIpProtoUdp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      ip->IsFragment() || atp_at + kAtpHeaderLen > frame.size()) {
    return false;
  }
  const auto* atp = HeaderAt<AtpHeader>(p + atp_at);
  if (atp->Version() != kAtpVersion || atp_at + AtpPayloadLen(atp->NumElements()) > frame.size()) {
    return false;
  }
  const auto* udp = HeaderAt<UdpHeader>(p + udp_at);
  view->header = atp;
  view->src_port = udp->SrcPort();
  view->dst_port = udp->DstPort();
  view->ce = ip->Ecn() == kEcnCe;
  return true;
}

}  // namespace swemu
