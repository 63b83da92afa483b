// l2l3's IPv6 neighbour discovery (RFC 4861) and ICMPv6 echo for its router interfaces: a
// solicitation for a gateway (global or link-local) is answered with an advertisement (router,
// solicited, override, target link-layer address) and tells where its sender is; an
// advertisement answers the solicitations the neighbour table asks for; echo to a gateway is
// answered. Both answers turn the frame round in place (its VLAN tags kept) and leave by the
// port it came in on: a link-local sender cannot be routed to. Its fast-path piece is the ND
// trap, nd_trap's lookup for bridged solicitations.
#include "pipeline/programs/l2l3_neighbour.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/ndp.h"

namespace swemu {
namespace {

const DropReason kNdNotForCpu = RegisterDropReason("cpu_not_handled");

// The ICMPv6 message of an IPv6 packet whose upper layer is ICMPv6 and its length (to the end
// of the IPv6 payload); nullptr otherwise.
uint8_t* Icmpv6Of(Packet& pkt, std::size_t* len) {
  const ParsedHeaders& h = pkt.hdr;
  if (!h.has_ipv6() || h.ip_proto != kIpProtoIcmpv6 || h.payload == kHeaderAbsent) return nullptr;
  const auto* ip6 = HeaderAt<Ipv6Header>(pkt.data + h.ipv6);
  const std::size_t end = h.ipv6 + kIpv6HeaderLen + ip6->PayloadLength();
  if (end > pkt.len || end < h.payload + 4u) return nullptr;
  *len = end - h.payload;
  return pkt.data + h.payload;
}

}  // namespace

// Neighbour solicitations among bridged packets (multicast to the solicited-node group).
uint32_t TrapNd(MatchTable& nd_trap, Packet** pkts, uint32_t n) noexcept {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const ParsedHeaders& h = pkt.hdr;
    if (h.has_ipv6() && h.ip_proto == kIpProtoIcmpv6 && h.payload != kHeaderAbsent &&
        pkt.len >= h.payload + kNdHeaderLen && pkt.data[h.payload] == kNdNeighborSolicit) {
      const Ipv6Addr target = Ipv6Addr::FromBytes(pkt.data + h.payload + 8);
      LookupResult r = nd_trap.Lookup(KeyPacker().Push(target.hi, 64).Push(target.lo, 64).key());
      if (r.hit && r.action->action == 0) {
        PuntToCpu(pkt, kPuntNd);
        continue;
      }
    }
    pkts[kept++] = pkts[i];
  }
  return kept;
}

void L2l3Neighbours::OnNd(Packet* pkt, TimeNs now) {
  std::size_t len = 0;
  const uint8_t* icmp = Icmpv6Of(*pkt, &len);
  uint8_t* ip6 = pkt->data + pkt->hdr.ipv6;
  auto* h = HeaderAt<Ipv6Header>(ip6);
  const std::optional<NdFields> nd =
      icmp != nullptr && h->hop_limit == kNdHopLimit ? NdFields::Decode(icmp, len) : std::nullopt;
  const PortId port = pkt->meta.ingress_port;
  const int rif = RifOfPort(port);
  if (!nd || rif < 0) return cpu_.Drop(pkt, kNdNotForCpu);
  const RouterInterface& r = rifs_[rif];
  const uint64_t mac = nd->link_mac != 0 ? nd->link_mac : LoadBe48(pkt->data + pkt->hdr.eth + 6);
  std::vector<NeighbourEvent> events;
  if (nd->type == kNdNeighborAdvert) {  // an answer to a solicitation of ours
    // RFC 4861 7.2.5: without the override flag it does not replace a resolved entry's MAC.
    const Neighbour* known = table_.Find(nd->target);
    const bool keep = known != nullptr && known->mac != 0 && known->mac != mac &&
                      (nd->flags & kNaOverride) == 0;
    if (r.Contains6(nd->target) && nd->target != r.ipv6 && !keep) {
      table_.Confirm(nd->target, static_cast<uint32_t>(rif), mac, port, now, false, &events);
      Apply(events);
    }
    return cpu_.Free(pkt);
  }
  const Ipv6Addr src = h->SrcAddr();
  if ((nd->target != r.ipv6 || !r.HasIpv6()) && nd->target != r.LinkLocal()) {
    return cpu_.Drop(pkt, kNdNotForCpu);
  }
  if (!r.HasIpv6() || src == Ipv6Addr{}) return cpu_.Free(pkt);  // DAD: not defended
  if (r.Contains6(src) && src != r.ipv6) {
    table_.Confirm(src, static_cast<uint32_t>(rif), mac, port, now, true, &events);
    Apply(events);
  }
  // A multicast solicitation carries its source's address, so the answer carries ours; one to
  // our own address may leave it out (RFC 4861 4.4), and then the frame has no room for it.
  const NdFields na{kNdNeighborAdvert, kNaRouter | kNaSolicited | kNaOverride, nd->target,
                    len >= kNdMaxLen ? r.mac : 0};
  pkt->len = pkt->hdr.ipv6 + static_cast<uint32_t>(WriteNdPacket(ip6, nd->target, src, na));
  StoreBe48(pkt->data + pkt->hdr.eth, mac);
  StoreBe48(pkt->data + pkt->hdr.eth + 6, r.mac);
  ++stats_.nd_adverts_sent;
  cpu_.PacketOut(pkt, port, 0);
}

