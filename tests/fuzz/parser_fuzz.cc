// libFuzzer target for the parser, header ops and deparser. Input byte 0 picks the parser
// config and the header ops; the rest is the frame. Invariants trap (abort) when broken.
#include <cstddef>
#include <cstdint>

#include "pipeline/core/packet_pool.h"
#include "pipeline/parser/deparser.h"
#include "pipeline/parser/header_ops.h"
#include "pipeline/parser/parser.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

Parser MakeParser(ParserConfig config) {
  Parser parser(config);
  Check(parser.AddUdpApp(9000, 16, 1).ok());
  Check(parser.AddUdpApp(4791, 4, 2).ok());
  return parser;
}

// Present offsets are in order, inside the frame and the parse depth, and consistent.
void CheckOffsets(const Packet& pkt, const ParserConfig& config) {
  const ParsedHeaders& h = pkt.hdr;
  Check(h.eth == 0);
  uint32_t prev = 0;
  auto next = [&](uint16_t offset, uint32_t min_gap) {
    if (offset == kHeaderAbsent) return;
    Check(offset >= prev + min_gap && offset < pkt.len);
    prev = offset;
  };
  next(h.vlan[0], 14);
  next(h.vlan[1], 4);
  Check(h.vlan_count == (h.vlan[0] != kHeaderAbsent) + (h.vlan[1] != kHeaderAbsent));
  Check(h.vlan_count <= config.max_vlan_tags);
  Check(!(h.has_ipv4() && h.has_ipv6()));
  next(h.ipv4, h.vlan_count ? 4 : 14);
  next(h.ipv6, h.vlan_count ? 4 : 14);
  Check(!(h.has_udp() && h.has_tcp()));
  Check(!h.has_app() || h.has_udp());
  Check(h.has_app() == (h.app_id != 0));
  next(h.udp, 20);
  next(h.tcp, 20);
  next(h.app, 8);
  Check(h.payload != kHeaderAbsent && h.payload >= prev && h.payload <= pkt.len);
  Check(h.payload == h.parsed_bytes && h.parsed_bytes <= config.parse_depth);
  if (h.has_ipv4()) {
    const auto* ip = HeaderAt<Ipv4Header>(pkt.data + h.ipv4);
    Check(ip->Version() == 4 && ip->Ihl() >= 5 && h.ipv4 + ip->TotalLength() <= pkt.len);
    Check(h.ip_proto == ip->protocol);
  }
  if (h.has_ipv6()) {
    const auto* ip = HeaderAt<Ipv6Header>(pkt.data + h.ipv6);
    Check(ip->Version() == 6 && h.ipv6 + kIpv6HeaderLen + ip->PayloadLength() <= pkt.len);
    Check(!h.has_udp() || h.udp >= h.ipv6 + kIpv6HeaderLen);
    Check(!h.has_tcp() || h.tcp >= h.ipv6 + kIpv6HeaderLen);
  }
}

// A dirty L4 header under IPv6 gets its checksum over IPv6's pseudo-header.
void CheckL4Checksums6(const Packet& pkt) {
  const ParsedHeaders& h = pkt.hdr;
  if (!h.has_udp() && !h.has_tcp()) return;
  const uint8_t* ip = pkt.data + h.ipv6;
  const uint32_t l4 = h.has_udp() ? h.udp : h.tcp;
  if (Ipv6ChainHasFragment(ip, l4 - h.ipv6)) return;
  const uint32_t ip_end = h.ipv6 + kIpv6HeaderLen + HeaderAt<Ipv6Header>(ip)->PayloadLength();
  const uint32_t len = h.has_udp() ? HeaderAt<UdpHeader>(pkt.data + l4)->Length() : ip_end - l4;
  const uint32_t sum = Ipv6PseudoHeaderSum(ip, h.has_udp() ? kIpProtoUdp : kIpProtoTcp, len) +
                       OnesComplementSum(pkt.data + l4, len);
  Check(FoldSum(sum) == 0xFFFF);
}

