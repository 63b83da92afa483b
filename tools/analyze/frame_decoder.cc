#include "tools/analyze/frame_decoder.h"

#include <algorithm>

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

constexpr std::size_t kSllHeaderLen = 16;   // Linux cooked capture v1: protocol at 14
constexpr std::size_t kSll2HeaderLen = 20;  // v2: protocol first, then ifindex, type, address
constexpr uint8_t kMaxVlanTags = 2;

}  // namespace

bool IsDecodableLinkType(int link_type) {
  return link_type == kLinkEthernet || link_type == kLinkRaw || link_type == kLinkRawAlt ||
         link_type == kLinkLinuxSll || link_type == kLinkLinuxSll2;
}

void FrameDecoder::Register(uint16_t udp_port, ProtocolAnalyzer* protocol) {
  ports_.push_back({udp_port, protocol, false});
}

void FrameDecoder::RegisterBothWays(uint16_t udp_port, ProtocolAnalyzer* protocol) {
  ports_.push_back({udp_port, protocol, true});
}

ProtocolAnalyzer* FrameDecoder::Lookup(uint16_t sport, uint16_t dport) const {
  for (const PortEntry& entry : ports_) {
    if (entry.port == dport) return entry.protocol;
  }
  for (const PortEntry& entry : ports_) {
    if (entry.both_ways && entry.port == sport) return entry.protocol;
  }
  return nullptr;
}

void FrameDecoder::Decode(int link_type, std::span<const uint8_t> bytes,
                          DecodedFrame& frame) const {
  switch (link_type) {
    case kLinkEthernet:
      DecodeEthernet(bytes, frame);
      return;
    case kLinkLinuxSll:
      DecodeSll(bytes, frame);
      return;
    case kLinkLinuxSll2:
      DecodeSll2(bytes, frame);
      return;
    case kLinkRaw:
    case kLinkRawAlt:
      if (!bytes.empty() && (bytes[0] >> 4) == 4) {
        frame.ether_type = kEtherTypeIpv4;
        DecodeIpv4(bytes, frame);
      } else if (!bytes.empty() && (bytes[0] >> 4) == 6) {
        frame.ether_type = kEtherTypeIpv6;  // not decoded further
      } else {
        frame.malformed = "raw_not_ip";
      }
      return;
    default:
      frame.malformed = "unknown_link_type";
  }
}

void FrameDecoder::DecodeEthernet(std::span<const uint8_t> bytes, DecodedFrame& frame) const {
  if (bytes.size() < kEthernetHeaderLen) {
    if (!frame.snapped()) frame.malformed = "truncated_ethernet";
    return;
  }
  const auto* eth = HeaderAt<EthernetHeader>(bytes.data());
  frame.has_eth = true;
  frame.eth_src = eth->SrcAddr();
  frame.eth_dst = eth->DstAddr();
  uint16_t type = eth->EtherType();
  std::size_t at = kEthernetHeaderLen;
  while (IsVlanTpid(type)) {
    if (bytes.size() < at + kVlanTagLen) {
      if (!frame.snapped()) frame.malformed = "truncated_vlan";
      return;
    }
    const auto* tag = HeaderAt<VlanTag>(bytes.data() + at);
    if (frame.vlan_tags == 0) frame.vlan_id = tag->Vid();
    if (++frame.vlan_tags > kMaxVlanTags) {
      frame.malformed = "too_many_vlan_tags";
      return;
    }
    type = tag->EtherType();
    at += kVlanTagLen;
  }
  DecodeL3(type, bytes.subspan(at), frame);
}

void FrameDecoder::DecodeSll(std::span<const uint8_t> bytes, DecodedFrame& frame) const {
  if (bytes.size() < kSllHeaderLen) {
    if (!frame.snapped()) frame.malformed = "truncated_sll";
    return;
  }
  DecodeL3(LoadBe16(bytes.data() + 14), bytes.subspan(kSllHeaderLen), frame);
}

void FrameDecoder::DecodeSll2(std::span<const uint8_t> bytes, DecodedFrame& frame) const {
  if (bytes.size() < kSll2HeaderLen) {
    if (!frame.snapped()) frame.malformed = "truncated_sll2";
    return;
  }
  DecodeL3(LoadBe16(bytes.data()), bytes.subspan(kSll2HeaderLen), frame);
}

