#include "pipeline/parser/parser.h"

#include <algorithm>
#include <string>

#include "pipeline/core/hash.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

// Ethernet + IPv4 + UDP: the least that comes before a program header.
constexpr uint32_t kBytesBeforeApp = kEthernetHeaderLen + kIpv4MinHeaderLen + kUdpHeaderLen;

[[gnu::cold]] bool Drop(Packet& pkt, DropReason reason) noexcept {
  pkt.meta.MarkDrop(reason);
  return false;
}

// A header ending at `end` did not fit min(available, parse depth): say which limit it broke.
[[gnu::cold]] bool DropBeyond(Packet& pkt, uint32_t end, uint32_t available,
                              DropReason truncated) noexcept {
  return Drop(pkt, end > available ? truncated : DropReason::kParseDepthExceeded);
}

// IPv6's flow hash: the addresses, the upper layer and, as for IPv4, the ports only when UDP or
// TCP was parsed and the packet is no fragment (every piece of a datagram hashes alike).
uint32_t FlowHash6(const Packet& pkt) noexcept {
  const ParsedHeaders& h = pkt.hdr;
  const uint8_t* ip = pkt.data + h.ipv6;
  const auto* iph = HeaderAt<Ipv6Header>(ip);
  uint64_t ports = 0;
  if (h.has_udp() || h.has_tcp()) {
    const uint32_t l4 = h.has_udp() ? h.udp : h.tcp;
    if (!Ipv6ChainHasFragment(ip, l4 - h.ipv6)) ports = LoadBe32(pkt.data + l4);
  }
  const uint64_t src = HashPair(LoadBe64(iph->src_addr), LoadBe64(iph->src_addr + 8), 6);
  const uint64_t dst = HashPair(LoadBe64(iph->dst_addr), LoadBe64(iph->dst_addr + 8), src);
  return static_cast<uint32_t>(HashPair(dst, (uint64_t{h.ip_proto} << 32) | ports, 7));
}

}  // namespace

uint32_t FlowHash(const Packet& pkt) noexcept {
  const ParsedHeaders& h = pkt.hdr;
  const uint8_t* d = pkt.data;
  if (h.has_ipv4()) {
    const auto* iph = HeaderAt<Ipv4Header>(d + h.ipv4);
    // All pieces of a fragmented datagram hash alike (no ports), so they stay on one path.
    const bool has_ports =
        (h.has_udp() || h.has_tcp()) && (iph->FlagsFragmentOffset() & kIpv4FlagMf) == 0;
    const uint32_t l4 = h.has_udp() ? h.udp : h.tcp;
    const uint64_t ports = has_ports ? LoadBe32(d + l4) : 0;  // src_port | dst_port
    const uint64_t addrs = LoadBe64(iph->src_addr);           // src_addr | dst_addr
    // One finaliser round: addrs * odd + (proto, ports) is injective for fixed addrs, and
    // Mix64 is a bijection, so distinct tuples collide only by chance in the 32 bits kept.
    const uint64_t key = addrs * 0x9E3779B97F4A7C15ULL + ((uint64_t{h.ip_proto} << 32) | ports);
    return static_cast<uint32_t>(Mix64(key));
  }
  if (h.has_ipv6()) return FlowHash6(pkt);
  if (!h.has_eth()) return 0;
  // The ethertype after the tags: in the last tag, or in the Ethernet header.
  const uint16_t ether_type = h.vlan_count != 0
                                  ? HeaderAt<VlanTag>(d + h.vlan[h.vlan_count - 1])->EtherType()
                                  : HeaderAt<EthernetHeader>(d + h.eth)->EtherType();
  const uint64_t dst = LoadBe64(d + h.eth) >> 16;                      // bytes 0..5
  const uint64_t src = LoadBe64(d + h.eth + 4) & 0xFFFF'FFFF'FFFFULL;  // bytes 6..11
  return static_cast<uint32_t>(HashPair(dst, (src << 16) | ether_type, /*seed=*/1));
}

Status ValidateParserConfig(const ParserConfig& config) {
  if (config.parse_depth < kEthernetHeaderLen) {
    return Status::Error("parser: parse_depth " + std::to_string(config.parse_depth) +
                         " is below the Ethernet header (14 bytes)");
  }
  if (config.max_vlan_tags > kMaxVlanTags) {
    return Status::Error("parser: max_vlan_tags " + std::to_string(config.max_vlan_tags) +
                         " exceeds " + std::to_string(kMaxVlanTags));
  }
  return Status::Ok();
}

Parser::Parser(ParserConfig config) : config_(config) {
  config_.max_vlan_tags = std::min<uint8_t>(config_.max_vlan_tags, kMaxVlanTags);
}

