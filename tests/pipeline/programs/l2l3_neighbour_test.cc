// l2l3 with router interfaces through one switch on a virtual clock: ARP for the gateways
// answered, next hops resolved by the control plane behind the CPU port (packet-in after its
// latency, requests retried, packets held then sent), ICMP echo to a gateway, route_add through
// a neighbour, `show arp`, and the counters that account for every packet.
#include <gtest/gtest.h>

#include "pipeline/wire/arp.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
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
const Ipv4Addr kIpA = *ParseIpv4("10.1.1.2");
const Ipv4Addr kIpB = *ParseIpv4("10.2.2.2");
const Ipv4Addr kGw1 = *ParseIpv4("10.1.1.1");
const Ipv4Addr kGw2 = *ParseIpv4("10.2.2.1");

// Two subnets: 10.1.1.0/24 on ports 0-1 (host A on 0), 10.2.2.0/24 on ports 2-3 (B on 2).
SwitchConfig RouterConfig() {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "l2l3";
  config.interfaces = {{1, kGw1Mac, kGw1, 24, {0, 1}}, {2, kGw2Mac, kGw2, 24, {2, 3}}};
  return config;
}

std::vector<uint8_t> Arp(uint16_t oper, MacAddr eth_dst, MacAddr sender, Ipv4Addr sender_ip,
                         uint64_t target_mac, Ipv4Addr target_ip) {
  std::vector<uint8_t> frame(kEthernetMinFrameLen, 0);
  std::vector<uint8_t> head = FrameBuilder().Eth(eth_dst, sender).EtherType(kEtherTypeArp).Build();
  std::copy(head.begin(), head.begin() + kEthernetHeaderLen, frame.begin());
  ArpFields{oper, sender.ToU64(), sender_ip, target_mac, target_ip}.Encode(frame.data() + 14);
  return frame;
}

std::vector<uint8_t> Udp(MacAddr src, Ipv4Addr src_ip, Ipv4Addr dst_ip, uint64_t dst_mac) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(dst_mac), src)
      .Ipv4(src_ip, dst_ip)
      .Udp(1000, 2000)
      .Payload(32)
      .Build();
}

std::optional<ArpFields> ArpOf(const SentFrame& f) {
  if (f.bytes.size() < 42 || LoadBe16(f.bytes.data() + 12) != kEtherTypeArp) return std::nullopt;
  return ArpFields::Decode(f.bytes.data() + 14, f.bytes.size() - 14);
}

class L2l3NeighbourTest : public ::testing::Test {
 protected:
  explicit L2l3NeighbourTest(SwitchConfig config = RouterConfig()) : h_(std::move(config)) {}
  void SetUp() override { ASSERT_TRUE(h_.ok()) << h_.error(); }

  std::vector<SentFrame> RunUntil(TimeNs until) { return h_.RunCpuUntil(until); }
  void ExpectConservation() { testing::ExpectConservation(h_); }
  SwitchHarness h_;
};

TEST_F(L2l3NeighbourTest, AnswersArpForItsGatewayAfterTheCpuLatency) {
  h_.Send(0, Arp(kArpRequest, kBroadcastMac, kHostA, kIpA, 0, kGw1));
  EXPECT_TRUE(h_.Drain().empty());  // nothing flooded: the request went to the CPU
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 0);
  EXPECT_EQ(out[0].time, CpuPortConfig().latency_ns);
  std::optional<ArpFields> reply = ArpOf(out[0]);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, (ArpFields{kArpReply, kGw1Mac, kGw1, kHostA.ToU64(), kIpA}));
  EXPECT_EQ(LoadBe16(out[0].bytes.data()) , kHostA.ToU64() >> 32);
  // The request taught the switch where A is.
  Result<std::string> arp = h_.Cmd("show arp");
  ASSERT_TRUE(arp.ok());
  EXPECT_NE(arp->find("10.1.1.2         02:00:00:00:00:0a  0     1         REACHABLE"),
            std::string::npos)
      << *arp;
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, 1u);
  EXPECT_EQ(h_.sw().cpu().counters().packet_out, 1u);
  ExpectConservation();
}

TEST_F(L2l3NeighbourTest, ArpForAnotherHostIsBridgedNotTrapped) {
  h_.MustCmd("table_add dmac forward ff:ff:ff:ff:ff:ff => 1");
  h_.Send(0, Arp(kArpRequest, kBroadcastMac, kHostA, kIpA, 0, *ParseIpv4("10.1.1.3")));
  std::vector<SentFrame> out = RunUntil(kSecond);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 1);
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, 0u);
}

