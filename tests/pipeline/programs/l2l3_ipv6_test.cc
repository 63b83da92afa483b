// l2l3 routing IPv6 through one switch: ipv6_lpm, ECMP, next hops, hop limit, qos, ECN.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv6.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

const MacAddr kRouterMac = *ParseMac("00:00:00:00:00:fe");
const MacAddr kHostA = *ParseMac("00:00:00:00:00:0a");
const MacAddr kHostB = *ParseMac("00:00:00:00:00:0b");
constexpr std::size_t kIp6 = 14;  // the IPv6 header's offset in an untagged frame

std::vector<uint8_t> Udp6(MacAddr dst, const char* dst_ip, uint16_t sport = 1000,
                          uint8_t traffic_class = 0, uint8_t hop_limit = 64,
                          std::size_t payload = 32) {
  return FrameBuilder()
      .Eth(dst, kHostA)
      .Ipv6(*ParseIpv6("2001:db8:1::a"), *ParseIpv6(dst_ip))
      .Tos(traffic_class)
      .Ttl(hop_limit)
      .Udp(sport, 2000)
      .Payload(payload)
      .Build();
}

uint8_t TrafficClass(const std::vector<uint8_t>& frame) {
  return HeaderAt<Ipv6Header>(frame.data() + kIp6)->TrafficClass();
}

bool UdpChecksumOk6(const std::vector<uint8_t>& f) {
  const std::size_t udp = kIp6 + kIpv6HeaderLen;
  const std::size_t len = f.size() - udp;
  return FoldSum(Ipv6PseudoHeaderSum(f.data() + kIp6, kIpProtoUdp, len) +
                 OnesComplementSum(f.data() + udp, len)) == 0xFFFF;
}

class L2l3Ipv6Test : public ::testing::Test {
 protected:
  L2l3Ipv6Test()
      : h_([] {
          SwitchConfig config;
          config.num_ports = 4;
          config.program = "l2l3";
          return config;
        }()) {}
  void SetUp() override { ASSERT_TRUE(h_.ok()) << h_.error(); }
  void AddRoutes() {
    h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
    h_.MustCmd("table_add ipv6_lpm set_nhop 2001:db8:2::/64 => 2");
    h_.MustCmd("table_add ipv6_lpm set_nhop 2001:db8::/32 => 3");
    h_.MustCmd("table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2");
    h_.MustCmd("table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3");
  }
  SwitchHarness h_;
};

TEST_F(L2l3Ipv6Test, RoutesLongestPrefixRewritesMacsAndDecrementsHopLimit) {
  AddRoutes();
  const std::vector<uint8_t> sent = Udp6(kRouterMac, "2001:db8:2::7");
  h_.Send(0, sent);
  h_.Send(0, Udp6(kRouterMac, "2001:db8:9::9"));
  std::map<PortId, std::vector<uint8_t>> by_port;
  for (const SentFrame& f : h_.Drain()) by_port[f.port] = f.bytes;
  ASSERT_EQ(by_port.size(), 2u);
  ASSERT_EQ(by_port.count(3), 1u);
  const std::vector<uint8_t>& f = by_port[2];
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 6),
            (std::vector<uint8_t>{0, 0, 0, 0, 2, 2}));  // next hop's MAC
  EXPECT_EQ(f[6 + 5], 0xfe);                            // source MAC is the router's
  EXPECT_EQ(HeaderAt<Ipv6Header>(f.data() + kIp6)->hop_limit, 63);
  // Only the MACs and the hop limit changed; the UDP checksum (no hop limit in it) still holds.
  std::vector<uint8_t> expected = sent;
  std::copy(f.begin(), f.begin() + 12, expected.begin());
  expected[kIp6 + 7] = 63;
  EXPECT_EQ(f, expected);
  EXPECT_TRUE(UdpChecksumOk6(f));
  EXPECT_EQ(h_.sw().resources().FindTable("ipv6_lpm")->hits(), 2u);
  EXPECT_EQ(h_.sw().resources().FindTable("ipv4_lpm")->hits() +
                h_.sw().resources().FindTable("ipv4_lpm")->misses(),
            0u);
}

TEST_F(L2l3Ipv6Test, ExpiredHopLimitAndMissAreDropped) {
  AddRoutes();
  h_.Send(0, Udp6(kRouterMac, "2001:db8:2::7", 1000, 0, 1));
  h_.Send(0, Udp6(kRouterMac, "2001:db9::1"));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(DropReason::kHopLimitExpired), 1u);
  EXPECT_EQ(h_.sw().Drops(DropReason::kTableMiss), 1u);
}

