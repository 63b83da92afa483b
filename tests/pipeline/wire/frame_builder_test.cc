#include "pipeline/wire/frame_builder.h"

#include <gtest/gtest.h>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

const MacAddr kDst = MacAddr::FromU64(0x020000000002);
const MacAddr kSrc = MacAddr::FromU64(0x020000000001);
const Ipv4Addr kSrcIp = MakeIpv4Addr(10, 0, 0, 1);
const Ipv4Addr kDstIp = MakeIpv4Addr(10, 0, 0, 2);

TEST(FrameBuilderTest, EthVlanIpv4UdpHasRightLengthsAndChecksums) {
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Vlan(MakeVlanTci(3, false, 100))
                   .Ipv4(kSrcIp, kDstIp)
                   .Tos(MakeTos(10, kEcnEct0))
                   .Ttl(17)
                   .Udp(1111, 2222)
                   .Payload(10)
                   .Build();
  ASSERT_EQ(frame.size(), 14u + 4 + 20 + 8 + 10);
  const auto* eth = HeaderAt<EthernetHeader>(frame.data());
  EXPECT_EQ(eth->DstAddr(), kDst);
  EXPECT_EQ(eth->SrcAddr(), kSrc);
  EXPECT_EQ(eth->EtherType(), kEtherTypeVlan);
  const auto* tag = HeaderAt<VlanTag>(frame.data() + 14);
  EXPECT_EQ(tag->Vid(), 100);
  EXPECT_EQ(tag->Pcp(), 3);
  EXPECT_EQ(tag->EtherType(), kEtherTypeIpv4);
  const uint8_t* ip = frame.data() + 18;
  const auto* iph = HeaderAt<Ipv4Header>(ip);
  EXPECT_EQ(iph->Version(), 4);
  EXPECT_EQ(iph->HeaderLen(), 20);
  EXPECT_EQ(iph->TotalLength(), 38);
  EXPECT_EQ(iph->ttl, 17);
  EXPECT_EQ(iph->tos, MakeTos(10, kEcnEct0));
  EXPECT_EQ(iph->protocol, kIpProtoUdp);
  EXPECT_EQ(iph->SrcAddr(), kSrcIp);
  EXPECT_EQ(iph->DstAddr(), kDstIp);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(ip, 20));
  const auto* udp = HeaderAt<UdpHeader>(ip + 20);
  EXPECT_EQ(udp->SrcPort(), 1111);
  EXPECT_EQ(udp->DstPort(), 2222);
  EXPECT_EQ(udp->Length(), 18);
  EXPECT_NE(udp->Checksum(), 0);
  EXPECT_TRUE(UdpChecksumOk(ip, ip + 20, 18));
}

TEST(FrameBuilderTest, QinQTagsChainTheirEtherTypes) {
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Vlan(10, kEtherTypeQinQ)
                   .Vlan(20)
                   .EtherType(kEtherTypeArp)
                   .Payload(28)
                   .Build();
  ASSERT_EQ(frame.size(), 14u + 8 + 28);
  EXPECT_EQ(HeaderAt<EthernetHeader>(frame.data())->EtherType(), kEtherTypeQinQ);
  EXPECT_EQ(HeaderAt<VlanTag>(frame.data() + 14)->Vid(), 10);
  EXPECT_EQ(HeaderAt<VlanTag>(frame.data() + 14)->EtherType(), kEtherTypeVlan);
  EXPECT_EQ(HeaderAt<VlanTag>(frame.data() + 18)->Vid(), 20);
  EXPECT_EQ(HeaderAt<VlanTag>(frame.data() + 18)->EtherType(), kEtherTypeArp);
}

TEST(FrameBuilderTest, TcpWithOptionsAndIpv4Options) {
  const uint8_t ip_opts[] = {0x94, 0x04, 0x00, 0x00};         // Router Alert
  const uint8_t tcp_opts[] = {0x02, 0x04, 0x05, 0xb4, 0x01};  // MSS 1460, NOP (padded to 8)
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Ipv4(kSrcIp, kDstIp)
                   .Ipv4Options(ip_opts)
                   .Tcp(80, 40000, kTcpSyn, 1000)
                   .TcpOptions(tcp_opts)
                   .Payload(5)
                   .Build();
  ASSERT_EQ(frame.size(), 14u + 24 + 28 + 5);
  const uint8_t* ip = frame.data() + 14;
  const auto* iph = HeaderAt<Ipv4Header>(ip);
  EXPECT_EQ(iph->Ihl(), 6);
  EXPECT_EQ(iph->TotalLength(), 24 + 28 + 5);
  EXPECT_EQ(iph->protocol, kIpProtoTcp);
  EXPECT_EQ(ip[20], 0x94);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(ip, 24));
  const auto* tcp = HeaderAt<TcpHeader>(ip + 24);
  EXPECT_EQ(tcp->HeaderLen(), 28);
  EXPECT_EQ(tcp->flags, kTcpSyn);
  EXPECT_EQ(tcp->SeqNum(), 1000u);
  EXPECT_EQ(ip[24 + 20], 0x02);
  EXPECT_EQ(ip[24 + 25], 0x00);  // padding
  EXPECT_TRUE(TcpChecksumOk(ip, ip + 24, 28 + 5));
}

TEST(FrameBuilderTest, PadToAddsEthernetPaddingOutsideTheDatagram) {
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Ipv4(kSrcIp, kDstIp)
                   .Udp(1, 2)
                   .NoUdpChecksum()
                   .PadTo(60)
                   .Build();
  ASSERT_EQ(frame.size(), 60u);
  const auto* iph = HeaderAt<Ipv4Header>(frame.data() + 14);
  EXPECT_EQ(iph->TotalLength(), 28);
  EXPECT_EQ(HeaderAt<UdpHeader>(frame.data() + 34)->Length(), 8);
  EXPECT_EQ(HeaderAt<UdpHeader>(frame.data() + 34)->Checksum(), 0);
  EXPECT_EQ(frame[59], 0);
}

TEST(FrameBuilderTest, FragmentWithRawProtocol) {
  auto frame = FrameBuilder()
                   .Eth(kDst, kSrc)
                   .Ipv4(kSrcIp, kDstIp)
                   .Protocol(kIpProtoUdp)
                   .FlagsFragmentOffset(kIpv4FlagMf | 3)
                   .Identification(77)
                   .Payload(24)
                   .Build();
  const auto* iph = HeaderAt<Ipv4Header>(frame.data() + 14);
  EXPECT_EQ(iph->protocol, kIpProtoUdp);
  EXPECT_EQ(iph->FragmentOffset(), 3);
  EXPECT_TRUE(iph->MoreFragments());
  EXPECT_EQ(iph->Identification(), 77);
  EXPECT_EQ(iph->TotalLength(), 44);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(frame.data() + 14, 20));
}

}  // namespace
}  // namespace swemu
