// The dlcp program through one switch in virtual time: DSCP classes into strict-priority queues
// (front layers first, control above all), selective dropping by the TM's RED/ECN thresholds
// S_i (Not-ECT dropped, ECT marked and kept) under the capacities L_i, thresholds settable live,
// and per-packet spraying with l2l3's ECMP mode. Port 1 is shaped so a burst queues.
#include <gtest/gtest.h>

#include <map>

#include "pipeline/programs/dlcp.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

const MacAddr kDst = *ParseMac("00:00:00:00:01:01");
const MacAddr kSrc = *ParseMac("00:00:00:00:00:01");

SwitchConfig DlcpConfig(std::map<std::string, std::string> options = {}) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "dlcp";
  config.program_options.Set("t", "10");
  config.program_options.Set("d", "0.5");
  for (auto& [k, v] : options) config.program_options.Set(k, v);
  return config;
}

// A gradient packet of tag `tag` (DSCP 16 + tag); ect: important. `id` rides in the IPv4 id.
std::vector<uint8_t> Grad(uint32_t tag, bool ect, uint16_t id = 0, uint8_t dscp_base = 16) {
  return FrameBuilder()
      .Eth(kDst, kSrc)
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.1.1"))
      .Tos(MakeTos(static_cast<uint8_t>(dscp_base + tag), ect ? kEcnEct0 : kEcnNotEct))
      .Identification(id)
      .Udp(7000, 7001)
      .Payload(1000)
      .Build();
}

uint8_t DscpOf(const SentFrame& f) { return f.bytes[15] >> 2; }
uint8_t EcnOf(const SentFrame& f) { return f.bytes[15] & 0x3; }

class DlcpTest : public ::testing::Test {
 protected:
  explicit DlcpTest(std::map<std::string, std::string> options = {}) : h_(DlcpConfig(options)) {}
  void SetUp() override {
    ASSERT_TRUE(h_.ok()) << h_.error();
    h_.MustCmd("table_add dmac forward 00:00:00:00:01:01 => 1");
    h_.MustCmd("set_port_rate 1 100M");
  }
  DlcpProgram& dlcp() { return static_cast<DlcpProgram&>(h_.sw().program()); }
  SwitchHarness h_;
};

TEST_F(DlcpTest, ThresholdsFollowTheFormAndLandInTheTm) {
  // T = 10, d = 0.5: S_i = 10, 15, ..., 40 on queues 6..0; L_i = 2 S_i; control queue unmarked.
  for (uint32_t i = 1; i <= 7; ++i) {
    const int q = DlcpQueueOfTag(i - 1);
    EXPECT_EQ(h_.sw().tm().RedThreshold(3, q), 10 + 5 * (i - 1)) << i;
    EXPECT_EQ(h_.sw().tm().QueueDepthLimit(3, q), 2 * (10 + 5 * (i - 1))) << i;
  }
  EXPECT_EQ(h_.sw().tm().RedThreshold(3, kDlcpControlQueue), 0u);
  Result<std::string> show = h_.Cmd("show dlcp");
  ASSERT_TRUE(show.ok());
  EXPECT_NE(show->find("priority 7 (tag 6, queue 0): S 40 L 80"), std::string::npos) << *show;
}

TEST_F(DlcpTest, FrontLayersAreServedFirstAndControlBeforeThem) {
  std::vector<std::vector<uint8_t>> burst;
  for (uint16_t i = 0; i < 5; ++i) burst.push_back(Grad(6, true, i));  // back layers first
  for (uint16_t i = 0; i < 5; ++i) burst.push_back(Grad(0, true, 100 + i));
  burst.push_back(Grad(32, true, 999));  // DSCP 48: control
  h_.SendBurst(0, burst);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 11u);
  // The burst is queued before the port sends: control, then front layers, then back layers.
  std::vector<uint8_t> order;
  for (const SentFrame& f : out) order.push_back(DscpOf(f));
  EXPECT_EQ(order, (std::vector<uint8_t>{48, 16, 16, 16, 16, 16, 22, 22, 22, 22, 22}));
}