TEST_F(L2l3NeighbourTest, RoutesToAnUnresolvedHostOnceItAnswers) {
  h_.Send(0, Udp(kHostA, kIpA, kIpB, kGw1Mac));
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  // A broadcast request for B out of both ports of B's subnet, from B's gateway.
  ASSERT_EQ(out.size(), 2u);
  for (const SentFrame& f : out) {
    std::optional<ArpFields> req = ArpOf(f);
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(*req, (ArpFields{kArpRequest, kGw2Mac, kGw2, 0, kIpB}));
  }
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(out[1].port, 3);
  h_.Send(2, Arp(kArpReply, MacAddr::FromU64(kGw2Mac), kHostB, kIpB, kGw2Mac, kGw2));
  out = RunUntil(kSecond);
  ASSERT_EQ(out.size(), 1u);  // the held packet, routed
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(LoadBe16(out[0].bytes.data() + 4), kHostB.ToU64() & 0xFFFF);
  EXPECT_EQ(LoadBe16(out[0].bytes.data() + 10), kGw2Mac & 0xFFFF);
  EXPECT_EQ(out[0].bytes[14 + 8], 63);  // TTL
  // The next one goes in the data plane alone.
  const uint64_t in_before = h_.sw().cpu().counters().packet_in;
  h_.Send(0, Udp(kHostA, kIpA, kIpB, kGw1Mac));
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2);
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, in_before);
  ExpectConservation();
}

TEST_F(L2l3NeighbourTest, ThreeUnansweredRequestsThenTheHeldPacketsDrop) {
  for (int i = 0; i < 5; ++i) h_.Send(0, Udp(kHostA, kIpA, kIpB, kGw1Mac));
  std::vector<SentFrame> out = RunUntil(10 * kSecond);
  ASSERT_EQ(out.size(), 6u);  // 3 requests x 2 ports, a second apart
  EXPECT_EQ(out[2].time - out[0].time, kSecond);
  EXPECT_EQ(out[4].time - out[2].time, kSecond);
  EXPECT_EQ(h_.sw().Drops(RegisterDropReason("neighbour_queue_full")), 2u);
  EXPECT_EQ(h_.sw().Drops(RegisterDropReason("neighbour_unresolved")), 3u);
  Result<std::string> arp = h_.Cmd("show arp");
  ASSERT_TRUE(arp.ok());
  EXPECT_NE(arp->find("FAILED"), std::string::npos) << *arp;
  ExpectConservation();
}

TEST_F(L2l3NeighbourTest, AnswersPingToItsGateway) {
  h_.Send(0, Arp(kArpRequest, kBroadcastMac, kHostA, kIpA, 0, kGw1));  // A is known now
  RunUntil(kSecond / 2);
  std::vector<uint8_t> ping = FrameBuilder()
                                  .Eth(MacAddr::FromU64(kGw1Mac), kHostA)
                                  .Ipv4(kIpA, kGw2)  // the other subnet's gateway: also routed
                                  .Protocol(kIpProtoIcmp)
                                  .Payload(std::vector<uint8_t>{8, 0, 0, 0, 0, 1, 0, 1})
                                  .Build();
  uint8_t* icmp = ping.data() + 34;
  StoreBe16(icmp + 2, InternetChecksum(icmp, 8));
  h_.Send(0, ping);
  std::vector<SentFrame> out = RunUntil(kSecond);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 0);
  const uint8_t* ip = out[0].bytes.data() + 14;
  EXPECT_EQ(LoadBe32(ip + 12), kGw2);
  EXPECT_EQ(LoadBe32(ip + 16), kIpA);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(ip, 20));
  EXPECT_EQ(ip[20], 0);  // echo reply
  EXPECT_EQ(InternetChecksum(ip + 20, 8), 0);
  ExpectConservation();
}

