// IPv6: the fixed header, the extension headers the parser skips, fragments, its drop reasons
// and its flow hash.
#include <gtest/gtest.h>

#include <vector>

#include "pipeline/parser/parser.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/vlan.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::kIp6A;
using testing::kIp6B;
using testing::kMacA;
using testing::kMacB;
using testing::Tcp6Frame;
using testing::Udp6Frame;

constexpr std::size_t kIp6At = 14;
constexpr std::size_t kL4At = kIp6At + kIpv6HeaderLen;  // 54

// An options header (hop-by-hop, routing, destination options) of 8 * units bytes: PadN.
std::vector<uint8_t> OptionsHeader(int units = 1) {
  std::vector<uint8_t> h(8 * units, 0);
  h[1] = static_cast<uint8_t>(units - 1);
  h[2] = 1;  // PadN
  h[3] = static_cast<uint8_t>(h.size() - 4);
  return h;
}

std::vector<uint8_t> FragmentHeader(uint16_t offset_bytes, bool more) {
  std::vector<uint8_t> h(8, 0);
  StoreBe16(h.data() + 2, static_cast<uint16_t>((offset_bytes & 0xFFF8) | (more ? 1 : 0)));
  StoreBe32(h.data() + 4, 0x1234);
  return h;
}

FrameBuilder Icmp6Frame() {
  FrameBuilder b;
  b.Eth(kMacB, kMacA).Ipv6(kIp6A, kIp6B).Protocol(kIpProtoIcmpv6).Payload(8);
  return b;
}

class ParserIpv6Test : public testing::PacketTest {
 protected:
  Parser parser_{ParserConfig{}};
};

TEST_F(ParserIpv6Test, Udp) {
  Packet* p = MakeParsed(parser_, Udp6Frame().Build());
  const ParsedHeaders& h = p->hdr;
  EXPECT_EQ(h.ipv6, kIp6At);
  EXPECT_FALSE(h.has_ipv4());
  EXPECT_EQ(h.ip_proto, kIpProtoUdp);
  EXPECT_EQ(h.udp, kL4At);
  EXPECT_EQ(h.payload, kL4At + 8);
  EXPECT_EQ(h.parsed_bytes, kL4At + 8);
}

TEST_F(ParserIpv6Test, TcpAndTheBuilderChecksumIsIpv6s) {
  const std::vector<uint8_t> frame = Tcp6Frame().Build();
  Packet* p = MakeParsed(parser_, frame);
  EXPECT_EQ(p->hdr.ip_proto, kIpProtoTcp);
  EXPECT_EQ(p->hdr.tcp, kL4At);
  EXPECT_EQ(p->hdr.payload, kL4At + 20);
  const std::size_t tcp_len = frame.size() - kL4At;
  EXPECT_EQ(HeaderAt<TcpHeader>(frame.data() + kL4At)->Checksum(),
            Tcp6Checksum(frame.data() + kIp6At, frame.data() + kL4At, tcp_len));
  // A sum over the pseudo-header and the segment with its checksum folds to all ones.
  const uint32_t sum = Ipv6PseudoHeaderSum(frame.data() + kIp6At, kIpProtoTcp, tcp_len) +
                       OnesComplementSum(frame.data() + kL4At, tcp_len);
  EXPECT_EQ(FoldSum(sum), 0xFFFF);
}

TEST_F(ParserIpv6Test, Icmpv6PayloadIsItsHeader) {
  Packet* p = MakeParsed(parser_, Icmp6Frame().Build());
  EXPECT_EQ(p->hdr.ip_proto, kIpProtoIcmpv6);
  EXPECT_FALSE(p->hdr.has_udp());
  EXPECT_EQ(p->hdr.payload, kL4At);
}

TEST_F(ParserIpv6Test, VlanTaggedUdp) {
  Packet* p = MakeParsed(parser_, Udp6Frame().Vlan(MakeVlanTci(0, false, 7)).Build());
  EXPECT_EQ(p->hdr.vlan_count, 1);
  EXPECT_EQ(p->hdr.ipv6, 18);
  EXPECT_EQ(p->hdr.udp, 58);
}

