// The l2l3 program end to end through one switch: frames in, frames and counters out.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

const MacAddr kRouterMac = *ParseMac("00:00:00:00:00:fe");
const MacAddr kHostA = *ParseMac("00:00:00:00:00:0a");
const MacAddr kHostB = *ParseMac("00:00:00:00:00:0b");

SwitchConfig L2l3Config(uint16_t ports = 4) {
  SwitchConfig config;
  config.num_ports = ports;
  config.program = "l2l3";
  return config;
}

std::vector<uint8_t> Udp(MacAddr dst, Ipv4Addr dst_ip, uint16_t sport = 1000, uint8_t tos = 0,
                         uint8_t ttl = 64, std::size_t payload = 32) {
  return FrameBuilder()
      .Eth(dst, kHostA)
      .Ipv4(*ParseIpv4("10.0.0.1"), dst_ip)
      .Tos(tos)
      .Ttl(ttl)
      .Udp(sport, 2000)
      .Payload(payload)
      .Build();
}

class L2l3Test : public ::testing::Test {
 protected:
  L2l3Test() : h_(L2l3Config()) {}
  void SetUp() override { ASSERT_TRUE(h_.ok()) << h_.error(); }
  void AddRoutes() {
    h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
    h_.MustCmd("table_add ipv4_lpm set_nhop 10.0.2.0/24 => 2");
    h_.MustCmd("table_add ipv4_lpm set_nhop 10.0.0.0/8 => 3");
    h_.MustCmd("table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2");
    h_.MustCmd("table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3");
  }
  SwitchHarness h_;
};

TEST_F(L2l3Test, ForwardsByDestinationMac) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  std::vector<uint8_t> frame = Udp(kHostB, *ParseIpv4("10.0.0.2"));
  h_.Send(0, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(out[0].bytes, frame);  // bridged frames are not modified
  EXPECT_EQ(h_.sw().counters().ports[0].rx_packets, 1u);
  EXPECT_EQ(h_.sw().counters().ports[1].tx_packets, 1u);
}

// On a 4-port switch, port 9 is refused when the entry is added (it used to be accepted, then
// every packet dropped as bad_egress_port).
TEST_F(L2l3Test, AnEntryNamingAPortTheSwitchLacksIsRefused) {
  Result<std::string> added = h_.Cmd("table_add dmac forward 00:00:00:00:00:0b => 9");
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.message().find("parameter port: 9 is not below 4 (the switch's ports are 0..3)"),
            std::string::npos)
      << added.message();
  EXPECT_FALSE(h_.Cmd("table_add nexthop rewrite 7 => 00:00:00:00:02:02 00:00:00:00:00:fe 4").ok());
  EXPECT_TRUE(h_.Cmd("table_add dmac forward 00:00:00:00:00:0b => 3").ok());
}

TEST_F(L2l3Test, DropsUnknownMacAsTableMissAndDropActionAsProgramDrop) {
  h_.MustCmd("table_add dmac drop 00:00:00:00:00:0b =>");
  h_.Send(0, Udp(kHostB, 1));
  h_.Send(0, Udp(kHostA, 1));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(DropReason::kProgramDrop), 1u);
  EXPECT_EQ(h_.sw().Drops(DropReason::kTableMiss), 1u);
}

TEST_F(L2l3Test, RoutesLongestPrefixRewritesMacsAndDecrementsTtl) {
  AddRoutes();
  h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.0.2.7")));
  h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.9.9.9")));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 2u);
  std::map<PortId, std::vector<uint8_t>> by_port;
  for (const SentFrame& f : out) by_port[f.port] = f.bytes;
  ASSERT_EQ(by_port.count(2), 1u);
  ASSERT_EQ(by_port.count(3), 1u);
  const std::vector<uint8_t>& f = by_port[2];
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + 6),
            (std::vector<uint8_t>{0, 0, 0, 0, 2, 2}));  // next hop's MAC
  EXPECT_EQ(f[6 + 5], 0xfe);                            // source MAC is the router's
  EXPECT_EQ(f[14 + 8], 63);                             // TTL
  EXPECT_TRUE(Ipv4HeaderChecksumOk(f.data() + 14, 20));
}

TEST_F(L2l3Test, ExpiredTtlIsDropped) {
  AddRoutes();
  h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.0.2.7"), 1000, 0, 1));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(DropReason::kTtlExpired), 1u);
}

