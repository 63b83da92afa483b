#include "pipeline/parser/header_ops.h"

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"

namespace swemu {
namespace {

Ipv4Header* Ipv4Of(Packet& pkt) noexcept {
  return pkt.hdr.has_ipv4() ? HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4) : nullptr;
}

Ipv6Header* Ipv6Of(Packet& pkt) noexcept {
  return pkt.hdr.has_ipv6() ? HeaderAt<Ipv6Header>(pkt.data + pkt.hdr.ipv6) : nullptr;
}

// version_ihl|tos and ttl|protocol are the 16-bit words the checksum sees.
uint16_t Word(uint8_t hi, uint8_t lo) noexcept { return static_cast<uint16_t>((hi << 8) | lo); }

void RewriteTos(Ipv4Header& ip, uint8_t tos) noexcept {
  const uint16_t old_word = Word(ip.version_ihl, ip.tos);
  ip.tos = tos;
  ip.SetHeaderChecksum(ChecksumUpdate16(ip.HeaderChecksum(), old_word, Word(ip.version_ihl, tos)));
}

// The traffic class's ECN bits, as IPv4's TOS byte's; no checksum covers them.
bool MarkEcnCe6(Packet& pkt) noexcept {
  Ipv6Header* ip = Ipv6Of(pkt);
  if (ip == nullptr || TosEcn(ip->TrafficClass()) == kEcnNotEct) return false;
  if (TosEcn(ip->TrafficClass()) != kEcnCe) {
    ip->SetTrafficClass(TosWithEcn(ip->TrafficClass(), kEcnCe));
    pkt.meta.ecn_marked = true;
  }
  return true;
}

}  // namespace

void SetIpv4Tos(Packet& pkt, uint8_t tos) noexcept {
  if (Ipv4Header* ip = Ipv4Of(pkt)) RewriteTos(*ip, tos);
}

void SetIpv4Dscp(Packet& pkt, uint8_t dscp) noexcept {
  if (Ipv4Header* ip = Ipv4Of(pkt)) RewriteTos(*ip, TosWithDscp(ip->tos, dscp));
}

void DecrementTtl(Packet& pkt) noexcept {
  Ipv4Header* ip = Ipv4Of(pkt);
  if (ip == nullptr) {
    // IPv6's hop limit: no header checksum to update.
    if (Ipv6Header* ip6 = Ipv6Of(pkt); ip6 != nullptr && ip6->hop_limit != 0) --ip6->hop_limit;
    return;
  }
  if (ip->ttl == 0) return;
  const uint16_t old_word = Word(ip->ttl, ip->protocol);
  --ip->ttl;
  ip->SetHeaderChecksum(
      ChecksumUpdate16(ip->HeaderChecksum(), old_word, Word(ip->ttl, ip->protocol)));
}

bool MarkEcnCe(Packet& pkt) noexcept {
  Ipv4Header* ip = Ipv4Of(pkt);
  if (ip == nullptr) return MarkEcnCe6(pkt);
  if (ip->Ecn() == kEcnNotEct) return false;
  if (ip->Ecn() != kEcnCe) {
    RewriteTos(*ip, TosWithEcn(ip->tos, kEcnCe));
    pkt.meta.ecn_marked = true;
  }
  return true;
}

}  // namespace swemu
