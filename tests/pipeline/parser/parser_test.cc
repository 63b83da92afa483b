#include "pipeline/parser/parser.h"

#include <gtest/gtest.h>

#include "pipeline/wire/vlan.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::kIpA;
using testing::kIpB;
using testing::kMacA;
using testing::kMacB;
using testing::TcpFrame;
using testing::UdpFrame;

class ParserTest : public testing::PacketTest {
 protected:
  Parser parser_{ParserConfig{}};
};

TEST_F(ParserTest, EthIpv4Udp) {
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  const ParsedHeaders& h = p->hdr;
  EXPECT_EQ(h.eth, 0);
  EXPECT_EQ(h.vlan_count, 0);
  EXPECT_EQ(h.vlan[0], kHeaderAbsent);
  EXPECT_EQ(h.ipv4, 14);
  EXPECT_EQ(h.ip_proto, kIpProtoUdp);
  EXPECT_EQ(h.udp, 34);
  EXPECT_FALSE(h.has_tcp());
  EXPECT_FALSE(h.has_app());
  EXPECT_EQ(h.payload, 42);
  EXPECT_EQ(h.parsed_bytes, 42);
  EXPECT_FALSE(p->meta.dropped());
}

TEST_F(ParserTest, EthArpIsL2Only) {
  Packet* p = MakeParsed(parser_, FrameBuilder()
                                      .Eth(kBroadcastMac, kMacA)
                                      .EtherType(kEtherTypeArp)
                                      .Payload(28)
                                      .PadTo(60)
                                      .Build());
  EXPECT_EQ(p->hdr.eth, 0);
  EXPECT_FALSE(p->hdr.has_ipv4());
  EXPECT_EQ(p->hdr.payload, 14);
  EXPECT_EQ(p->hdr.parsed_bytes, 14);
}

TEST_F(ParserTest, VlanIpv4Udp) {
  Packet* p = MakeParsed(parser_, UdpFrame().Vlan(MakeVlanTci(0, false, 7)).Build());
  EXPECT_EQ(p->hdr.vlan_count, 1);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.vlan[1], kHeaderAbsent);
  EXPECT_EQ(p->hdr.ipv4, 18);
  EXPECT_EQ(p->hdr.udp, 38);
  EXPECT_EQ(p->hdr.payload, 46);
}

TEST_F(ParserTest, QinQIpv4Tcp) {
  Packet* p = MakeParsed(parser_, TcpFrame().Vlan(100, kEtherTypeQinQ).Vlan(200).Build());
  EXPECT_EQ(p->hdr.vlan_count, 2);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.vlan[1], 18);
  EXPECT_EQ(p->hdr.ipv4, 22);
  EXPECT_EQ(p->hdr.tcp, 42);
  EXPECT_EQ(p->hdr.payload, 62);
}

TEST_F(ParserTest, Ipv4WithOptions) {
  const uint8_t options[8] = {0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00};
  Packet* p = MakeParsed(parser_, UdpFrame().Ipv4Options(options).Build());
  EXPECT_EQ(p->hdr.ipv4, 14);
  EXPECT_EQ(p->hdr.udp, 42);
  EXPECT_EQ(p->hdr.payload, 50);
}

TEST_F(ParserTest, TcpWithOptions) {
  const uint8_t options[12] = {0x02, 0x04, 0x05, 0xb4, 0x01, 0x03, 0x03, 0x07, 0x04, 0x02};
  Packet* p = MakeParsed(parser_, TcpFrame().TcpOptions(options).Build());
  EXPECT_EQ(p->hdr.tcp, 34);
  EXPECT_EQ(p->hdr.ip_proto, kIpProtoTcp);
  EXPECT_EQ(p->hdr.payload, 34 + 32);
  EXPECT_EQ(p->hdr.parsed_bytes, 66);
}

TEST_F(ParserTest, OtherIpProtocolStopsAtIpv4) {
  Packet* p = MakeParsed(
      parser_,
      FrameBuilder().Eth(kMacB, kMacA).Ipv4(kIpA, kIpB).Protocol(kIpProtoIcmp).Payload(8).Build());
  EXPECT_EQ(p->hdr.ip_proto, kIpProtoIcmp);
  EXPECT_FALSE(p->hdr.has_udp());
  EXPECT_EQ(p->hdr.payload, 34);
}

