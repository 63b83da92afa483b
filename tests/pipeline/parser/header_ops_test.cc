#include "pipeline/parser/header_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "pipeline/wire/udp.h"
#include "tests/pipeline/parser/parser_test_util.h"

namespace swemu {
namespace {

using testing::kMacA;
using testing::kMacB;
using testing::Udp6Frame;
using testing::UdpFrame;

class HeaderOpsTest : public testing::PacketTest {
 protected:
  Ipv4Header* Ip(Packet* p) { return HeaderAt<Ipv4Header>(p->data + p->hdr.ipv4); }
  bool ChecksumsOk(Packet* p) {
    const uint8_t* ip = p->data + p->hdr.ipv4;
    const auto* udp = HeaderAt<UdpHeader>(p->data + p->hdr.udp);
    return Ipv4HeaderChecksumOk(ip, Ip(p)->HeaderLen()) &&
           UdpChecksumOk(ip, p->data + p->hdr.udp, udp->Length());
  }

  Parser parser_{ParserConfig{}};
};

TEST_F(HeaderOpsTest, DecrementTtlKeepsChecksumValid) {
  Packet* p = MakeParsed(parser_, UdpFrame().Ttl(64).Build());
  DecrementTtl(*p);
  EXPECT_EQ(Ip(p)->ttl, 63);
  EXPECT_TRUE(ChecksumsOk(p));
  EXPECT_EQ(Bytes(*p), UdpFrame().Ttl(63).Build());
  EXPECT_EQ(p->hdr.dirty, 0);
}

TEST_F(HeaderOpsTest, DecrementTtlLeavesZeroAlone) {
  Packet* p = MakeParsed(parser_, UdpFrame().Ttl(0).Build());
  DecrementTtl(*p);
  EXPECT_EQ(Ip(p)->ttl, 0);
  EXPECT_TRUE(ChecksumsOk(p));
}

TEST_F(HeaderOpsTest, MarkEcnCeOnEctPackets) {
  for (uint8_t ecn : {kEcnEct0, kEcnEct1}) {
    Packet* p = MakeParsed(parser_, UdpFrame().Tos(MakeTos(26, ecn)).Build());
    EXPECT_TRUE(MarkEcnCe(*p));
    EXPECT_EQ(Ip(p)->tos, MakeTos(26, kEcnCe));
    EXPECT_TRUE(p->meta.ecn_marked);
    EXPECT_TRUE(ChecksumsOk(p));
    EXPECT_EQ(Bytes(*p), UdpFrame().Tos(MakeTos(26, kEcnCe)).Build());
  }
}

TEST_F(HeaderOpsTest, MarkEcnCeOnCeAndNotEct) {
  Packet* ce = MakeParsed(parser_, UdpFrame().Tos(MakeTos(0, kEcnCe)).Build());
  const auto ce_bytes = Bytes(*ce);
  EXPECT_TRUE(MarkEcnCe(*ce));
  EXPECT_FALSE(ce->meta.ecn_marked);  // already CE upstream: this switch changed nothing
  EXPECT_EQ(Bytes(*ce), ce_bytes);

  Packet* not_ect = MakeParsed(parser_, UdpFrame().Tos(MakeTos(46, kEcnNotEct)).Build());
  const auto bytes = Bytes(*not_ect);
  EXPECT_FALSE(MarkEcnCe(*not_ect));
  EXPECT_FALSE(not_ect->meta.ecn_marked);
  EXPECT_EQ(Bytes(*not_ect), bytes);
}

TEST_F(HeaderOpsTest, SetTosAndDscpKeepChecksumValid) {
  Packet* p = MakeParsed(parser_, UdpFrame().Tos(MakeTos(0, kEcnEct0)).Build());
  SetIpv4Dscp(*p, 46);
  EXPECT_EQ(Bytes(*p), UdpFrame().Tos(MakeTos(46, kEcnEct0)).Build());
  SetIpv4Tos(*p, 0x11);
  EXPECT_EQ(Bytes(*p), UdpFrame().Tos(0x11).Build());
  EXPECT_TRUE(ChecksumsOk(p));
}

TEST_F(HeaderOpsTest, RandomSequencesKeepChecksumValid) {
  std::mt19937 rng(5);
  const uint8_t options[4] = {0x94, 0x04, 0, 0};
  Packet* p = MakeParsed(parser_, UdpFrame().Ipv4Options(options).Ttl(255).Build());
  for (int i = 0; i < 2000; ++i) {
    switch (rng() % 3) {
      case 0:
        SetIpv4Tos(*p, static_cast<uint8_t>(rng()));
        break;
      case 1:
        DecrementTtl(*p);
        break;
      default:
        MarkEcnCe(*p);
    }
    ASSERT_TRUE(ChecksumsOk(p)) << i;
  }
}

TEST_F(HeaderOpsTest, NonIpv4PacketsAreLeftAlone) {
  Packet* p = MakeParsed(
      parser_, FrameBuilder().Eth(kMacB, kMacA).EtherType(kEtherTypeArp).Payload(28).Build());
  const auto bytes = Bytes(*p);
  DecrementTtl(*p);
  SetIpv4Tos(*p, 0xFF);
  EXPECT_FALSE(MarkEcnCe(*p));
  EXPECT_EQ(Bytes(*p), bytes);
}

// IPv6: the hop limit and the traffic class's ECN bits, no checksum; the SetIpv4* leave it.
TEST_F(HeaderOpsTest, Ipv6HopLimitAndEcnChangeOnlyTheirBits) {
  Packet* p = MakeParsed(parser_, Udp6Frame().Ttl(64).Tos((10 << 2) | kEcnEct0).Build());
  DecrementTtl(*p);
  EXPECT_TRUE(MarkEcnCe(*p));
  EXPECT_TRUE(p->meta.ecn_marked);
  SetIpv4Dscp(*p, 46);
  SetIpv4Tos(*p, 0);
  EXPECT_EQ(Bytes(*p), Udp6Frame().Ttl(63).Tos((10 << 2) | kEcnCe).Build());
  Packet* zero = MakeParsed(parser_, Udp6Frame().Ttl(0).Build());
  DecrementTtl(*zero);
  EXPECT_EQ(Bytes(*zero), Udp6Frame().Ttl(0).Build());
  Packet* not_ect = MakeParsed(parser_, Udp6Frame().Tos(10 << 2).Build());
  EXPECT_FALSE(MarkEcnCe(*not_ect));
  EXPECT_FALSE(not_ect->meta.ecn_marked);
  EXPECT_EQ(Bytes(*not_ect), Udp6Frame().Tos(10 << 2).Build());
}

}  // namespace
}  // namespace swemu