void CheckL4Checksums(const Packet& pkt) {
  const ParsedHeaders& h = pkt.hdr;
  const uint8_t* ip = pkt.data + h.ipv4;
  const auto* iph = HeaderAt<Ipv4Header>(ip);
  if (iph->IsFragment()) return;
  if (h.has_udp()) {
    Check(UdpChecksumOk(ip, pkt.data + h.udp, HeaderAt<UdpHeader>(pkt.data + h.udp)->Length()));
  }
  if (h.has_tcp()) {
    Check(TcpChecksumOk(ip, pkt.data + h.tcp, iph->TotalLength() - iph->HeaderLen()));
  }
}

}  // namespace
}  // namespace swemu

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swemu;  // NOLINT(build/namespaces)
  static HeapPacketPool pool(2);
  static const ParserConfig kStrict{};
  static const ParserConfig kSmall{
      .parse_depth = 64, .verify_ipv4_checksum = false, .max_vlan_tags = 1};
  static const Parser strict = MakeParser(kStrict);
  static const Parser small = MakeParser(kSmall);
  static const Deparser deparser{DeparserConfig{}};
  if (size < 1) return 0;
  const uint8_t ctl = data[0];
  const Parser& parser = (ctl & 1) ? small : strict;
  const ParserConfig& config = (ctl & 1) ? kSmall : kStrict;
  Packet* pkt = pool.FromBytes(data + 1, static_cast<uint32_t>(size - 1));
  if (pkt == nullptr) return 0;

  const bool ok = parser.Parse(*pkt);
  Check(ok == !pkt->meta.dropped());
  if (ok) {
    CheckOffsets(*pkt, config);
    const ParsedHeaders parsed = pkt->hdr;
    const uint32_t flow_hash = FlowHash(*pkt);
    if (ctl & 2) DecrementTtl(*pkt);
    if (ctl & 4) MarkEcnCe(*pkt);
    if (ctl & 8) SetIpv4Tos(*pkt, static_cast<uint8_t>(size));
    const bool pushed = (ctl & 16) && parsed.vlan_count < config.max_vlan_tags &&
                        parsed.parsed_bytes + 4 <= config.parse_depth && PushVlan(*pkt, ctl);
    if (pushed) CheckOffsets(*pkt, config);
    pkt->hdr.dirty = static_cast<uint8_t>(ctl >> 6);  // kDirtyIpv4 | kDirtyL4
    const uint8_t dirty = pkt->hdr.dirty;
    deparser.Deparse(*pkt);
    Check(pkt->hdr.dirty == 0);
    if (pkt->hdr.has_ipv4() && (config.verify_ipv4_checksum || (dirty & kDirtyIpv4))) {
      Check(Ipv4HeaderChecksumOk(pkt->data + pkt->hdr.ipv4,
                                 HeaderAt<Ipv4Header>(pkt->data + pkt->hdr.ipv4)->HeaderLen()));
    }
    if (pkt->hdr.has_ipv4() && (dirty & kDirtyL4)) CheckL4Checksums(*pkt);
    if (pkt->hdr.has_ipv6() && (dirty & kDirtyL4)) CheckL4Checksums6(*pkt);
    if (pushed) Check(PopVlan(*pkt));
    // Header ops never change the structure: a reparse finds the same headers and flow.
    const ParsedHeaders before = pkt->hdr;
    Check(parser.Parse(*pkt));
    Check(pkt->hdr.ipv4 == before.ipv4 && pkt->hdr.ipv6 == before.ipv6 &&
          pkt->hdr.udp == before.udp && pkt->hdr.tcp == before.tcp && pkt->hdr.app == before.app &&
          pkt->hdr.payload == parsed.payload && pkt->hdr.vlan_count == parsed.vlan_count);
    Check(FlowHash(*pkt) == flow_hash);
  }
  pool.Free(pkt);
  return 0;
}