TEST_F(ParserTest, NonFirstFragmentStopsAtIpv4) {
  // The payload starts with bytes that would be a broken UDP header; they must not be read.
  Packet* p = MakeParsed(parser_, FrameBuilder()
                                      .Eth(kMacB, kMacA)
                                      .Ipv4(kIpA, kIpB)
                                      .Protocol(kIpProtoUdp)
                                      .FlagsFragmentOffset(185)
                                      .Payload(std::vector<uint8_t>(4, 0))
                                      .Build());
  EXPECT_TRUE(p->hdr.has_ipv4());
  EXPECT_FALSE(p->hdr.has_udp());
  EXPECT_EQ(p->hdr.payload, 34);
}

TEST_F(ParserTest, FirstFragmentParsesUdpWhoseLengthCoversTheWholeDatagram) {
  auto frame = UdpFrame().FlagsFragmentOffset(kIpv4FlagMf).Build();
  StoreBe16(frame.data() + 34 + 4, 1480);  // UDP length of the reassembled datagram
  Packet* p = MakeParsed(parser_, frame);
  EXPECT_EQ(p->hdr.udp, 34);
  EXPECT_EQ(p->hdr.payload, 42);
}

TEST_F(ParserTest, EthernetPaddingAfterTotalLengthIsAllowed) {
  auto frame = UdpFrame().PadTo(200).Build();
  Packet* p = MakeParsed(parser_, frame);
  EXPECT_EQ(p->hdr.payload, 42);
}

TEST_F(ParserTest, RegisteredAppHeaderFollowsUdp) {
  ASSERT_TRUE(parser_.AddUdpApp(9000, 12, 3).ok());
  Packet* p = MakeParsed(parser_, UdpFrame(1000, 9000).Build());
  EXPECT_EQ(p->hdr.app, 42);
  EXPECT_EQ(p->hdr.app_id, 3);
  EXPECT_EQ(p->hdr.payload, 54);
  EXPECT_EQ(p->hdr.parsed_bytes, 54);
  Packet* q = MakeParsed(parser_, UdpFrame(9000, 9001).Build());  // source port does not count
  EXPECT_FALSE(q->hdr.has_app());
  EXPECT_EQ(q->hdr.app_id, 0);
  EXPECT_EQ(q->hdr.payload, 42);
}

TEST_F(ParserTest, ManyAppsAreEachFoundByTheirPort) {
  for (uint16_t i = 0; i < Parser::kMaxUdpApps; ++i) {
    ASSERT_TRUE(parser_.AddUdpApp(static_cast<uint16_t>(5000 + 64 * i), 1 + i % 8, 1 + i).ok());
  }
  for (uint16_t i = 0; i < Parser::kMaxUdpApps; ++i) {
    Packet* p = MakeParsed(parser_, UdpFrame(1, static_cast<uint16_t>(5000 + 64 * i)).Build());
    EXPECT_EQ(p->hdr.app_id, 1 + i);
    EXPECT_EQ(p->hdr.payload, 42 + 1 + i % 8);
  }
  for (uint16_t port : {4999, 5001, 5064 + 1, 65535}) {
    EXPECT_FALSE(MakeParsed(parser_, UdpFrame(1, port).Build())->hdr.has_app()) << port;
  }
}

TEST_F(ParserTest, AddUdpAppRejectsBadRegistrations) {
  EXPECT_NE(parser_.AddUdpApp(9000, 8, 0).message().find("app_id"), std::string::npos);
  EXPECT_NE(parser_.AddUdpApp(9000, 0, 1).message().find("header_len"), std::string::npos);
  // 512 - 42 = 470 bytes is the most that can fit after Eth+IPv4+UDP.
  EXPECT_TRUE(parser_.AddUdpApp(9001, 470, 1).ok());
  EXPECT_NE(parser_.AddUdpApp(9002, 471, 1).message().find("parse depth"), std::string::npos);
  ASSERT_TRUE(parser_.AddUdpApp(9000, 8, 1).ok());
  EXPECT_NE(parser_.AddUdpApp(9000, 8, 2).message().find("already registered"), std::string::npos);
  for (uint16_t port = 1; port <= Parser::kMaxUdpApps - 2; ++port) {
    ASSERT_TRUE(parser_.AddUdpApp(port, 4, 2).ok());
  }
  EXPECT_NE(parser_.AddUdpApp(100, 4, 2).message().find("at most"), std::string::npos);
}