TEST_F(L2l3Test, EcmpPerFlowKeepsAFlowOnOnePathAndSpreadsFlows) {
  h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
  h_.MustCmd("table_add ipv4_lpm set_ecmp 10.1.0.0/16 => 7");
  h_.MustCmd("table_add ecmp_group ecmp_select 7 => 2 0");
  h_.MustCmd("table_add ecmp_member set_nhop 7 0 => 2");
  h_.MustCmd("table_add ecmp_member set_nhop 7 1 => 3");
  h_.MustCmd("table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2");
  h_.MustCmd("table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3");
  for (int i = 0; i < 4; ++i) h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.1.0.1"), 5555));
  std::set<PortId> one_flow;
  for (const SentFrame& f : h_.Drain()) one_flow.insert(f.port);
  EXPECT_EQ(one_flow.size(), 1u);
  std::map<PortId, int> spread;
  for (int flow = 0; flow < 64; ++flow) {
    h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.1.0.1"), static_cast<uint16_t>(6000 + flow)));
  }
  for (const SentFrame& f : h_.Drain()) ++spread[f.port];
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_GT(spread[2], 16);
  EXPECT_GT(spread[3], 16);
}

TEST_F(L2l3Test, EcmpPerPacketSpraysRoundRobinWithinAFlow) {
  h_.MustCmd("table_add router_mac route 00:00:00:00:00:fe =>");
  h_.MustCmd("table_add ipv4_lpm set_ecmp 10.1.0.0/16 => 7");
  h_.MustCmd("table_add ecmp_group ecmp_select 7 => 2 1");
  h_.MustCmd("table_add ecmp_member set_nhop 7 0 => 2");
  h_.MustCmd("table_add ecmp_member set_nhop 7 1 => 3");
  h_.MustCmd("table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2");
  h_.MustCmd("table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3");
  for (int i = 0; i < 10; ++i) h_.Send(0, Udp(kRouterMac, *ParseIpv4("10.1.0.1"), 5555));
  std::map<PortId, int> per_port;
  for (const SentFrame& f : h_.Drain()) ++per_port[f.port];
  EXPECT_EQ(per_port[2], 5);
  EXPECT_EQ(per_port[3], 5);
  Result<std::string> rr = h_.Cmd("register_read ecmp_rr 7");
  ASSERT_TRUE(rr.ok());
  EXPECT_EQ(*rr, "ecmp_rr[7]=10");
}

TEST_F(L2l3Test, MulticastReplicatesToEveryMember) {
  h_.MustCmd("mc_mgrp_create 5");
  h_.MustCmd("mc_node_create 0 1 2 3");
  h_.MustCmd("mc_node_associate 5 0");
  h_.MustCmd("table_add dmac multicast ff:ff:ff:ff:ff:ff => 5");
  h_.Send(0, Udp(*ParseMac("ff:ff:ff:ff:ff:ff"), 1));
  std::set<PortId> ports;
  for (const SentFrame& f : h_.Drain()) ports.insert(f.port);
  EXPECT_EQ(ports, (std::set<PortId>{1, 2, 3}));
}

TEST_F(L2l3Test, DscpSelectsTheQueue) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h_.MustCmd("table_add qos set_queue 46&&&0x3f => 7 1");
  h_.Send(0, Udp(kHostB, 1, 1000, 46 << 2));
  h_.Send(0, Udp(kHostB, 1, 1000, 0));
  h_.Drain();
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 7).dequeued, 1u);
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).dequeued, 1u);
}

// With qos and router_mac empty (a pure L2 switch), a burst of IPv4 packets gets qos's default
// queue and is bridged, and both tables count a miss per packet, as if each had been looked up.
TEST_F(L2l3Test, EmptyQosAndRouterMacGiveTheDefaultQueueAndBridge) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h_.MustCmd("table_set_default qos set_queue 5");
  std::vector<std::vector<uint8_t>> burst;
  for (uint8_t tos : {0, 46 << 2, 8 << 2, 0}) burst.push_back(Udp(kHostB, 1, 1000, tos));
  burst.push_back(FrameBuilder().Eth(kHostB, kHostA).EtherType(0x88b5).Payload(40).Build());
  h_.SendBurst(0, burst);
  EXPECT_EQ(h_.Drain().size(), burst.size());
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 5).dequeued, 4u);
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).dequeued, 1u);  // no IPv4: no qos
  EXPECT_EQ(h_.sw().resources().FindTable("qos")->misses(), 4u);
  EXPECT_EQ(h_.sw().resources().FindTable("router_mac")->misses(), 4u);
  EXPECT_EQ(h_.sw().resources().FindTable("dmac")->hits(), 5u);
}

