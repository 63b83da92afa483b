// l2l3 with IPv6 router interfaces through one switch on a virtual clock: neighbour
// solicitations for the gateways (global and link-local) trapped and answered with
// advertisements, IPv6 next hops resolved by solicitations to the solicited-node group (retried,
// then failed; held packets sent once answered), ICMPv6 echo to a gateway, route_add through an
// IPv6 neighbour and `show ndp`.
#include <gtest/gtest.h>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/ndp.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

constexpr TimeNs kSecond = 1'000'000'000;
constexpr uint64_t kGw1Mac = 0x02000000FE01;
constexpr uint64_t kGw2Mac = 0x02000000FE02;
const MacAddr kHostA = MacAddr::FromU64(0x02000000000A);
const MacAddr kHostB = MacAddr::FromU64(0x02000000000B);
const Ipv6Addr kIpA = *ParseIpv6("2001:db8:1::a");
const Ipv6Addr kIpB = *ParseIpv6("2001:db8:2::b");
const Ipv6Addr kGw1 = *ParseIpv6("2001:db8:1::1");
const Ipv6Addr kGw2 = *ParseIpv6("2001:db8:2::1");
constexpr std::size_t kIp6 = kEthernetHeaderLen;  // where the IPv6 header starts (untagged)

// Two subnets, each with IPv4 and IPv6: 2001:db8:1::/64 on ports 0-1 (host A on 0),
// 2001:db8:2::/64 on ports 2-3 (B on 2).
SwitchConfig RouterConfig() {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "l2l3";
  config.interfaces = {{1, kGw1Mac, 0x0A010101, 24, {0, 1}, kGw1, 64},
                       {2, kGw2Mac, 0x0A020201, 24, {2, 3}, kGw2, 64}};
  return config;
}

std::vector<uint8_t> NdFrame(uint64_t eth_dst, MacAddr eth_src, const Ipv6Addr& src,
                             const Ipv6Addr& dst, const NdFields& nd) {
  std::vector<uint8_t> frame(kIp6 + kIpv6HeaderLen + kNdMaxLen);
  StoreBe48(frame.data(), eth_dst);
  StoreBe48(frame.data() + 6, eth_src.ToU64());
  StoreBe16(frame.data() + 12, kEtherTypeIpv6);
  frame.resize(kIp6 + WriteNdPacket(frame.data() + kIp6, src, dst, nd));
  return frame;
}

// Host A's solicitation for `target` (one of the gateway's addresses).
std::vector<uint8_t> SolicitFromA(const Ipv6Addr& target) {
  const Ipv6Addr group = SolicitedNodeIpv6(target);
  return NdFrame(Ipv6MulticastMac(group).ToU64(), kHostA, kIpA, group,
                 {kNdNeighborSolicit, 0, target, kHostA.ToU64()});
}

std::vector<uint8_t> Udp6(MacAddr src, const Ipv6Addr& src_ip, const Ipv6Addr& dst_ip,
                          uint64_t dst_mac) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(dst_mac), src)
      .Ipv6(src_ip, dst_ip)
      .Udp(1000, 2000)
      .Payload(32)
      .Build();
}

std::optional<NdFields> NdOf(const SentFrame& f) {
  if (f.bytes.size() < kIp6 + kIpv6HeaderLen + kNdHeaderLen ||
      LoadBe16(f.bytes.data() + 12) != kEtherTypeIpv6 || f.bytes[kIp6 + 6] != kIpProtoIcmpv6) {
    return std::nullopt;
  }
  return NdFields::Decode(f.bytes.data() + kIp6 + kIpv6HeaderLen,
                          f.bytes.size() - kIp6 - kIpv6HeaderLen);
}

// The ICMPv6 checksum of a sent frame verifies over its pseudo-header.
bool Icmpv6ChecksumOk(const SentFrame& f) {
  const uint8_t* ip6 = f.bytes.data() + kIp6;
  const std::size_t len = HeaderAt<Ipv6Header>(ip6)->PayloadLength();
  const uint8_t* icmp = ip6 + kIpv6HeaderLen;
  return FoldSum(uint64_t{Ipv6PseudoHeaderSum(ip6, kIpProtoIcmpv6, static_cast<uint32_t>(len))} +
                 OnesComplementSum(icmp, len)) == 0xFFFF;
}