TEST_F(L2l3NeighbourTest, RouteAddResolvesItsNextHopByArp) {
  h_.MustCmd("route_add 192.168.0.0/16 10.2.2.9");
  std::vector<SentFrame> out = RunUntil(kSecond / 2);
  ASSERT_EQ(out.size(), 2u);  // asked at once, out of the subnet's ports
  h_.Send(3, Arp(kArpReply, MacAddr::FromU64(kGw2Mac), kHostB, *ParseIpv4("10.2.2.9"), kGw2Mac,
                 kGw2));
  RunUntil(kSecond);
  h_.Send(0, Udp(kHostA, kIpA, *ParseIpv4("192.168.7.7"), kGw1Mac));
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 3);
  EXPECT_FALSE(h_.Cmd("route_add 10.9.0.0/16 10.3.3.3").ok());  // not a connected neighbour
  h_.MustCmd("route_delete 192.168.0.0/16");
  EXPECT_FALSE(h_.Cmd("route_delete 192.168.0.0/16").ok());
}

// With MAC learning on (ports 0-1 in VLAN 10, 2-3 in VLAN 20, entries aged after 4 s): the
// ports of resolved neighbours follow the MAC table.
class L2l3NeighbourLearningTest : public L2l3NeighbourTest {
 protected:
  static SwitchConfig Config() {
    SwitchConfig config = RouterConfig();
    config.program_options = ProgramOptions(
        {{"learning", "on"}, {"port_vlan", "0-1:10,2-3:20"}, {"mac_age", "4"}});
    return config;
  }
  L2l3NeighbourLearningTest() : L2l3NeighbourTest(Config()) {}
  // Sends a frame at t, after the control plane (digests, aging) and the CPU caught up.
  std::vector<SentFrame> SendAt(TimeNs t, PortId port, const std::vector<uint8_t>& frame) {
    RunUntil(t);
    h_.sw().ServiceControlPlane(t);
    h_.Send(port, frame);
    return RunUntil(t + kSecond / 2);
  }
  // B (port 2) to A, routed: the port it leaves by, or -1.
  int RoutedToA(TimeNs t) {
    std::vector<SentFrame> out = SendAt(t, 2, Udp(kHostB, kIpB, kIpA, kGw2Mac));
    if (out.size() != 1 || LoadBe16(out[0].bytes.data() + 4) != (kHostA.ToU64() & 0xFFFF)) {
      return -1;
    }
    return out[0].port;
  }
  std::string ShowArp() { return *h_.Cmd("show arp"); }
};

TEST_F(L2l3NeighbourLearningTest, RoutedTrafficFollowsAMoveWithoutArp) {
  SendAt(0, 0, Arp(kArpRequest, kBroadcastMac, kHostA, kIpA, 0, kGw1));
  SendAt(kSecond / 2, 2, Arp(kArpRequest, kBroadcastMac, kHostB, kIpB, 0, kGw2));
  EXPECT_EQ(RoutedToA(kSecond), 0);
  // A's first frame on port 1 (routed to B) moves it in the MAC table, and its neighbour entry.
  SendAt(2 * kSecond, 1, Udp(kHostA, kIpA, kIpB, kGw1Mac));
  EXPECT_EQ(RoutedToA(3 * kSecond), 1) << ShowArp();
  EXPECT_NE(ShowArp().find("10.1.1.2         02:00:00:00:00:0a  1 "), std::string::npos)
      << ShowArp();
  EXPECT_EQ(h_.sw().cpu().counters().packet_in, 2u);  // the two ARP requests alone
  ExpectConservation();
}

TEST_F(L2l3NeighbourLearningTest, AnAgedOutMacLeavesTheNeighbourWhereItWas) {
  SendAt(0, 0, Arp(kArpRequest, kBroadcastMac, kHostA, kIpA, 0, kGw1));
  SendAt(kSecond / 2, 2, Arp(kArpRequest, kBroadcastMac, kHostB, kIpB, 0, kGw2));
  SendAt(kSecond, 1, Udp(kHostA, kIpA, kIpB, kGw1Mac));  // moved to port 1
  // A (and B) say nothing for 8 s: aged out of the MAC table; routed traffic to A still goes
  // to port 1.
  RunUntil(9 * kSecond);
  h_.sw().ServiceControlPlane(9 * kSecond);
  EXPECT_NE(h_.Cmd("show mac")->find("aged 2,"), std::string::npos) << *h_.Cmd("show mac");
  EXPECT_EQ(RoutedToA(9 * kSecond), 1);
  // Back on port 0, A is learned anew there: the neighbour follows.
  SendAt(10 * kSecond, 0, Udp(kHostA, kIpA, kIpB, kGw1Mac));
  EXPECT_EQ(RoutedToA(11 * kSecond), 0) << ShowArp();
  ExpectConservation();
}

}  // namespace
}  // namespace swemu