TEST_F(ParserIpv6Test, SkipsOptionsAndRoutingHeaders) {
  Packet* p = MakeParsed(parser_, Udp6Frame()
                                      .Ipv6Ext(kIpProtoHopByHop, OptionsHeader())
                                      .Ipv6Ext(kIpProtoRouting, OptionsHeader(2))
                                      .Ipv6Ext(kIpProtoDestOptions, OptionsHeader())
                                      .Build());
  EXPECT_EQ(p->hdr.ipv6, kIp6At);
  EXPECT_EQ(p->hdr.ip_proto, kIpProtoUdp);
  EXPECT_EQ(p->hdr.udp, kL4At + 32);
}

TEST_F(ParserIpv6Test, AppHeaderAfterUdpAsOverIpv4) {
  ASSERT_TRUE(parser_.AddUdpApp(9000, 12, 3).ok());
  Packet* p = MakeParsed(parser_, Udp6Frame(1000, 9000).Build());
  EXPECT_EQ(p->hdr.app, kL4At + 8);
  EXPECT_EQ(p->hdr.app_id, 3);
  EXPECT_EQ(p->hdr.payload, kL4At + 20);
}

TEST_F(ParserIpv6Test, FirstFragmentHasUdpLaterOnesNoL4) {
  Packet* first =
      MakeParsed(parser_, Udp6Frame().Ipv6Ext(kIpProtoFragment, FragmentHeader(0, true)).Build());
  EXPECT_EQ(first->hdr.ip_proto, kIpProtoUdp);
  EXPECT_EQ(first->hdr.udp, kL4At + 8);
  // A later piece's data starts with bytes that would be a broken UDP header: not read.
  Packet* later = MakeParsed(parser_, FrameBuilder()
                                          .Eth(kMacB, kMacA)
                                          .Ipv6(kIp6A, kIp6B)
                                          .Protocol(kIpProtoUdp)
                                          .Ipv6Ext(kIpProtoFragment, FragmentHeader(1448, false))
                                          .Payload(std::vector<uint8_t>(4, 0))
                                          .Build());
  EXPECT_EQ(later->hdr.ip_proto, kIpProtoUdp);
  EXPECT_FALSE(later->hdr.has_udp());
  EXPECT_EQ(later->hdr.payload, kL4At + 8);
}

TEST_F(ParserIpv6Test, TooManyExtensionHeaders) {
  FrameBuilder b = Udp6Frame();
  for (int i = 0; i < Parser::kMaxIpv6ExtHeaders; ++i)
    b.Ipv6Ext(kIpProtoDestOptions, OptionsHeader());
  EXPECT_EQ(ParseReason(parser_, b.Build()), DropReason::kNone);
  b.Ipv6Ext(kIpProtoDestOptions, OptionsHeader());
  EXPECT_EQ(ParseReason(parser_, b.Build()), DropReason::kIpv6TooManyExts);
}

TEST_F(ParserIpv6Test, BadVersion) {
  std::vector<uint8_t> frame = Udp6Frame().Build();
  frame[kIp6At] = 0x45;
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv6BadVersion);
}

TEST_F(ParserIpv6Test, PayloadLengthBeyondFrameOrZero) {
  std::vector<uint8_t> frame = Udp6Frame().PadTo(100).Build();  // padding after the packet: fine
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kNone);
  auto* ip = HeaderAt<Ipv6Header>(frame.data() + kIp6At);
  ip->SetPayloadLength(static_cast<uint16_t>(frame.size() - kL4At + 1));
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv6BadPayloadLen);
  ip->SetPayloadLength(0);
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kIpv6BadPayloadLen);
}

