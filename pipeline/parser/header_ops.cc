#include "pipeline/parser/header_ops.h"

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv4.h"

namespace swemu {
namespace {

Ipv4Header* Ipv4Of(Packet& pkt) noexcept {
  return pkt.hdr.has_ipv4() ? HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4) : nullptr;
}

// version_ihl|tos and ttl|protocol are the 16-bit words the checksum sees.
uint16_t Word(uint8_t hi, uint8_t lo) noexcept { return static_cast<uint16_t>((hi << 8) | lo); }

void RewriteTos(Ipv4Header& ip, uint8_t tos) noexcept {
  const uint16_t old_word = Word(ip.version_ihl, ip.tos);
  ip.tos = tos;
  ip.SetHeaderChecksum(ChecksumUpdate16(ip.HeaderChecksum(), old_word, Word(ip.version_ihl, tos)));
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
  if (ip == nullptr || ip->ttl == 0) return;
  const uint16_t old_word = Word(ip->ttl, ip->protocol);
  --ip->ttl;
  ip->SetHeaderChecksum(
      ChecksumUpdate16(ip->HeaderChecksum(), old_word, Word(ip->ttl, ip->protocol)));
}

bool MarkEcnCe(Packet& pkt) noexcept {
  Ipv4Header* ip = Ipv4Of(pkt);
  if (ip == nullptr || ip->Ecn() == kEcnNotEct) return false;
  if (ip->Ecn() != kEcnCe) {
    RewriteTos(*ip, TosWithEcn(ip->tos, kEcnCe));
    pkt.meta.ecn_marked = true;
  }
  return true;
}

}  // namespace swemu