// Packets to a gateway address (ipv6_lpm's to_cpu): unicast ND, or echo.
void L2l3Neighbours::OnLocal6(Packet* pkt, TimeNs now) {
  std::size_t len = 0;
  uint8_t* icmp = Icmpv6Of(*pkt, &len);
  if (icmp != nullptr && (icmp[0] == kNdNeighborSolicit || icmp[0] == kNdNeighborAdvert)) {
    return OnNd(pkt, now);
  }
  const int rif = RifOfPort(pkt->meta.ingress_port);
  if (icmp == nullptr || icmp[0] != kIcmpv6EchoRequest || icmp[1] != 0 || rif < 0) {
    return cpu_.Drop(pkt, kNdNotForCpu);
  }
  uint8_t* ip6 = pkt->data + pkt->hdr.ipv6;
  auto* h = HeaderAt<Ipv6Header>(ip6);
  const Ipv6Addr src = h->SrcAddr();
  h->SetSrcAddr(h->DstAddr());
  h->SetDstAddr(src);
  h->hop_limit = 64;
  icmp[0] = kIcmpv6EchoReply;
  StoreBe16(icmp + 2, Icmpv6Checksum(ip6, icmp, len));
  uint8_t* eth = pkt->data + pkt->hdr.eth;
  StoreBe48(eth, LoadBe48(eth + 6));
  StoreBe48(eth + 6, rifs_[rif].mac);
  ++stats_.echo6_replies_sent;
  cpu_.PacketOut(pkt, pkt->meta.ingress_port, 0);
}

// To the solicited-node group out of every port of the subnet, or a re-probe to where the
// neighbour was; from the gateway's global address, so the answer comes back routed to it.
void L2l3Neighbours::SendSolicitation(const NeighbourEvent& e) {
  const RouterInterface& rif = rifs_[e.rif];
  uint8_t frame[kEthernetHeaderLen + kIpv6HeaderLen + kNdMaxLen] = {};
  const Ipv6Addr group = SolicitedNodeIpv6(e.ip);
  StoreBe48(frame, e.mac != 0 ? e.mac : Ipv6MulticastMac(group).ToU64());
  StoreBe48(frame + 6, rif.mac);
  StoreBe16(frame + 12, kEtherTypeIpv6);
  WriteNdPacket(frame + kEthernetHeaderLen, rif.ipv6, e.mac != 0 ? e.ip : group,
                NdFields{kNdNeighborSolicit, 0, e.ip, rif.mac});
  std::vector<PortId> ports = e.mac != 0 ? std::vector<PortId>{e.port} : rif.ports;
  for (PortId port : ports) {
    Packet* pkt = cpu_.NewPacket(frame);
    if (pkt == nullptr) return;  // the pool is empty: the retry timer tries again
    ++stats_.nd_solicits_sent;
    cpu_.PacketOut(pkt, port, 0);
  }
}

}  // namespace swemu
