#include "pipeline/wire/frame_builder.h"

#include <algorithm>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

// Options are padded with zeros (End of Option List) to a multiple of 4, at most 40 bytes.
std::vector<uint8_t> PaddedOptions(std::span<const uint8_t> options) {
  std::vector<uint8_t> out(options.begin(),
                           options.begin() + std::min<std::size_t>(options.size(), 40));
  out.resize((out.size() + 3) / 4 * 4, 0);
  return out;
}

}  // namespace

FrameBuilder& FrameBuilder::Eth(const MacAddr& dst, const MacAddr& src) {
  eth_.dst_addr = dst;
  eth_.src_addr = src;
  return *this;
}

FrameBuilder& FrameBuilder::EtherType(uint16_t ether_type) {
  eth_.ether_type = ether_type;
  return *this;
}

FrameBuilder& FrameBuilder::Vlan(uint16_t tci, uint16_t tpid) {
  vlans_.emplace_back(tpid, tci);
  return *this;
}

FrameBuilder& FrameBuilder::Ipv4(Ipv4Addr src, Ipv4Addr dst) {
  has_ipv4_ = true;
  eth_.ether_type = kEtherTypeIpv4;
  ipv4_.src_addr = src;
  ipv4_.dst_addr = dst;
  return *this;
}

FrameBuilder& FrameBuilder::Tos(uint8_t tos) {
  ipv4_.tos = tos;
  return *this;
}

FrameBuilder& FrameBuilder::Ttl(uint8_t ttl) {
  ipv4_.ttl = ttl;
  return *this;
}

FrameBuilder& FrameBuilder::Identification(uint16_t id) {
  ipv4_.identification = id;
  return *this;
}

FrameBuilder& FrameBuilder::FlagsFragmentOffset(uint16_t value) {
  ipv4_.flags_fragment_offset = value;
  return *this;
}

FrameBuilder& FrameBuilder::Protocol(uint8_t protocol) {
  ipv4_.protocol = protocol;
  return *this;
}

FrameBuilder& FrameBuilder::Ipv4Options(std::span<const uint8_t> options) {
  ipv4_options_ = PaddedOptions(options);
  return *this;
}

FrameBuilder& FrameBuilder::Ipv6(const Ipv6Addr& src, const Ipv6Addr& dst) {
  has_ipv6_ = true;
  eth_.ether_type = kEtherTypeIpv6;
  ipv6_src_ = src;
  ipv6_dst_ = dst;
  return *this;
}

FrameBuilder& FrameBuilder::Ipv6Ext(uint8_t type, std::span<const uint8_t> header) {
  ipv6_ext_.emplace_back(type, std::vector<uint8_t>(header.begin(), header.end()));
  return *this;
}

FrameBuilder& FrameBuilder::Udp(uint16_t src_port, uint16_t dst_port) {
  l4_ = L4::kUdp;
  udp_.src_port = src_port;
  udp_.dst_port = dst_port;
  return *this;
}

FrameBuilder& FrameBuilder::NoUdpChecksum() {
  udp_checksum_ = false;
  return *this;
}

FrameBuilder& FrameBuilder::Tcp(uint16_t src_port, uint16_t dst_port, uint8_t flags,
                                uint32_t seq_num, uint32_t ack_num) {
  l4_ = L4::kTcp;
  tcp_.src_port = src_port;
  tcp_.dst_port = dst_port;
  tcp_.flags = flags;
  tcp_.seq_num = seq_num;
  tcp_.ack_num = ack_num;
  return *this;
}

FrameBuilder& FrameBuilder::TcpOptions(std::span<const uint8_t> options) {
  tcp_options_ = PaddedOptions(options);
  return *this;
}

FrameBuilder& FrameBuilder::Payload(std::span<const uint8_t> bytes) {
  payload_.insert(payload_.end(), bytes.begin(), bytes.end());
  return *this;
}

FrameBuilder& FrameBuilder::Payload(std::size_t len) {
  for (std::size_t i = 0; i < len; ++i) payload_.push_back(static_cast<uint8_t>(i * 7 + 1));
  return *this;
}

FrameBuilder& FrameBuilder::PadTo(std::size_t len) {
  pad_to_ = len;
  return *this;
}