TEST_F(L2l3Ipv6Test, NotToTheRouterMacIsBridged) {
  AddRoutes();
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  const std::vector<uint8_t> frame = Udp6(kHostB, "2001:db8:2::7");
  h_.Send(0, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(out[0].bytes, frame);
}

TEST_F(L2l3Ipv6Test, EcmpPerFlowKeepsAFlowOnOnePathAndSpreadsFlows) {
  h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
  h_.MustCmd("table_add ipv6_lpm set_ecmp 2001:db8:7::/48 => 7");
  h_.MustCmd("table_add ecmp_group ecmp_select 7 => 2 0");
  h_.MustCmd("table_add ecmp_member set_nhop 7 0 => 2");
  h_.MustCmd("table_add ecmp_member set_nhop 7 1 => 3");
  h_.MustCmd("table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2");
  h_.MustCmd("table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3");
  for (int i = 0; i < 4; ++i) h_.Send(0, Udp6(kRouterMac, "2001:db8:7::1", 5555));
  std::set<PortId> one_flow;
  for (const SentFrame& f : h_.Drain()) one_flow.insert(f.port);
  EXPECT_EQ(one_flow.size(), 1u);
  std::map<PortId, int> spread;
  for (int flow = 0; flow < 64; ++flow) {
    h_.Send(0, Udp6(kRouterMac, "2001:db8:7::1", static_cast<uint16_t>(6000 + flow)));
  }
  for (const SentFrame& f : h_.Drain()) ++spread[f.port];
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_GT(spread[2], 16);
  EXPECT_GT(spread[3], 16);
}

TEST_F(L2l3Ipv6Test, TrafficClassDscpSelectsTheQueue) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h_.MustCmd("table_add qos set_queue 46&&&0x3f => 7 1");
  h_.Send(0, Udp6(kHostB, "2001:db8:2::7", 1000, 46 << 2));
  h_.Send(0, Udp6(kHostB, "2001:db8:2::7", 1000, 0));
  h_.Drain();
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 7).dequeued, 1u);
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).dequeued, 1u);
}

TEST_F(L2l3Ipv6Test, MarksEctPacketsInTheTrafficClassFromTheEcnThreshold) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h_.MustCmd("set_port_rate 1 1G");
  h_.MustCmd("set_ecn_threshold 1 0 240");  // 120-byte frames: the 3rd finds 240 bytes queued
  const uint8_t af11 = 10 << 2;
  const std::vector<uint8_t> ect = Udp6(kHostB, "2001:db8:2::7", 1000, af11 | kEcnEct1, 64, 58);
  ASSERT_EQ(ect.size(), 120u);
  for (int i = 0; i < 4; ++i) h_.Send(0, ect);
  h_.Send(0, Udp6(kHostB, "2001:db8:2::7", 1000, af11 | kEcnNotEct, 64, 58));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 5u);
  std::vector<int> tc;
  for (const SentFrame& f : out) tc.push_back(TrafficClass(f.bytes));
  EXPECT_EQ(tc, (std::vector<int>{af11 | kEcnEct1, af11 | kEcnEct1, af11 | kEcnCe, af11 | kEcnCe,
                                  af11 | kEcnNotEct}));
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).marked, 2u);
}

TEST_F(L2l3Ipv6Test, GleanAndToCpuDropWithoutAControlPlane) {
  // Without router interfaces there is no agent: a punt is counted as no_egress_port, as IPv4's.
  h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
  h_.MustCmd("table_add ipv6_lpm glean 2001:db8:5::/64 =>");
  h_.Send(0, Udp6(kRouterMac, "2001:db8:5::1"));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().resources().FindTable("ipv6_lpm")->hits(), 1u);
  EXPECT_EQ(h_.sw().Drops(DropReason::kNoEgressPort), 1u);
}

TEST(L2l3Ipv6LoadTest, Lpm6SizeSizesTheTable) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "l2l3";
  config.program_options.Set("lpm6_size", "16");
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  EXPECT_EQ(h.sw().resources().FindTable("ipv6_lpm")->size(), 16u);
  EXPECT_EQ(h.sw().resources().FindTable("ipv4_lpm")->size(), 8192u);
}

}  // namespace
}  // namespace swemu
