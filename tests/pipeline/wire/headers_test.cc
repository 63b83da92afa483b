#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

TEST(ByteOrderTest, LoadsAndStoresBigEndianAtOddAddresses) {
  uint8_t buf[17] = {};
  StoreBe16(buf + 1, 0x1234);
  StoreBe32(buf + 3, 0x89ABCDEF);
  StoreBe64(buf + 7, 0x0102030405060708ULL);
  EXPECT_EQ(buf[1], 0x12);
  EXPECT_EQ(buf[2], 0x34);
  EXPECT_EQ(buf[3], 0x89);
  EXPECT_EQ(buf[6], 0xEF);
  EXPECT_EQ(buf[7], 0x01);
  EXPECT_EQ(buf[14], 0x08);
  EXPECT_EQ(LoadBe16(buf + 1), 0x1234);
  EXPECT_EQ(LoadBe32(buf + 3), 0x89ABCDEFu);
  EXPECT_EQ(LoadBe64(buf + 7), 0x0102030405060708ULL);
}

TEST(WireHeadersTest, FieldOffsetsMatchTheStandards) {
  EXPECT_EQ(offsetof(EthernetHeader, ether_type), 12u);
  EXPECT_EQ(offsetof(VlanTag, ether_type), 2u);
  EXPECT_EQ(offsetof(Ipv4Header, ttl), 8u);
  EXPECT_EQ(offsetof(Ipv4Header, header_checksum), 10u);
  EXPECT_EQ(offsetof(Ipv4Header, src_addr), 12u);
  EXPECT_EQ(offsetof(Ipv4Header, dst_addr), 16u);
  EXPECT_EQ(offsetof(UdpHeader, checksum), 6u);
  EXPECT_EQ(offsetof(TcpHeader, data_offset), 12u);
  EXPECT_EQ(offsetof(TcpHeader, checksum), 16u);
  EXPECT_EQ(sizeof(EthernetHeader), 14u);
  EXPECT_EQ(sizeof(VlanTag), 4u);
  EXPECT_EQ(sizeof(Ipv4Header), 20u);
  EXPECT_EQ(sizeof(UdpHeader), 8u);
  EXPECT_EQ(sizeof(TcpHeader), 20u);
}

TEST(WireHeadersTest, EthernetRoundTrip) {
  EthernetFields in{MacAddr::FromU64(0x001122334455), MacAddr::FromU64(0x66778899AABB),
                    kEtherTypeArp};
  uint8_t buf[kEthernetHeaderLen];
  in.Encode(buf);
  EXPECT_EQ(buf[0], 0x00);
  EXPECT_EQ(buf[5], 0x55);
  EXPECT_EQ(buf[6], 0x66);
  EXPECT_EQ(buf[12], 0x08);
  EXPECT_EQ(buf[13], 0x06);
  auto out = EthernetFields::Decode(buf, sizeof(buf));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, in);
  EXPECT_FALSE(EthernetFields::Decode(buf, sizeof(buf) - 1).has_value());
}

TEST(WireHeadersTest, VlanRoundTripAndTciBits) {
  const uint16_t tci = MakeVlanTci(5, true, 0xABC);
  EXPECT_EQ(tci, 0xBABC);
  VlanFields in{tci, kEtherTypeIpv4};
  uint8_t buf[kVlanTagLen];
  in.Encode(buf);
  const auto* tag = HeaderAt<VlanTag>(buf);
  EXPECT_EQ(tag->Pcp(), 5);
  EXPECT_TRUE(tag->Dei());
  EXPECT_EQ(tag->Vid(), 0xABC);
  auto out = VlanFields::Decode(buf, sizeof(buf));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, in);
  EXPECT_FALSE(VlanFields::Decode(buf, 3).has_value());
  EXPECT_TRUE(IsVlanTpid(kEtherTypeVlan));
  EXPECT_TRUE(IsVlanTpid(kEtherTypeQinQ));
  EXPECT_FALSE(IsVlanTpid(kEtherTypeIpv4));
}

TEST(WireHeadersTest, Ipv4RoundTripAndAccessors) {
  Ipv4Fields in;
  in.ihl = 6;
  in.tos = MakeTos(46, kEcnEct0);
  in.total_length = 1500;
  in.identification = 0xBEEF;
  in.flags_fragment_offset = kIpv4FlagMf | 185;
  in.ttl = 3;
  in.protocol = kIpProtoUdp;
  in.header_checksum = 0x1234;
  in.src_addr = MakeIpv4Addr(10, 0, 0, 1);
  in.dst_addr = MakeIpv4Addr(192, 168, 1, 2);
  uint8_t buf[kIpv4MinHeaderLen];
  in.Encode(buf);
  EXPECT_EQ(buf[0], 0x46);
  EXPECT_EQ(buf[12], 10);
  EXPECT_EQ(buf[19], 2);
  const auto* h = HeaderAt<Ipv4Header>(buf);
  EXPECT_EQ(h->HeaderLen(), 24);
  EXPECT_EQ(h->Dscp(), 46);
  EXPECT_EQ(h->Ecn(), kEcnEct0);
  EXPECT_TRUE(h->MoreFragments());
  EXPECT_FALSE(h->DontFragment());
  EXPECT_EQ(h->FragmentOffset(), 185);
  EXPECT_TRUE(h->IsFragment());
  auto out = Ipv4Fields::Decode(buf, sizeof(buf));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, in);
  EXPECT_FALSE(Ipv4Fields::Decode(buf, 19).has_value());
}

TEST(WireHeadersTest, TosHelpersSplitDscpAndEcn) {
  EXPECT_EQ(MakeTos(46, kEcnCe), 0xBB);
  EXPECT_EQ(TosDscp(0xBB), 46);
  EXPECT_EQ(TosEcn(0xBB), kEcnCe);
  EXPECT_EQ(TosWithEcn(0xB8, kEcnEct1), 0xB9);
  EXPECT_EQ(TosWithDscp(0x03, 10), 0x2B);
  EXPECT_EQ(kEcnNotEct, 0);
  EXPECT_EQ(kEcnEct1, 1);
  EXPECT_EQ(kEcnEct0, 2);
  EXPECT_EQ(kEcnCe, 3);
}

TEST(WireHeadersTest, UdpRoundTrip) {
  UdpFields in{4791, 9000, 108, 0xFFFF};
  uint8_t buf[kUdpHeaderLen];
  in.Encode(buf);
  EXPECT_EQ(buf[0], 0x12);
  EXPECT_EQ(buf[1], 0xB7);
  auto out = UdpFields::Decode(buf, sizeof(buf));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, in);
  EXPECT_FALSE(UdpFields::Decode(buf, 7).has_value());
}

TEST(WireHeadersTest, TcpRoundTrip) {
  TcpFields in{443,   51000,  0x01020304, 0xA0B0C0D0, 8, kTcpSyn | kTcpAck | kTcpEce,
               29200, 0x55AA, 7};
  uint8_t buf[kTcpMinHeaderLen];
  in.Encode(buf);
  EXPECT_EQ(buf[12], 0x80);
  EXPECT_EQ(buf[13], 0x52);
  EXPECT_EQ(HeaderAt<TcpHeader>(buf)->HeaderLen(), 32);
  auto out = TcpFields::Decode(buf, sizeof(buf));
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, in);
  EXPECT_FALSE(TcpFields::Decode(buf, 19).has_value());
}

}  // namespace
}  // namespace swemu