TEST_F(ParserTest, ValidateConfig) {
  EXPECT_TRUE(ValidateParserConfig(ParserConfig{}).ok());
  EXPECT_NE(ValidateParserConfig(ParserConfig{13, true, 2}).message().find("parse_depth"),
            std::string::npos);
  EXPECT_NE(ValidateParserConfig(ParserConfig{512, true, 3}).message().find("max_vlan_tags"),
            std::string::npos);
  EXPECT_EQ(Parser(ParserConfig{512, true, 9}).config().max_vlan_tags, kMaxVlanTags);
}

TEST_F(ParserTest, ParseResetsPreviousHeaderState) {
  Packet* p = Make(UdpFrame().Build());
  p->hdr.tcp = 5;
  p->hdr.dirty = kDirtyIpv4;
  p->hdr.app_id = 9;
  ASSERT_TRUE(parser_.Parse(*p));
  EXPECT_FALSE(p->hdr.has_tcp());
  EXPECT_EQ(p->hdr.dirty, 0);
  EXPECT_EQ(p->hdr.app_id, 0);
}

class FlowHashTest : public ParserTest {
 protected:
  uint32_t Hash(const std::vector<uint8_t>& frame) {
    return FlowHash(*MakeParsed(parser_, frame));
  }
};

TEST_F(FlowHashTest, EqualForTheSameFiveTuple) {
  const uint32_t base = Hash(UdpFrame(1000, 2000).Build());
  EXPECT_EQ(Hash(UdpFrame(1000, 2000).Build()), base);
  EXPECT_EQ(Hash(UdpFrame(1000, 2000).Payload(300).Ttl(3).Tos(0xB8).Build()), base);
  EXPECT_EQ(Hash(UdpFrame(1000, 2000).Vlan(42).Build()), base);
}

TEST_F(FlowHashTest, DiffersWhenAnyFieldOfTheFiveTupleDiffers) {
  std::vector<uint32_t> hashes = {
      Hash(UdpFrame(1000, 2000).Build()),
      Hash(UdpFrame(1001, 2000).Build()),
      Hash(UdpFrame(1000, 2001).Build()),
      Hash(UdpFrame(2000, 1000).Build()),
      Hash(TcpFrame(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv4(kIpB, kIpA).Udp(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv4(kIpA, kIpA).Udp(1000, 2000).Build()),
      Hash(FrameBuilder().Eth(kMacB, kMacA).Ipv4(kIpA, kIpB).Protocol(kIpProtoIcmp).Build()),
  };
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    for (std::size_t j = i + 1; j < hashes.size(); ++j) EXPECT_NE(hashes[i], hashes[j]) << i << j;
  }
}

TEST_F(FlowHashTest, AllFragmentsOfADatagramHashAlike) {
  const uint32_t first = Hash(UdpFrame(1000, 2000).FlagsFragmentOffset(kIpv4FlagMf).Build());
  const uint32_t last = Hash(FrameBuilder()
                                 .Eth(kMacB, kMacA)
                                 .Ipv4(kIpA, kIpB)
                                 .Protocol(kIpProtoUdp)
                                 .FlagsFragmentOffset(3)
                                 .Payload(8)
                                 .Build());
  EXPECT_EQ(first, last);
  EXPECT_NE(first, Hash(UdpFrame(1000, 2000).Build()));
}

TEST_F(FlowHashTest, NonIpUsesMacsAndEtherType) {
  auto l2 = [&](MacAddr dst, MacAddr src, uint16_t type) {
    return Hash(FrameBuilder().Eth(dst, src).EtherType(type).Payload(46).Build());
  };
  const uint32_t base = l2(kMacB, kMacA, kEtherTypeArp);
  EXPECT_EQ(l2(kMacB, kMacA, kEtherTypeArp), base);
  EXPECT_NE(l2(kMacA, kMacA, kEtherTypeArp), base);
  EXPECT_NE(l2(kMacB, kMacB, kEtherTypeArp), base);
  EXPECT_NE(l2(kMacB, kMacA, kEtherTypeIpv4 + 1), base);
}

}  // namespace
}  // namespace swemu
