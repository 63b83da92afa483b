#include "pipeline/parser/deparser.h"

#include <gtest/gtest.h>

#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::kMacA;
using testing::kMacB;
using testing::TcpFrame;
using testing::UdpFrame;

class DeparserTest : public testing::PacketTest {
 protected:
  Ipv4Header* Ip(Packet* p) { return HeaderAt<Ipv4Header>(p->data + p->hdr.ipv4); }
  UdpHeader* Udp(Packet* p) { return HeaderAt<UdpHeader>(p->data + p->hdr.udp); }
  bool UdpOk(Packet* p) {
    return UdpChecksumOk(p->data + p->hdr.ipv4, p->data + p->hdr.udp, Udp(p)->Length());
  }

  Parser parser_{ParserConfig{}};
  Deparser deparser_{DeparserConfig{}};
};

TEST_F(DeparserTest, DirtyIpv4RecomputesHeaderChecksum) {
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  Ip(p)->SetSrcAddr(MakeIpv4Addr(192, 0, 2, 1));
  EXPECT_FALSE(Ipv4HeaderChecksumOk(p->data + 14, 20));
  p->hdr.dirty = kDirtyIpv4;
  deparser_.Deparse(*p);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(p->data + 14, 20));
  EXPECT_EQ(p->hdr.dirty, 0);
}

TEST_F(DeparserTest, PayloadRewriteWithDirtyL4GivesValidUdpChecksum) {
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  const uint16_t before = Udp(p)->Checksum();
  p->data[p->hdr.payload + 3] ^= 0x5A;
  EXPECT_FALSE(UdpOk(p));
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_NE(Udp(p)->Checksum(), before);
  EXPECT_NE(Udp(p)->Checksum(), 0);
  EXPECT_TRUE(UdpOk(p));
  EXPECT_TRUE(Ipv4HeaderChecksumOk(p->data + 14, 20));
  EXPECT_EQ(p->hdr.dirty, 0);
}

TEST_F(DeparserTest, WithoutDirtyBitsNothingIsRecomputed) {
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  p->data[p->hdr.payload] ^= 0xFF;
  const auto bytes = Bytes(*p);
  deparser_.Deparse(*p);
  EXPECT_EQ(Bytes(*p), bytes);
}

TEST_F(DeparserTest, UdpChecksumZeroOnInputStaysZero) {
  Packet* p = MakeParsed(parser_, UdpFrame().NoUdpChecksum().Build());
  p->data[p->hdr.payload] ^= 0xFF;
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_EQ(Udp(p)->Checksum(), 0);
}

TEST_F(DeparserTest, ZeroUdpChecksumConfigWritesZero) {
  Deparser zeroing(DeparserConfig{.zero_udp_checksum = true});
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  ASSERT_NE(Udp(p)->Checksum(), 0);
  p->hdr.dirty = kDirtyL4 | kDirtyIpv4;
  zeroing.Deparse(*p);
  EXPECT_EQ(Udp(p)->Checksum(), 0);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(p->data + 14, 20));
}

TEST_F(DeparserTest, TcpRewriteWithDirtyL4GivesValidTcpChecksum) {
  const uint8_t options[4] = {0x02, 0x04, 0x05, 0xb4};
  Packet* p = MakeParsed(parser_, TcpFrame().TcpOptions(options).Build());
  auto* tcp = HeaderAt<TcpHeader>(p->data + p->hdr.tcp);
  tcp->SetSeqNum(123456);
  p->data[p->hdr.payload + 1] = 0x77;
  const uint32_t tcp_len = Ip(p)->TotalLength() - 20u;
  EXPECT_FALSE(TcpChecksumOk(p->data + 14, p->data + p->hdr.tcp, tcp_len));
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_TRUE(TcpChecksumOk(p->data + 14, p->data + p->hdr.tcp, tcp_len));
}

TEST_F(DeparserTest, FragmentL4ChecksumIsLeftAlone) {
  Packet* p = MakeParsed(parser_, UdpFrame().FlagsFragmentOffset(kIpv4FlagMf).Build());
  const uint16_t before = Udp(p)->Checksum();
  p->data[p->hdr.payload] ^= 0xFF;
  p->hdr.dirty = kDirtyL4;
  deparser_.Deparse(*p);
  EXPECT_EQ(Udp(p)->Checksum(), before);
}

