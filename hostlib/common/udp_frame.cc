#include "hostlib/common/udp_frame.h"

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {

UdpFrameTemplate::UdpFrameTemplate(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4Addr src_ip,
                                   Ipv4Addr dst_ip, uint16_t port, std::size_t payload_len,
                                   uint8_t tos)
    : frame_len_(kUdpPayloadOffset + payload_len) {
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
  UdpFields{port, port, static_cast<uint16_t>(kUdpHeaderLen + payload_len), 0}.Encode(
      ip_at + kIpv4MinHeaderLen);
}

bool ParseUdpFrame(std::span<const uint8_t> frame, std::size_t min_payload,
                   UdpFrameView* view) noexcept {
  const uint8_t* p = frame.data();
  if (frame.size() < kUdpPayloadOffset ||
      HeaderAt<EthernetHeader>(p)->EtherType() != kEtherTypeIpv4) {
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(p + kEthernetHeaderLen);
  const std::size_t udp_at = kEthernetHeaderLen + ip->HeaderLen();
  const std::size_t payload_at = udp_at + kUdpHeaderLen;
  if (ip->Version() != 4 || ip->protocol != kIpProtoUdp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      ip->IsFragment() || payload_at + min_payload > frame.size()) {
    return false;
  }
  const auto* udp = HeaderAt<UdpHeader>(p + udp_at);
  view->payload = frame.subspan(payload_at);
  view->src_ip = ip->SrcAddr();
  view->src_port = udp->SrcPort();
  view->dst_port = udp->DstPort();
  view->ce = ip->Ecn() == kEcnCe;
  return true;
}

}  // namespace swemu