std::vector<uint8_t> FrameBuilder::Build() const {
  std::vector<uint8_t> frame(kEthernetHeaderLen + vlans_.size() * kVlanTagLen);
  // Each TPID sits in the ether_type slot before its tag; the real type follows the last tag.
  EthernetFields eth = eth_;
  if (!vlans_.empty()) eth.ether_type = vlans_.front().first;
  eth.Encode(frame.data());
  for (std::size_t i = 0; i < vlans_.size(); ++i) {
    const uint16_t next = i + 1 < vlans_.size() ? vlans_[i + 1].first : eth_.ether_type;
    VlanFields{vlans_[i].second, next}.Encode(frame.data() + kEthernetHeaderLen + i * kVlanTagLen);
  }
  if (!has_ipv4_ && !has_ipv6_) {
    frame.insert(frame.end(), payload_.begin(), payload_.end());
    frame.resize(std::max(frame.size(), pad_to_), 0);
    return frame;
  }

  const std::size_t ip_at = frame.size();
  std::size_t ip_len = kIpv4MinHeaderLen + ipv4_options_.size();
  if (has_ipv6_) {
    ip_len = kIpv6HeaderLen;
    for (const auto& ext : ipv6_ext_) ip_len += ext.second.size();
  }
  std::size_t l4_len = 0;
  if (l4_ == L4::kUdp) l4_len = kUdpHeaderLen;
  if (l4_ == L4::kTcp) l4_len = kTcpMinHeaderLen + tcp_options_.size();
  const std::size_t l4_at = ip_at + ip_len;
  frame.resize(l4_at + l4_len);
  frame.insert(frame.end(), payload_.begin(), payload_.end());
  const std::size_t datagram_len = frame.size() - ip_at;
  const std::size_t segment_len = datagram_len - ip_len;

  if (has_ipv6_) {
    EncodeIpv6(frame.data() + ip_at, segment_len);
  } else {
    Ipv4Fields ip = ipv4_;
    ip.ihl = static_cast<uint8_t>(ip_len / 4);
    ip.total_length = static_cast<uint16_t>(datagram_len);
    if (l4_ == L4::kUdp) ip.protocol = kIpProtoUdp;
    if (l4_ == L4::kTcp) ip.protocol = kIpProtoTcp;
    ip.Encode(frame.data() + ip_at);
    std::copy(ipv4_options_.begin(), ipv4_options_.end(),
              frame.begin() + ip_at + kIpv4MinHeaderLen);
    auto* ip_hdr = HeaderAt<Ipv4Header>(frame.data() + ip_at);
    ip_hdr->SetHeaderChecksum(Ipv4HeaderChecksum(frame.data() + ip_at, ip_len));
  }
  EncodeL4(frame.data() + ip_at, frame.data() + l4_at, segment_len);
  frame.resize(std::max(frame.size(), pad_to_), 0);
  return frame;
}

void FrameBuilder::EncodeIpv6(uint8_t* ip, std::size_t segment_len) const {
  uint8_t upper = ipv4_.protocol;
  if (l4_ == L4::kUdp) upper = kIpProtoUdp;
  if (l4_ == L4::kTcp) upper = kIpProtoTcp;
  auto* h = HeaderAt<Ipv6Header>(ip);
  h->SetVersionClassFlow(6, ipv4_.tos, 0);
  h->next_header = ipv6_ext_.empty() ? upper : ipv6_ext_.front().first;
  h->hop_limit = ipv4_.ttl;
  h->SetSrcAddr(ipv6_src_);
  h->SetDstAddr(ipv6_dst_);
  uint8_t* at = ip + kIpv6HeaderLen;
  for (std::size_t i = 0; i < ipv6_ext_.size(); ++i) {
    const std::vector<uint8_t>& bytes = ipv6_ext_[i].second;
    std::copy(bytes.begin(), bytes.end(), at);
    if (!bytes.empty()) at[0] = i + 1 < ipv6_ext_.size() ? ipv6_ext_[i + 1].first : upper;
    at += bytes.size();
  }
  h->SetPayloadLength(static_cast<uint16_t>(at - ip - kIpv6HeaderLen + segment_len));
}

void FrameBuilder::EncodeL4(const uint8_t* ip, uint8_t* l4, std::size_t segment_len) const {
  if (l4_ == L4::kUdp) {
    UdpFields udp = udp_;
    udp.length = static_cast<uint16_t>(segment_len);
    udp.Encode(l4);
    if (udp_checksum_) {
      HeaderAt<UdpHeader>(l4)->SetChecksum(has_ipv6_ ? Udp6Checksum(ip, l4, segment_len)
                                                     : UdpChecksum(ip, l4, segment_len));
    }
  } else if (l4_ == L4::kTcp) {
    TcpFields tcp = tcp_;
    tcp.data_offset = static_cast<uint8_t>((kTcpMinHeaderLen + tcp_options_.size()) / 4);
    tcp.Encode(l4);
    std::copy(tcp_options_.begin(), tcp_options_.end(), l4 + kTcpMinHeaderLen);
    HeaderAt<TcpHeader>(l4)->SetChecksum(has_ipv6_ ? Tcp6Checksum(ip, l4, segment_len)
                                                   : TcpChecksum(ip, l4, segment_len));
  }
}

}  // namespace swemu