TEST_F(DeparserTest, PushThenPopVlanRoundTrip) {
  const auto untagged = UdpFrame().Build();
  Packet* p = MakeParsed(parser_, untagged);
  const ParsedHeaders before = p->hdr;
  ASSERT_TRUE(PushVlan(*p, MakeVlanTci(2, false, 300)));
  EXPECT_EQ(Bytes(*p), UdpFrame().Vlan(MakeVlanTci(2, false, 300)).Build());
  EXPECT_EQ(p->hdr.vlan_count, 1);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.ipv4, before.ipv4 + 4);
  EXPECT_EQ(p->hdr.udp, before.udp + 4);
  EXPECT_EQ(p->hdr.payload, before.payload + 4);
  EXPECT_EQ(p->hdr.parsed_bytes, before.parsed_bytes + 4);
  // The offsets agree with a fresh parse of the new bytes.
  Packet* reparsed = MakeParsed(parser_, Bytes(*p));
  EXPECT_EQ(reparsed->hdr.vlan[0], p->hdr.vlan[0]);
  EXPECT_EQ(reparsed->hdr.ipv4, p->hdr.ipv4);
  EXPECT_EQ(reparsed->hdr.payload, p->hdr.payload);

  ASSERT_TRUE(PopVlan(*p));
  EXPECT_EQ(Bytes(*p), untagged);
  EXPECT_EQ(p->hdr.vlan_count, 0);
  EXPECT_EQ(p->hdr.vlan[0], kHeaderAbsent);
  EXPECT_EQ(p->hdr.ipv4, before.ipv4);
  EXPECT_EQ(p->hdr.udp, before.udp);
  EXPECT_EQ(p->hdr.payload, before.payload);
  EXPECT_FALSE(PopVlan(*p));
}

TEST_F(DeparserTest, PushOuterTagMakesQinQAndPopRestoresInner) {
  Packet* p = MakeParsed(parser_, TcpFrame().Vlan(20).Build());
  ASSERT_TRUE(PushVlan(*p, 10, kEtherTypeQinQ));
  EXPECT_EQ(Bytes(*p), TcpFrame().Vlan(10, kEtherTypeQinQ).Vlan(20).Build());
  EXPECT_EQ(p->hdr.vlan_count, 2);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.vlan[1], 18);
  EXPECT_EQ(p->hdr.tcp, 42);
  EXPECT_FALSE(PushVlan(*p, 30));  // at kMaxVlanTags
  ASSERT_TRUE(PopVlan(*p));
  EXPECT_EQ(Bytes(*p), TcpFrame().Vlan(20).Build());
  EXPECT_EQ(p->hdr.vlan_count, 1);
  EXPECT_EQ(p->hdr.vlan[0], 14);
  EXPECT_EQ(p->hdr.vlan[1], kHeaderAbsent);
  EXPECT_EQ(p->hdr.tcp, 38);
}

TEST_F(DeparserTest, PushVlanFailsWithoutHeadroomOrParse) {
  Packet* unparsed = Make(UdpFrame().Build());
  EXPECT_FALSE(PushVlan(*unparsed, 1));
  Packet* p = MakeParsed(parser_, UdpFrame().Build());
  p->headroom = 3;
  const auto bytes = Bytes(*p);
  EXPECT_FALSE(PushVlan(*p, 1));
  EXPECT_EQ(Bytes(*p), bytes);
  EXPECT_EQ(p->hdr.vlan_count, 0);
}

TEST_F(DeparserTest, PushVlanOnL2OnlyFrame) {
  Packet* p = MakeParsed(
      parser_, FrameBuilder().Eth(kMacB, kMacA).EtherType(kEtherTypeArp).Payload(28).Build());
  ASSERT_TRUE(PushVlan(*p, 5));
  EXPECT_EQ(Bytes(*p),
            FrameBuilder().Eth(kMacB, kMacA).Vlan(5).EtherType(kEtherTypeArp).Payload(28).Build());
  EXPECT_EQ(p->hdr.payload, 18);
  EXPECT_FALSE(p->hdr.has_ipv4());
}

}  // namespace
}  // namespace swemu