TEST_F(L2l3Test, MarksEctPacketsOnlyFromTheEcnThreshold) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
  h_.MustCmd("set_port_rate 1 1G");
  // 100-byte frames: the 3rd packet finds 200 bytes queued, the threshold.
  h_.MustCmd("set_ecn_threshold 1 0 200");
  std::vector<uint8_t> ect = Udp(kHostB, 1, 1000, kEcnEct0, 64, 100 - 42);
  ASSERT_EQ(ect.size(), 100u);
  for (int i = 0; i < 5; ++i) h_.Send(0, ect);
  h_.Send(0, Udp(kHostB, 1, 1000, kEcnNotEct, 64, 100 - 42));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 6u);
  // All six are queued before the port sends: depths seen are 0, 100, 200, 300, 400, 500 bytes.
  std::vector<int> ecn;
  for (const SentFrame& f : out) ecn.push_back(f.bytes[14 + 1] & 3);
  EXPECT_EQ(ecn, (std::vector<int>{kEcnEct0, kEcnEct0, kEcnCe, kEcnCe, kEcnCe, kEcnNotEct}));
  for (const SentFrame& f : out) EXPECT_TRUE(Ipv4HeaderChecksumOk(f.bytes.data() + 14, 20));
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).marked, 3u);
}

// The burst path (stages batched over the burst) decides exactly what the per-packet path does.
TEST(L2l3BurstTest, BurstAndSinglePacketsGiveTheSameFramesAndCounters) {
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 150; ++i) {  // more than one kMaxBurst
    switch (i % 6) {
      case 0:
        frames.push_back(Udp(kHostB, 1, static_cast<uint16_t>(i)));
        break;
      case 1:
        frames.push_back(Udp(kRouterMac, *ParseIpv4("10.0.2.7")));
        break;
      case 2:
        frames.push_back(Udp(kRouterMac, *ParseIpv4("10.1.0.1"), static_cast<uint16_t>(i)));
        break;
      case 3:
        frames.push_back(Udp(kRouterMac, *ParseIpv4("10.0.2.7"), 1, 0, 1));
        break;
      case 4:
        frames.push_back(Udp(*ParseMac("00:00:00:00:00:99"), 1));
        break;
      default:
        frames.push_back(Udp(kRouterMac, *ParseIpv4("192.168.0.1")));
        break;
    }
  }
  auto setup = [](SwitchHarness& h) {
    for (const char* cmd :
         {"table_add dmac forward 00:00:00:00:00:0b => 1",
          "table_add router_mac route 00:00:00:00:00:fe =>",
          "table_add ipv4_lpm set_nhop 10.0.2.0/24 => 2",
          "table_add ipv4_lpm set_ecmp 10.1.0.0/16 => 7",
          "table_add ecmp_group ecmp_select 7 => 2 1", "table_add ecmp_member set_nhop 7 0 => 2",
          "table_add ecmp_member set_nhop 7 1 => 3",
          "table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2",
          "table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3"}) {
      h.MustCmd(cmd);
    }
  };
  SwitchHarness burst(L2l3Config());
  SwitchHarness single(L2l3Config());
  ASSERT_TRUE(burst.ok() && single.ok());
  setup(burst);
  setup(single);
  burst.SendBurst(0, frames);
  for (const std::vector<uint8_t>& f : frames) single.Send(0, f);
  std::vector<SentFrame> a = burst.Drain();
  std::vector<SentFrame> b = single.Drain();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].port, b[i].port);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
  }
  EXPECT_EQ(burst.sw().CountersJson(), single.sw().CountersJson());
  EXPECT_EQ(burst.sw().Drops(DropReason::kTtlExpired), 25u);
  EXPECT_EQ(burst.sw().Drops(DropReason::kTableMiss), 50u);
}

TEST(L2l3LoadTest, RefusesUnknownOptionAndBadValue) {
  SwitchConfig config = L2l3Config();
  config.program_options.Set("dmac_sise", "100");
  SwitchHarness a(config);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error(), "program.dmac_sise: unknown option for program l2l3");
  config = L2l3Config();
  config.program_options.Set("lpm_size", "lots");
  SwitchHarness b(config);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), "program l2l3: program.lpm_size: \"lots\" is not an unsigned integer");
}

}  // namespace
}  // namespace swemu