void FrameDecoder::DecodeL3(uint16_t ether_type, std::span<const uint8_t> bytes,
                            DecodedFrame& frame) const {
  frame.ether_type = ether_type;
  if (ether_type == kEtherTypeIpv4) DecodeIpv4(bytes, frame);
}

void FrameDecoder::DecodeIpv4(std::span<const uint8_t> bytes, DecodedFrame& frame) const {
  // Bytes of this layer on the wire (the capture may hold fewer).
  const std::size_t wire_left = bytes.size() + (frame.len - std::min(frame.len, frame.caplen));
  if (bytes.size() < kIpv4MinHeaderLen) {
    if (!frame.snapped()) frame.malformed = "truncated_ipv4";
    return;
  }
  const auto* ip = HeaderAt<Ipv4Header>(bytes.data());
  if (ip->Version() != 4) {
    frame.malformed = "ipv4_bad_version";
    return;
  }
  frame.has_ipv4 = true;
  frame.ip_src = ip->SrcAddr();
  frame.ip_dst = ip->DstAddr();
  frame.tos = ip->tos;
  frame.ip_proto = ip->protocol;
  frame.ip_id = ip->Identification();
  frame.ip_fragment = ip->IsFragment();
  const std::size_t header_len = ip->HeaderLen();
  if (header_len < kIpv4MinHeaderLen) {
    frame.malformed = "ipv4_bad_ihl";
    return;
  }
  if (ip->TotalLength() < header_len || ip->TotalLength() > wire_left) {
    frame.malformed = "ipv4_bad_total_length";
    return;
  }
  if (bytes.size() < header_len) {
    if (!frame.snapped()) frame.malformed = "truncated_ipv4";
    return;
  }
  if (ip->FragmentOffset() != 0) return;  // no transport header in a later fragment
  // The datagram as captured: up to its total length (Ethernet padding is not payload).
  const std::span<const uint8_t> l4 =
      bytes.subspan(header_len, std::min<std::size_t>(bytes.size(), ip->TotalLength()) - header_len);
  const std::size_t l4_wire = ip->TotalLength() - header_len;
  if (frame.ip_proto == kIpProtoUdp) {
    if (l4.size() < kUdpHeaderLen) {
      if (!frame.snapped()) frame.malformed = "truncated_udp";
      return;
    }
    const auto* udp = HeaderAt<UdpHeader>(l4.data());
    frame.has_l4 = true;
    frame.sport = udp->SrcPort();
    frame.dport = udp->DstPort();
    if (!frame.ip_fragment && (udp->Length() < kUdpHeaderLen || udp->Length() > l4_wire)) {
      frame.malformed = "udp_bad_length";
      return;
    }
    frame.l4_payload_len = static_cast<uint32_t>(
        (frame.ip_fragment ? l4_wire : udp->Length()) - kUdpHeaderLen);
    frame.app = l4.data() + kUdpHeaderLen;
    frame.app_len = std::min<std::size_t>(l4.size() - kUdpHeaderLen, frame.l4_payload_len);
    if (frame.ip_fragment) return;  // a program header is read from whole datagrams only
    frame.protocol = Lookup(frame.sport, frame.dport);
  } else if (frame.ip_proto == kIpProtoTcp) {
    if (l4.size() < kTcpMinHeaderLen) {
      if (!frame.snapped()) frame.malformed = "truncated_tcp";
      return;
    }
    const auto* tcp = HeaderAt<TcpHeader>(l4.data());
    frame.has_l4 = true;
    frame.has_tcp = true;
    frame.sport = tcp->SrcPort();
    frame.dport = tcp->DstPort();
    frame.tcp_seq = tcp->SeqNum();
    frame.tcp_flags = tcp->flags;
    if (tcp->HeaderLen() < kTcpMinHeaderLen || tcp->HeaderLen() > l4_wire) {
      frame.malformed = "tcp_bad_data_offset";
      return;
    }
    frame.l4_payload_len = static_cast<uint32_t>(l4_wire - tcp->HeaderLen());
  }
}

}  // namespace swemu