class L2l3NdTest : public ::testing::Test {
 protected:
  L2l3NdTest() : h_(RouterConfig()) {}
  void SetUp() override { ASSERT_TRUE(h_.ok()) << h_.error(); }

  std::vector<SentFrame> RunUntil(TimeNs until) { return h_.RunCpuUntil(until); }
  void ExpectConservation() { testing::ExpectConservation(h_); }
  // B answers a solicitation of the switch's: an advertisement to the gateway's address.
  void AdvertiseB(PortId port, const Ipv6Addr& ip) {
    h_.Send(port, NdFrame(kGw2Mac, kHostB, ip, kGw2,
                          {kNdNeighborAdvert, kNaSolicited | kNaOverride, ip, kHostB.ToU64()}));
  }
  SwitchHarness h_;
};

TEST_F(L2l3NdTest, AnswersASolicitationForItsGatewayWithAnAdvertisement) {
  h_.Send(0, SolicitFromA(kGw1));
  EXPECT_TRUE(h_.Drain().empty());  // nothing flooded: the solicitation went to the CPU
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 0);
  EXPECT_EQ(out[0].time, CpuPortConfig().latency_ns);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostA.ToU64());
  EXPECT_EQ(LoadBe48(out[0].bytes.data() + 6), kGw1Mac);
  const auto* ip6 = HeaderAt<Ipv6Header>(out[0].bytes.data() + kIp6);
  EXPECT_EQ(ip6->SrcAddr(), kGw1);
  EXPECT_EQ(ip6->DstAddr(), kIpA);
  EXPECT_EQ(ip6->hop_limit, 255);
  EXPECT_EQ(NdOf(out[0]),
            (NdFields{kNdNeighborAdvert, kNaRouter | kNaSolicited | kNaOverride, kGw1, kGw1Mac}));
  EXPECT_TRUE(Icmpv6ChecksumOk(out[0]));
  // The solicitation taught the switch where A is.
  Result<std::string> ndp = h_.Cmd("show ndp");
  ASSERT_TRUE(ndp.ok());
  EXPECT_NE(ndp->find("2001:db8:1::a                            02:00:00:00:00:0a  0     1         "
                      "REACHABLE"),
            std::string::npos)
      << *ndp;
  EXPECT_NE(ndp->find("1 entries; solicitations sent 0, advertisements sent 1"), std::string::npos)
      << *ndp;
  Result<std::string> arp = h_.Cmd("show arp");
  EXPECT_NE(arp->find("0 entries"), std::string::npos) << *arp;  // IPv6 is show ndp's
  ExpectConservation();
}

TEST_F(L2l3NdTest, AnswersForItsLinkLocalAddressToo) {
  const Ipv6Addr link_local = LinkLocalIpv6(kGw1Mac);
  h_.Send(1, SolicitFromA(link_local));
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(HeaderAt<Ipv6Header>(out[0].bytes.data() + kIp6)->SrcAddr(), link_local);
  EXPECT_EQ(NdOf(out[0])->target, link_local);
  EXPECT_TRUE(Icmpv6ChecksumOk(out[0]));
}

TEST_F(L2l3NdTest, AUnicastSolicitationIsAnsweredWithoutTheOptionItHasNoRoomFor) {
  // A host re-checking its router: to the gateway's address and the router MAC, no option.
  h_.Send(0, NdFrame(kGw1Mac, kHostA, kIpA, kGw1, {kNdNeighborSolicit, 0, kGw1, 0}));
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 0);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostA.ToU64());  // the frame's own source
  EXPECT_EQ(NdOf(out[0]),
            (NdFields{kNdNeighborAdvert, kNaRouter | kNaSolicited | kNaOverride, kGw1, 0}));
  EXPECT_TRUE(Icmpv6ChecksumOk(out[0]));
}

