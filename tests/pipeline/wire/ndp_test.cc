// Neighbour discovery's NS and NA: bytes as RFC 4861 lays them out, the ICMPv6 checksum over
// the IPv6 pseudo-header (a vector computed apart from swemu), and what Decode refuses.
#include "pipeline/wire/ndp.h"

#include <gtest/gtest.h>

#include <vector>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ipv6.h"

namespace swemu {
namespace {

const Ipv6Addr kGateway = *ParseIpv6("2001:db8:1::1");
const Ipv6Addr kHost = *ParseIpv6("2001:db8:1::2");
constexpr uint64_t kMac = 0x02000000FE01;

TEST(NdpTest, AdvertisementBytesAndChecksum) {
  uint8_t ip6[kIpv6HeaderLen + kNdMaxLen];
  const NdFields na{kNdNeighborAdvert, kNaRouter | kNaSolicited | kNaOverride, kGateway, kMac};
  ASSERT_EQ(WriteNdPacket(ip6, kGateway, kHost, na), sizeof(ip6));
  const auto* h = HeaderAt<Ipv6Header>(ip6);
  EXPECT_EQ(h->Version(), 6);
  EXPECT_EQ(h->PayloadLength(), 32);
  EXPECT_EQ(h->next_header, kIpProtoIcmpv6);
  EXPECT_EQ(h->hop_limit, 255);
  EXPECT_EQ(h->SrcAddr(), kGateway);
  EXPECT_EQ(h->DstAddr(), kHost);
  const uint8_t* icmp = ip6 + kIpv6HeaderLen;
  const std::vector<uint8_t> head(icmp, icmp + 8);
  // Type 136, code 0, checksum 0x0c6f (Python's sum over the pseudo-header), flags R|S|O.
  EXPECT_EQ(head, (std::vector<uint8_t>{136, 0, 0x0C, 0x6F, 0xE0, 0, 0, 0}));
  EXPECT_EQ(Ipv6Addr::FromBytes(icmp + 8), kGateway);
  const std::vector<uint8_t> option(icmp + 24, icmp + 32);
  EXPECT_EQ(option, (std::vector<uint8_t>{2, 1, 0x02, 0, 0, 0, 0xFE, 0x01}));
  // The checksum verifies: pseudo-header plus message sum to all ones.
  EXPECT_EQ(
      FoldSum(uint64_t{Ipv6PseudoHeaderSum(ip6, kIpProtoIcmpv6, 32)} + OnesComplementSum(icmp, 32)),
      0xFFFFu);
  EXPECT_EQ(NdFields::Decode(icmp, 32), na);
}

TEST(NdpTest, SolicitationRoundTripsWithAndWithoutItsSourceOption) {
  uint8_t icmp[kNdMaxLen];
  const NdFields ns{kNdNeighborSolicit, 0, kHost, kMac};
  ASSERT_EQ(ns.Encode(icmp), kNdMaxLen);
  EXPECT_EQ(icmp[kNdHeaderLen], kNdOptSourceLinkAddr);
  EXPECT_EQ(NdFields::Decode(icmp, kNdMaxLen), ns);
  const NdFields dad{kNdNeighborSolicit, 0, kHost, 0};
  ASSERT_EQ(dad.Encode(icmp), kNdHeaderLen);
  EXPECT_EQ(NdFields::Decode(icmp, kNdHeaderLen), dad);
}

TEST(NdpTest, DecodeRefusesWhatRfc4861Discards) {
  uint8_t icmp[kNdMaxLen + 8];
  const NdFields ns{kNdNeighborSolicit, 0, kHost, kMac};
  ns.Encode(icmp);
  EXPECT_FALSE(NdFields::Decode(icmp, kNdHeaderLen - 1));  // short
  icmp[1] = 1;
  EXPECT_FALSE(NdFields::Decode(icmp, kNdMaxLen));  // code not 0
  icmp[1] = 0;
  icmp[kNdHeaderLen + 1] = 0;
  EXPECT_FALSE(NdFields::Decode(icmp, kNdMaxLen));  // an option of length 0
  icmp[kNdHeaderLen + 1] = 2;
  EXPECT_FALSE(NdFields::Decode(icmp, kNdMaxLen));  // an option past the end
  NdFields{kNdNeighborSolicit, 0, *ParseIpv6("ff02::1"), kMac}.Encode(icmp);
  EXPECT_FALSE(NdFields::Decode(icmp, kNdMaxLen));  // a multicast target
  icmp[0] = kIcmpv6EchoRequest;
  EXPECT_FALSE(NdFields::Decode(icmp, kNdMaxLen));  // not ND
}

}  // namespace
}  // namespace swemu