TEST_F(DlcpTest, UnimportantPacketsAreDroppedFirstAndFrontQueuesDropEarlier) {
  std::vector<std::vector<uint8_t>> burst;
  for (int i = 0; i < 50; ++i) burst.push_back(Grad(0, false));  // front, Not-ECT: S_1 = 10
  for (int i = 0; i < 50; ++i) burst.push_back(Grad(6, false));  // back, Not-ECT: S_7 = 40
  h_.SendBurst(0, burst);
  std::map<uint8_t, int> kept;
  for (const SentFrame& f : h_.Drain()) ++kept[DscpOf(f)];
  EXPECT_EQ(kept[16], 10);
  EXPECT_EQ(kept[22], 40);
  EXPECT_EQ(h_.sw().tm().drops(DropReason::kTmRedNotEct), 50u);
}

TEST_F(DlcpTest, ImportantPacketsAreMarkedAndKeptUpToTheCapacity) {
  std::vector<std::vector<uint8_t>> burst;
  for (int i = 0; i < 30; ++i) burst.push_back(Grad(0, true));  // S_1 = 10, L_1 = 20
  h_.SendBurst(0, burst);
  std::vector<SentFrame> out = h_.Drain();
  int ce = 0;
  for (const SentFrame& f : out) ce += EcnOf(f) == kEcnCe;
  EXPECT_EQ(out.size(), 20u);  // 20 queued, 10 refused at the capacity
  EXPECT_EQ(ce, 10);           // those that found 10..19 queued
  EXPECT_EQ(h_.sw().tm().drops(DropReason::kTmQueueFull), 10u);
  EXPECT_EQ(h_.sw().tm().drops(DropReason::kTmRedNotEct), 0u);
}

TEST_F(DlcpTest, ThresholdsChangeLiveAndBadOnesChangeNothing) {
  h_.MustCmd("dlcp_thresholds 4 1 8,10,12,16,20,24,30");  // S_i = 4, 8, ..., 28
  EXPECT_EQ(h_.sw().tm().RedThreshold(0, 6), 4u);
  EXPECT_EQ(h_.sw().tm().RedThreshold(0, 0), 28u);
  EXPECT_EQ(h_.sw().tm().QueueDepthLimit(0, 0), 30u);
  for (const char* bad : {"dlcp_thresholds 0 1", "dlcp_thresholds 4 -1", "dlcp_thresholds x 1",
                          "dlcp_thresholds 4 1 8,10", "dlcp_thresholds 4 1 0,10,12,16,20,24,30"}) {
    EXPECT_FALSE(h_.Cmd(bad).ok()) << bad;
  }
  EXPECT_EQ(h_.sw().tm().RedThreshold(0, 6), 4u);
  EXPECT_EQ(dlcp().thresholds().t, 4);
  // A threshold above its capacity is taken: the capacity acts first.
  h_.MustCmd("dlcp_thresholds 18 0.75 14,18,20,32,38,96,123");
  EXPECT_EQ(h_.sw().tm().RedThreshold(0, 6), 18u);
  EXPECT_EQ(h_.sw().tm().QueueDepthLimit(0, 6), 14u);
}

TEST_F(DlcpTest, PerPacketSprayingIsL2l3s) {
  h_.MustCmd("table_add router_mac route 00:00:00:00:01:01 =>");
  h_.MustCmd("table_add ipv4_lpm set_ecmp 10.0.1.0/24 => 3");
  h_.MustCmd("table_add ecmp_group ecmp_select 3 => 3 1");
  for (int m = 0; m < 3; ++m) {
    h_.MustCmd("table_add ecmp_member set_nhop 3 " + std::to_string(m) + " => " +
               std::to_string(m + 1));
    h_.MustCmd("table_add nexthop rewrite " + std::to_string(m + 1) +
               " => 00:00:00:00:02:02 00:00:00:00:01:01 " + std::to_string(m + 1));
  }
  std::map<PortId, int> per_port;
  for (int i = 0; i < 300; ++i) {
    h_.Send(0, Grad(i % 7, true));
    for (const SentFrame& f : h_.Drain()) ++per_port[f.port];
  }
  EXPECT_EQ(per_port, (std::map<PortId, int>{{1, 100}, {2, 100}, {3, 100}}));
}

TEST(DlcpOptions, BadOptionsAreRefusedAtLoad) {
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"t", "0"}, {"d", "x"}, {"caps", "1,2,3"}, {"control_dscp", "18"}, {"dscp_base", "60"}}) {
    SwitchHarness h(DlcpConfig({{key, value}}));
    EXPECT_FALSE(h.ok()) << key << "=" << value;
  }
  SwitchHarness other_base(DlcpConfig({{"dscp_base", "8"}}));
  ASSERT_TRUE(other_base.ok()) << other_base.error();
}

}  // namespace
}  // namespace swemu