TEST_F(L2l3NdTest, DuplicateAddressDetectionAndBadHopLimitsAreNotAnswered) {
  const Ipv6Addr group = SolicitedNodeIpv6(kGw1);
  // A DAD probe for the gateway's address (source ::, no option) is left alone.
  h_.Send(0, NdFrame(Ipv6MulticastMac(group).ToU64(), kHostA, Ipv6Addr{}, group,
                     {kNdNeighborSolicit, 0, kGw1, 0}));
  // A solicitation that crossed a router (hop limit below 255) is not neighbour discovery.
  std::vector<uint8_t> routed = SolicitFromA(kGw1);
  routed[kIp6 + 7] = 254;
  h_.Send(0, routed);
  EXPECT_TRUE(RunUntil(kSecond / 2).empty());
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, 2u);
  EXPECT_EQ(h_.sw().Drops(RegisterDropReason("cpu_not_handled")), 1u);
  EXPECT_NE(h_.Cmd("show ndp")->find("0 entries"), std::string::npos);
  ExpectConservation();
}

TEST_F(L2l3NdTest, ASolicitationForAnotherHostIsBridgedNotTrapped) {
  const Ipv6Addr other = *ParseIpv6("2001:db8:1::3");
  h_.MustCmd("table_add dmac forward " + FormatMac(Ipv6MulticastMac(SolicitedNodeIpv6(other))) +
             " => 1");
  h_.Send(0, SolicitFromA(other));
  std::vector<SentFrame> out = RunUntil(kSecond);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, 0u);
}

TEST_F(L2l3NdTest, RoutesToAnUnresolvedHostOnceItAdvertises) {
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  // A solicitation for B to its solicited-node group out of both ports of B's subnet.
  ASSERT_EQ(out.size(), 2u);
  for (const SentFrame& f : out) {
    EXPECT_EQ(LoadBe48(f.bytes.data()), 0x3333FF00000BULL);
    EXPECT_EQ(LoadBe48(f.bytes.data() + 6), kGw2Mac);
    const auto* ip6 = HeaderAt<Ipv6Header>(f.bytes.data() + kIp6);
    EXPECT_EQ(ip6->SrcAddr(), kGw2);
    EXPECT_EQ(ip6->DstAddr(), *ParseIpv6("ff02::1:ff00:b"));
    EXPECT_EQ(NdOf(f), (NdFields{kNdNeighborSolicit, 0, kIpB, kGw2Mac}));
    EXPECT_TRUE(Icmpv6ChecksumOk(f));
  }
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(out[1].port, 3);
  AdvertiseB(2, kIpB);
  out = RunUntil(kSecond);
  ASSERT_EQ(out.size(), 1u);  // the held packet, routed
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostB.ToU64());
  EXPECT_EQ(LoadBe48(out[0].bytes.data() + 6), kGw2Mac);
  EXPECT_EQ(HeaderAt<Ipv6Header>(out[0].bytes.data() + kIp6)->hop_limit, 63);
  // The next one goes in the data plane alone.
  const uint64_t in_before = h_.sw().cpu().counters().packet_in;
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, in_before);
  Result<std::string> ndp = h_.Cmd("show ndp");
  EXPECT_NE(ndp->find("2001:db8:2::b"), std::string::npos) << *ndp;
  ExpectConservation();
}

// RFC 4861 7.2.5: an advertisement from another MAC replaces a resolved entry's only with the
// override flag (a proxy or anycast answer leaves it clear).
TEST_F(L2l3NdTest, AnAdvertisementWithoutOverrideKeepsAResolvedEntrysMac) {
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  RunUntil(kSecond / 2);
  AdvertiseB(2, kIpB);
  RunUntil(kSecond);
  const MacAddr other = MacAddr::FromU64(0x02000000000C);
  h_.Send(3, NdFrame(kGw2Mac, other, kIpB, kGw2,
                     {kNdNeighborAdvert, kNaSolicited, kIpB, other.ToU64()}));
  RunUntil(2 * kSecond);
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  std::vector<SentFrame> out = RunUntil(2 * kSecond + kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostB.ToU64());
  h_.Send(3, NdFrame(kGw2Mac, other, kIpB, kGw2,
                     {kNdNeighborAdvert, kNaSolicited | kNaOverride, kIpB, other.ToU64()}));
  RunUntil(3 * kSecond);
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  out = RunUntil(3 * kSecond + kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 3);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), other.ToU64());
  ExpectConservation();
}