Status Parser::AddUdpApp(uint16_t udp_dst_port, uint16_t header_len, uint16_t app_id) {
  const std::string what = "parser: app header on UDP port " + std::to_string(udp_dst_port);
  if (app_id == 0) return Status::Error(what + ": app_id must be >= 1");
  if (header_len == 0) return Status::Error(what + ": header_len must be >= 1");
  if (kBytesBeforeApp + header_len > config_.parse_depth) {
    return Status::Error(what + ": " + std::to_string(header_len) +
                         " bytes cannot fit the parse depth of " +
                         std::to_string(config_.parse_depth) + " bytes (Eth+IPv4+UDP take " +
                         std::to_string(kBytesBeforeApp) + ")");
  }
  if (FindApp(udp_dst_port) != nullptr) return Status::Error(what + ": port already registered");
  if (app_count_ == kMaxUdpApps) {
    return Status::Error(what + ": at most " + std::to_string(kMaxUdpApps) + " app headers");
  }
  uint32_t i = AppSlotOf(udp_dst_port);
  while (apps_[i].app_id != 0) i = (i + 1) % kAppSlots;
  apps_[i] = AppSlot{udp_dst_port, header_len, app_id};
  ++app_count_;
  return Status::Ok();
}

[[gnu::always_inline]] inline const Parser::AppSlot* Parser::FindApp(uint16_t port) const noexcept {
  // Terminates: the table is never more than a quarter full.
  for (uint32_t i = AppSlotOf(port);; i = (i + 1) % kAppSlots) {
    const AppSlot& slot = apps_[i];
    if (slot.app_id == 0) return nullptr;
    if (slot.port == port) return &slot;
  }
}

bool Parser::Parse(Packet& pkt) const noexcept {
  pkt.hdr = ParsedHeaders();
  ParsedHeaders& h = pkt.hdr;
  const uint8_t* d = pkt.data;
  const uint32_t len = pkt.len;
  const uint32_t limit = std::min<uint32_t>(len, config_.parse_depth);

  uint32_t off = kEthernetHeaderLen;
  if (off > limit) return DropBeyond(pkt, off, len, DropReason::kTruncatedEthernet);
  h.eth = 0;
  uint16_t type = HeaderAt<EthernetHeader>(d)->EtherType();
  while (IsVlanTpid(type)) {
    if (h.vlan_count >= config_.max_vlan_tags) return Drop(pkt, DropReason::kTooManyVlanTags);
    const uint32_t end = off + kVlanTagLen;
    if (end > limit) return DropBeyond(pkt, end, len, DropReason::kTruncatedVlan);
    h.vlan[h.vlan_count++] = static_cast<uint16_t>(off);
    type = HeaderAt<VlanTag>(d + off)->EtherType();
    off = end;
  }
  if (type == kEtherTypeIpv4) return ParseIpv4(pkt, off);
  if (type == kEtherTypeIpv6) return ParseIpv6(pkt, off);
  // ARP, ...: a valid L2-only packet.
  h.payload = h.parsed_bytes = static_cast<uint16_t>(off);
  return true;
}

[[gnu::always_inline]] inline bool Parser::ParseIpv4(Packet& pkt, uint32_t ip) const noexcept {
  ParsedHeaders& h = pkt.hdr;
  const uint8_t* d = pkt.data;
  const uint32_t len = pkt.len;
  const uint32_t limit = std::min<uint32_t>(len, config_.parse_depth);

  if (ip + kIpv4MinHeaderLen > limit) {
    return DropBeyond(pkt, ip + kIpv4MinHeaderLen, len, DropReason::kTruncatedIpv4);
  }
  const auto* iph = HeaderAt<Ipv4Header>(d + ip);
  if (iph->Version() != 4) return Drop(pkt, DropReason::kIpv4BadVersion);
  const uint32_t header_len = iph->HeaderLen();
  if (header_len < kIpv4MinHeaderLen) return Drop(pkt, DropReason::kIpv4BadIhl);
  if (ip + header_len > limit) {
    return DropBeyond(pkt, ip + header_len, len, DropReason::kTruncatedIpv4);
  }
  const uint32_t total_length = iph->TotalLength();
  if (total_length < header_len || ip + total_length > len) {
    return Drop(pkt, DropReason::kIpv4BadTotalLength);
  }
  if (config_.verify_ipv4_checksum && !Ipv4HeaderChecksumOk(d + ip, header_len)) {
    return Drop(pkt, DropReason::kIpv4BadChecksum);
  }
  h.ipv4 = static_cast<uint16_t>(ip);
  h.ip_proto = iph->protocol;

  const uint32_t l4 = ip + header_len;
  const uint32_t ip_end = ip + total_length;
  const uint16_t frag = iph->FlagsFragmentOffset();
  const bool first_piece = (frag & kIpv4FragmentOffsetMask) == 0;
  bool ok = true;
  if (first_piece && h.ip_proto == kIpProtoUdp) {
    ok = ParseUdp(pkt, l4, ip_end, (frag & kIpv4FlagMf) != 0);
  } else if (first_piece && h.ip_proto == kIpProtoTcp) {
    ok = ParseTcp(pkt, l4, ip_end);
  } else {
    h.payload = h.parsed_bytes = static_cast<uint16_t>(l4);  // no L4, or a later fragment
  }
  return ok;
}