TEST_F(ParserIpv6Test, EveryCut) {
  const std::vector<uint8_t> frame = Udp6Frame().Ipv6Ext(kIpProtoHopByHop, OptionsHeader()).Build();
  ASSERT_EQ(ParseReason(parser_, frame), DropReason::kNone);
  for (std::size_t cut = 0; cut < frame.size(); ++cut) {
    // The payload length names bytes a cut frame lacks: once the fixed header is whole, that.
    const DropReason expected = cut < kIp6At  ? DropReason::kTruncatedEthernet
                                : cut < kL4At ? DropReason::kTruncatedIpv6
                                              : DropReason::kIpv6BadPayloadLen;
    std::vector<uint8_t> prefix(frame.begin(), frame.begin() + cut);
    EXPECT_EQ(DropReasonName(ParseReason(parser_, prefix)), DropReasonName(expected)) << cut;
  }
}

TEST_F(ParserIpv6Test, ExtensionOrUdpCutByPayloadLength) {
  std::vector<uint8_t> frame = Udp6Frame().Ipv6Ext(kIpProtoHopByHop, OptionsHeader(2)).Build();
  auto* ip = HeaderAt<Ipv6Header>(frame.data() + kIp6At);
  ip->SetPayloadLength(8);  // the 16-byte options header ends beyond the packet
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTruncatedIpv6);
  ip->SetPayloadLength(20);  // the options fit, the UDP header does not
  EXPECT_EQ(ParseReason(parser_, frame), DropReason::kTruncatedUdp);
}

TEST_F(ParserIpv6Test, ParseDepthBoundsExtensionHeaders) {
  Parser shallow{ParserConfig{kL4At + 16, true, 2}};
  EXPECT_EQ(
      ParseReason(shallow, Udp6Frame().Ipv6Ext(kIpProtoDestOptions, OptionsHeader(3)).Build()),
      DropReason::kParseDepthExceeded);
  EXPECT_EQ(ParseReason(shallow, Udp6Frame().Build()), DropReason::kNone);
}

class FlowHash6Test : public ParserIpv6Test {
 protected:
  uint32_t Hash(const std::vector<uint8_t>& frame) { return FlowHash(*MakeParsed(parser_, frame)); }
};

TEST_F(FlowHash6Test, StableForTheSameTupleAndDistinctOtherwise) {
  const uint32_t base = Hash(Udp6Frame(1000, 2000).Build());
  EXPECT_EQ(Hash(Udp6Frame(1000, 2000).Payload(300).Ttl(3).Tos(0xB8).Vlan(42).Build()), base);
  EXPECT_EQ(Hash(Udp6Frame(1000, 2000).Ipv6Ext(kIpProtoHopByHop, OptionsHeader()).Build()), base);
  const Ipv6Addr other_low = {kIp6A.hi, kIp6A.lo + 1};
  const Ipv6Addr other_high = {kIp6A.hi + 1, kIp6A.lo};
  std::vector<uint32_t> hashes = {
      base,
      Hash(Udp6Frame(1001, 2000).Build()),
      Hash(Udp6Frame(1000, 2001).Build()),
      Hash(Udp6Frame(2000, 1000).Build()),
      Hash(Tcp6Frame(1000, 2000).Build()),
      Hash(Icmp6Frame().Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv6(kIp6B, kIp6A).Udp(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv6(other_low, kIp6B).Udp(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv6(other_high, kIp6B).Udp(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv6(kIp6A, other_low).Udp(1000, 2000).Build()),
  };
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    for (std::size_t j = i + 1; j < hashes.size(); ++j) EXPECT_NE(hashes[i], hashes[j]) << i << j;
  }
}

TEST_F(FlowHash6Test, AllFragmentsOfADatagramHashAlike) {
  const uint32_t first =
      Hash(Udp6Frame(1000, 2000).Ipv6Ext(kIpProtoFragment, FragmentHeader(0, true)).Build());
  const uint32_t later = Hash(FrameBuilder()
                                  .Eth(kMacB, kMacA)
                                  .Ipv6(kIp6A, kIp6B)
                                  .Protocol(kIpProtoUdp)
                                  .Ipv6Ext(kIpProtoFragment, FragmentHeader(1448, false))
                                  .Payload(8)
                                  .Build());
  EXPECT_EQ(first, later);
  EXPECT_NE(first, Hash(Udp6Frame(1000, 2000).Build()));
}

}  // namespace
}  // namespace swemu