TEST_F(L2l3NdTest, ThreeUnansweredSolicitationsThenTheHeldPacketsDrop) {
  for (int i = 0; i < 5; ++i) h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  std::vector<SentFrame> out = RunUntil(10 * kSecond);
  ASSERT_EQ(out.size(), 6u);  // 3 solicitations x 2 ports, a second apart
  EXPECT_EQ(out[2].time - out[0].time, kSecond);
  EXPECT_EQ(out[4].time - out[2].time, kSecond);
  EXPECT_EQ(h_.sw().Drops(RegisterDropReason("neighbour_queue_full")), 2u);
  EXPECT_EQ(h_.sw().Drops(RegisterDropReason("neighbour_unresolved")), 3u);
  Result<std::string> ndp = h_.Cmd("show ndp");
  EXPECT_NE(ndp->find("FAILED"), std::string::npos) << *ndp;
  ExpectConservation();
}

TEST_F(L2l3NdTest, ReachableAgesIntoAUnicastProbe) {
  h_.Send(0, Udp6(kHostA, kIpA, kIpB, kGw1Mac));
  RunUntil(kSecond / 2);
  AdvertiseB(2, kIpB);
  RunUntil(kSecond);
  // 30 s after B's advertisement (handled at 0.5 s) the entry is re-probed where B was, to its
  // own MAC and address; then again each second.
  std::vector<SentFrame> out = RunUntil(31 * kSecond);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostB.ToU64());
  EXPECT_EQ(HeaderAt<Ipv6Header>(out[0].bytes.data() + kIp6)->DstAddr(), kIpB);
  EXPECT_EQ(NdOf(out[0])->target, kIpB);
}

TEST_F(L2l3NdTest, AnswersPingToItsGateways) {
  const Ipv6Addr link_local = LinkLocalIpv6(kGw1Mac);
  for (const Ipv6Addr& gw : {kGw2, link_local}) {  // the other subnet's gateway; its link-local
    std::vector<uint8_t> ping = FrameBuilder()
                                    .Eth(MacAddr::FromU64(kGw1Mac), kHostA)
                                    .Ipv6(kIpA, gw)
                                    .Protocol(kIpProtoIcmpv6)
                                    .Payload(std::vector<uint8_t>{128, 0, 0, 0, 0, 1, 0, 1, 7, 7})
                                    .Build();
    uint8_t* ip6 = ping.data() + kIp6;
    StoreBe16(ip6 + kIpv6HeaderLen + 2, Icmpv6Checksum(ip6, ip6 + kIpv6HeaderLen, 10));
    h_.Send(0, ping);
    std::vector<SentFrame> out = RunUntil(h_.clock().NowNs() + kSecond);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].port, 0);
    EXPECT_EQ(LoadBe48(out[0].bytes.data()), kHostA.ToU64());
    EXPECT_EQ(LoadBe48(out[0].bytes.data() + 6), kGw1Mac);
    const auto* h = HeaderAt<Ipv6Header>(out[0].bytes.data() + kIp6);
    EXPECT_EQ(h->SrcAddr(), gw);
    EXPECT_EQ(h->DstAddr(), kIpA);
    EXPECT_EQ(out[0].bytes[kIp6 + kIpv6HeaderLen], 129);    // echo reply
    EXPECT_EQ(out[0].bytes[kIp6 + kIpv6HeaderLen + 9], 7);  // its data kept
    EXPECT_TRUE(Icmpv6ChecksumOk(out[0]));
  }
  EXPECT_NE(h_.Cmd("show ndp")->find("echo replies 2"), std::string::npos);
  ExpectConservation();
}

TEST_F(L2l3NdTest, RouteAddResolvesAnIpv6NextHopByNd) {
  const Ipv6Addr via = *ParseIpv6("2001:db8:2::9");
  h_.MustCmd("route_add 2001:db8:99::/48 2001:db8:2::9");
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 2u);  // asked at once, out of the subnet's ports
  AdvertiseB(3, via);
  RunUntil(kSecond);
  h_.Send(0, Udp6(kHostA, kIpA, *ParseIpv6("2001:db8:99:7::7"), kGw1Mac));
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 3);
  EXPECT_FALSE(h_.Cmd("route_add 2001:db8:98::/48 2001:db8:3::3").ok());  // not connected
  EXPECT_FALSE(h_.Cmd("route_add 2001:db8:98::/48 10.2.2.9").ok());       // another family
  h_.MustCmd("route_delete 2001:db8:99::/48");
  EXPECT_FALSE(h_.Cmd("route_delete 2001:db8:99::/48").ok());
}

}  // namespace
}  // namespace swemu
