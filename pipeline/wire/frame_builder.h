#pragma once
// Slow-path builder of well-formed frames for tests, tools and hosts:
//   FrameBuilder().Eth(dst, src).Vlan(100).Ipv4(src_ip, dst_ip).Tos(0x02).Udp(1000, 2000)
//       .Payload(18).Build();   (or .Ipv6(src6, dst6) in place of .Ipv4)
// Lengths and checksums are filled in by Build(). Layers may be left out from the top (an
// Ethernet-only frame with EtherType(kEtherTypeArp), an IPv4 packet with a raw protocol).
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pipeline/wire/address.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"

namespace swemu {

class FrameBuilder {
 public:
  FrameBuilder& Eth(const MacAddr& dst, const MacAddr& src);
  // The ethertype after the tags, for non-IPv4 frames (set by Ipv4() otherwise).
  FrameBuilder& EtherType(uint16_t ether_type);
  // Appends a tag after the previous ones. Any number is accepted, so tests can build frames
  // the parser must refuse.
  FrameBuilder& Vlan(uint16_t tci, uint16_t tpid = kEtherTypeVlan);

  FrameBuilder& Ipv4(Ipv4Addr src, Ipv4Addr dst);
  FrameBuilder& Tos(uint8_t tos);
  FrameBuilder& Ttl(uint8_t ttl);
  FrameBuilder& Identification(uint16_t id);
  FrameBuilder& FlagsFragmentOffset(uint16_t value);  // kIpv4FlagDf | kIpv4FlagMf | offset
  FrameBuilder& Protocol(uint8_t protocol);           // for IPv4 without UDP/TCP
  FrameBuilder& Ipv4Options(std::span<const uint8_t> options);  // padded to 4 bytes, <= 40
  // An IPv6 packet instead: Tos sets its traffic class, Ttl its hop limit, Protocol the upper
  // layer's next header (e.g. kIpProtoIcmpv6) when there is no UDP/TCP.
  FrameBuilder& Ipv6(const Ipv6Addr& src, const Ipv6Addr& dst);
  // Appends an extension header of type `type` (kIpProtoHopByHop, kIpProtoFragment, ...): its
  // bytes as given (a multiple of 8 for a well-formed one) but its first byte, the next header,
  // which Build() fills in. Not counted as the upper layer for the L4 checksum.
  FrameBuilder& Ipv6Ext(uint8_t type, std::span<const uint8_t> header);

  FrameBuilder& Udp(uint16_t src_port, uint16_t dst_port);
  FrameBuilder& NoUdpChecksum();  // leave the UDP checksum 0 ("not computed")
  FrameBuilder& Tcp(uint16_t src_port, uint16_t dst_port, uint8_t flags = kTcpAck,
                    uint32_t seq_num = 0, uint32_t ack_num = 0);
  FrameBuilder& TcpOptions(std::span<const uint8_t> options);  // padded to 4 bytes, <= 40

  FrameBuilder& Payload(std::span<const uint8_t> bytes);  // appends
  FrameBuilder& Payload(std::size_t len);                 // appends len pattern bytes
  // Pads the frame with zeros (after the IPv4 datagram) to at least len bytes, as Ethernet
  // pads to 60; the padding is not counted in IPv4/UDP lengths.
  FrameBuilder& PadTo(std::size_t len);

  std::vector<uint8_t> Build() const;

 private:
  enum class L4 { kNone, kUdp, kTcp };

  // Writes the L4 header of segment_len bytes at l4 with its checksum over the IP header at ip.
  void EncodeL4(const uint8_t* ip, uint8_t* l4, std::size_t segment_len) const;
  // The IPv6 header and its extension headers at ip, before the upper layer of segment_len.
  void EncodeIpv6(uint8_t* ip, std::size_t segment_len) const;

  EthernetFields eth_;
  std::vector<std::pair<uint16_t, uint16_t>> vlans_;  // (tpid, tci), outermost first
  bool has_ipv4_ = false;
  Ipv4Fields ipv4_;
  std::vector<uint8_t> ipv4_options_;
  bool has_ipv6_ = false;
  Ipv6Addr ipv6_src_;
  Ipv6Addr ipv6_dst_;
  std::vector<std::pair<uint8_t, std::vector<uint8_t>>> ipv6_ext_;  // (type, bytes)
  L4 l4_ = L4::kNone;
  UdpFields udp_;
  bool udp_checksum_ = true;
  TcpFields tcp_;
  std::vector<uint8_t> tcp_options_;
  std::vector<uint8_t> payload_;
  std::size_t pad_to_ = 0;
};

}  // namespace swemu
