#include "pipeline/parser/deparser.h"

#include <cstring>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

constexpr uint32_t kMacAddrsLen = 12;  // dst + src, which stay in front of any tag

void UpdateUdpChecksum(Packet& pkt, const uint8_t* ip, bool zero) noexcept {
  auto* udp = HeaderAt<UdpHeader>(pkt.data + pkt.hdr.udp);
  const uint32_t udp_len = udp->Length();
  // A program that broke the length has nothing sensible to sum; leave the packet as it is.
  if (udp_len < kUdpHeaderLen || pkt.hdr.udp + udp_len > pkt.len) return;
  if (zero || udp->Checksum() == 0) {
    udp->SetChecksum(0);
  } else {
    udp->SetChecksum(UdpChecksum(ip, pkt.data + pkt.hdr.udp, udp_len));
  }
}

void UpdateTcpChecksum(Packet& pkt, const Ipv4Header& iph, uint32_t ip_header_len) noexcept {
  const uint32_t total_length = iph.TotalLength();
  if (total_length < ip_header_len + kTcpMinHeaderLen || pkt.hdr.ipv4 + total_length > pkt.len) {
    return;
  }
  uint8_t* tcp = pkt.data + pkt.hdr.tcp;
  HeaderAt<TcpHeader>(tcp)->SetChecksum(
      TcpChecksum(reinterpret_cast<const uint8_t*>(&iph), tcp, total_length - ip_header_len));
}

// IPv6 has no header checksum; a dirty UDP or TCP header gets its checksum over IPv6's
// pseudo-header (always computed: 0 is no "not computed" under IPv6). A fragment's is left alone.
void DeparseIpv6L4(Packet& pkt) noexcept {
  const ParsedHeaders& h = pkt.hdr;
  if (!h.has_udp() && !h.has_tcp()) return;
  const uint8_t* ip = pkt.data + h.ipv6;
  const uint32_t l4 = h.has_udp() ? h.udp : h.tcp;
  const uint32_t ip_end = h.ipv6 + kIpv6HeaderLen + HeaderAt<Ipv6Header>(ip)->PayloadLength();
  if (ip_end > pkt.len || l4 >= ip_end || Ipv6ChainHasFragment(ip, l4 - h.ipv6)) return;
  uint8_t* seg = pkt.data + l4;
  if (h.has_udp()) {
    auto* udp = HeaderAt<UdpHeader>(seg);
    const uint32_t udp_len = udp->Length();
    if (udp_len < kUdpHeaderLen || l4 + udp_len > ip_end) return;
    udp->SetChecksum(Udp6Checksum(ip, seg, udp_len));
  } else {
    HeaderAt<TcpHeader>(seg)->SetChecksum(Tcp6Checksum(ip, seg, ip_end - l4));
  }
}

// Adds delta to every present offset after the Ethernet header.
void ShiftOffsets(ParsedHeaders& h, int delta) noexcept {
  for (uint16_t* offset : {&h.ipv4, &h.ipv6, &h.udp, &h.tcp, &h.app, &h.payload}) {
    if (*offset != kHeaderAbsent) *offset = static_cast<uint16_t>(*offset + delta);
  }
  if (h.parsed_bytes != 0) h.parsed_bytes = static_cast<uint16_t>(h.parsed_bytes + delta);
}

}  // namespace

void Deparser::DeparseDirty(Packet& pkt) const noexcept {
  ParsedHeaders& h = pkt.hdr;
  const uint8_t dirty = h.dirty;
  h.dirty = 0;
  if (h.has_ipv6() && (dirty & kDirtyL4) != 0) DeparseIpv6L4(pkt);
  if (!h.has_ipv4()) return;
  uint8_t* ip = pkt.data + h.ipv4;
  auto* iph = HeaderAt<Ipv4Header>(ip);
  const uint32_t header_len = iph->HeaderLen();
  if (header_len < kIpv4MinHeaderLen || h.ipv4 + header_len > pkt.len) return;
  if (dirty & kDirtyIpv4) iph->SetHeaderChecksum(Ipv4HeaderChecksum(ip, header_len));
  if ((dirty & kDirtyL4) == 0 || iph->IsFragment()) return;
  if (h.has_udp()) {
    UpdateUdpChecksum(pkt, ip, config_.zero_udp_checksum);
  } else if (h.has_tcp()) {
    UpdateTcpChecksum(pkt, *iph, header_len);
  }
}

bool PushVlan(Packet& pkt, uint16_t tci, uint16_t tpid) noexcept {
  ParsedHeaders& h = pkt.hdr;
  if (!h.has_eth() || h.vlan_count >= kMaxVlanTags || pkt.len < kEthernetHeaderLen) return false;
  if (!pkt.Prepend(kVlanTagLen)) return false;
  // The old ether_type now follows the new tag's TCI, where the tag's ether_type belongs.
  std::memmove(pkt.data, pkt.data + kVlanTagLen, kMacAddrsLen);
  HeaderAt<EthernetHeader>(pkt.data)->SetEtherType(tpid);
  HeaderAt<VlanTag>(pkt.data + kEthernetHeaderLen)->SetTci(tci);
  ShiftOffsets(h, kVlanTagLen);
  for (int i = h.vlan_count; i > 0; --i)
    h.vlan[i] = static_cast<uint16_t>(h.vlan[i - 1] + kVlanTagLen);
  h.vlan[0] = kEthernetHeaderLen;
  ++h.vlan_count;
  return true;
}

bool PopVlan(Packet& pkt) noexcept {
  ParsedHeaders& h = pkt.hdr;
  if (!h.has_eth() || h.vlan_count == 0 || pkt.len < kEthernetHeaderLen + kVlanTagLen) {
    return false;
  }
  // The popped tag's ether_type lands in the Ethernet header's ether_type slot.
  std::memmove(pkt.data + kVlanTagLen, pkt.data, kMacAddrsLen);
  pkt.TrimFront(kVlanTagLen);
  ShiftOffsets(h, -static_cast<int>(kVlanTagLen));
  for (int i = 0; i + 1 < h.vlan_count; ++i) {
    h.vlan[i] = static_cast<uint16_t>(h.vlan[i + 1] - kVlanTagLen);
  }
  h.vlan[--h.vlan_count] = kHeaderAbsent;
  return true;
}

}  // namespace swemu