// Out of line: IPv4 traffic's parse stays as it was.
bool Parser::ParseIpv6(Packet& pkt, uint32_t ip) const noexcept {
  ParsedHeaders& h = pkt.hdr;
  const uint8_t* d = pkt.data;
  const uint32_t len = pkt.len;
  const uint32_t limit = std::min<uint32_t>(len, config_.parse_depth);
  if (ip + kIpv6HeaderLen > limit) {
    return DropBeyond(pkt, ip + kIpv6HeaderLen, len, DropReason::kTruncatedIpv6);
  }
  const auto* iph = HeaderAt<Ipv6Header>(d + ip);
  if (iph->Version() != 6) return Drop(pkt, DropReason::kIpv6BadVersion);
  // Payload length 0 is a jumbogram's (RFC 2675), which no Ethernet frame carries.
  const uint32_t ip_end = ip + kIpv6HeaderLen + iph->PayloadLength();
  if (iph->PayloadLength() == 0 || ip_end > len) {
    return Drop(pkt, DropReason::kIpv6BadPayloadLen);
  }
  h.ipv6 = static_cast<uint16_t>(ip);
  const uint32_t ext_limit = std::min<uint32_t>(ip_end, config_.parse_depth);
  uint8_t next = iph->next_header;
  uint32_t off = ip + kIpv6HeaderLen;
  bool first_piece = true;
  bool more_fragments = false;
  for (int count = 0; first_piece && (IsIpv6OptionsHeader(next) || next == kIpProtoFragment);
       ++count) {
    if (count == kMaxIpv6ExtHeaders) return Drop(pkt, DropReason::kIpv6TooManyExts);
    if (off + 2 > ext_limit) return DropBeyond(pkt, off + 2, ip_end, DropReason::kTruncatedIpv6);
    const uint32_t end =
        off + (next == kIpProtoFragment ? kIpv6FragmentHeaderLen : (uint32_t{d[off + 1]} + 1) * 8);
    if (end > ext_limit) return DropBeyond(pkt, end, ip_end, DropReason::kTruncatedIpv6);
    if (next == kIpProtoFragment) {
      const auto* frag = HeaderAt<Ipv6FragmentHeader>(d + off);
      first_piece = frag->FragmentOffset() == 0;  // a later piece's data is no header
      more_fragments = frag->MoreFragments();
    }
    next = d[off];
    off = end;
  }
  h.ip_proto = next;
  if (first_piece && next == kIpProtoUdp) return ParseUdp(pkt, off, ip_end, more_fragments);
  if (first_piece && next == kIpProtoTcp) return ParseTcp(pkt, off, ip_end);
  h.payload = h.parsed_bytes = static_cast<uint16_t>(off);  // ICMPv6, other, or a later piece
  return true;
}

[[gnu::always_inline]] inline bool Parser::ParseUdp(Packet& pkt, uint32_t udp, uint32_t ip_end,
                                                    bool first_fragment) const noexcept {
  ParsedHeaders& h = pkt.hdr;
  const uint32_t depth = config_.parse_depth;
  uint32_t off = udp + kUdpHeaderLen;
  if (off > std::min(ip_end, depth)) return DropBeyond(pkt, off, ip_end, DropReason::kTruncatedUdp);
  const auto* udph = HeaderAt<UdpHeader>(pkt.data + udp);
  const uint32_t udp_len = udph->Length();
  if (udp_len < kUdpHeaderLen) return Drop(pkt, DropReason::kUdpBadLength);
  uint32_t udp_end = udp + udp_len;
  if (udp_end > ip_end) {
    // A first fragment's UDP length covers the whole datagram, not just this piece.
    if (!first_fragment) return Drop(pkt, DropReason::kUdpBadLength);
    udp_end = ip_end;
  }
  h.udp = static_cast<uint16_t>(udp);
  if (app_count_ != 0) {
    if (const AppSlot* app = FindApp(udph->DstPort())) {
      const uint32_t end = off + app->header_len;
      if (end > std::min(udp_end, depth)) {
        return DropBeyond(pkt, end, udp_end, DropReason::kTruncatedAppHeader);
      }
      h.app = static_cast<uint16_t>(off);
      h.app_id = app->app_id;
      off = end;
    }
  }
  h.payload = h.parsed_bytes = static_cast<uint16_t>(off);
  return true;
}

[[gnu::always_inline]] inline bool Parser::ParseTcp(Packet& pkt, uint32_t tcp,
                                                    uint32_t ip_end) const noexcept {
  ParsedHeaders& h = pkt.hdr;
  const uint32_t limit = std::min<uint32_t>(ip_end, config_.parse_depth);
  if (tcp + kTcpMinHeaderLen > limit) {
    return DropBeyond(pkt, tcp + kTcpMinHeaderLen, ip_end, DropReason::kTruncatedTcp);
  }
  const uint32_t header_len = HeaderAt<TcpHeader>(pkt.data + tcp)->HeaderLen();
  if (header_len < kTcpMinHeaderLen) return Drop(pkt, DropReason::kTcpBadDataOffset);
  const uint32_t end = tcp + header_len;
  if (end > limit) return DropBeyond(pkt, end, ip_end, DropReason::kTruncatedTcp);
  h.tcp = static_cast<uint16_t>(tcp);
  h.payload = h.parsed_bytes = static_cast<uint16_t>(end);
  return true;
}

}  // namespace swemu
