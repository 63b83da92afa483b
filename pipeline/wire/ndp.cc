#include "pipeline/wire/ndp.h"

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv6.h"

namespace swemu {

std::size_t NdFields::Encode(uint8_t* icmp) const noexcept {
  icmp[0] = type;
  icmp[1] = 0;
  StoreBe16(icmp + 2, 0);
  StoreBe32(icmp + 4, type == kNdNeighborAdvert ? flags : 0);
  target.ToBytes(icmp + 8);
  if (link_mac == 0) return kNdHeaderLen;
  uint8_t* opt = icmp + kNdHeaderLen;
  opt[0] = type == kNdNeighborAdvert ? kNdOptTargetLinkAddr : kNdOptSourceLinkAddr;
  opt[1] = 1;  // in units of 8 bytes
  StoreBe48(opt + 2, link_mac);
  return kNdMaxLen;
}

std::optional<NdFields> NdFields::Decode(const uint8_t* icmp, std::size_t len) noexcept {
  if (len < kNdHeaderLen || icmp[1] != 0) return std::nullopt;
  if (icmp[0] != kNdNeighborSolicit && icmp[0] != kNdNeighborAdvert) return std::nullopt;
  NdFields nd;
  nd.type = icmp[0];
  nd.flags = nd.type == kNdNeighborAdvert ? LoadBe32(icmp + 4) & 0xE000'0000 : 0;
  nd.target = Ipv6Addr::FromBytes(icmp + 8);
  if ((nd.target.hi >> 56) == 0xFF) return std::nullopt;  // multicast
  const uint8_t wanted = nd.type == kNdNeighborAdvert ? kNdOptTargetLinkAddr : kNdOptSourceLinkAddr;
  for (std::size_t at = kNdHeaderLen; at < len;) {
    if (len - at < 2 || icmp[at + 1] == 0) return std::nullopt;
    const std::size_t opt_len = std::size_t{icmp[at + 1]} * 8;
    if (opt_len > len - at) return std::nullopt;
    if (icmp[at] == wanted && nd.link_mac == 0) {
      nd.link_mac = LoadBe48(icmp + at + 2);
    }
    at += opt_len;
  }
  return nd;
}

std::size_t WriteNdPacket(uint8_t* ip6, const Ipv6Addr& src, const Ipv6Addr& dst,
                          const NdFields& nd) noexcept {
  auto* h = HeaderAt<Ipv6Header>(ip6);
  uint8_t* icmp = ip6 + kIpv6HeaderLen;
  const std::size_t len = nd.Encode(icmp);
  h->SetVersionClassFlow(6, 0, 0);
  h->SetPayloadLength(static_cast<uint16_t>(len));
  h->next_header = kIpProtoIcmpv6;
  h->hop_limit = kNdHopLimit;
  h->SetSrcAddr(src);
  h->SetDstAddr(dst);
  StoreBe16(icmp + 2, Icmpv6Checksum(ip6, icmp, len));
  return kIpv6HeaderLen + len;
}

}  // namespace swemu
