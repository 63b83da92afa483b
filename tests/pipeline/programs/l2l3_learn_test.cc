// l2l3's MAC learning through one switch: digests, the control plane's dmac entries, flooding
// within a VLAN, moves, aging, the table's limit, static entries.
#include <gtest/gtest.h>

#include <set>

#include "pipeline/programs/l2l3_learn.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

constexpr TimeNs kSecond = 1'000'000'000;

MacAddr Host(uint64_t n) { return MacAddr::FromU64(0x020000000000ULL | n); }

std::vector<uint8_t> Frame(MacAddr dst, MacAddr src) {
  return FrameBuilder()
      .Eth(dst, src)
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2"))
      .Udp(1000, 2000)
      .Payload(32)
      .Build();
}

SwitchConfig LearningConfig(std::map<std::string, std::string> extra = {}) {
  SwitchConfig config;
  config.num_ports = 6;
  config.program = "l2l3";
  extra.emplace("learning", "on");
  extra.emplace("port_vlan", "0-3:10,4-5:20");
  config.program_options = ProgramOptions(std::move(extra));
  return config;
}

std::set<PortId> Ports(const std::vector<SentFrame>& out) {
  std::set<PortId> ports;
  for (const SentFrame& f : out) ports.insert(f.port);
  return ports;
}

class L2Learn : public ::testing::Test {
 protected:
  explicit L2Learn(SwitchConfig config = LearningConfig()) : h_(std::move(config)) {}
  void SetUp() override { ASSERT_TRUE(h_.ok()) << h_.error(); }
  // Sends one frame at time t, with the control plane run first as the engine does, and
  // returns the ports it left by.
  std::set<PortId> At(TimeNs t, PortId port, MacAddr dst, MacAddr src) {
    h_.clock().Set(t);
    h_.sw().ServiceControlPlane(t);
    h_.Send(port, Frame(dst, src));
    return Ports(h_.Drain());
  }
  std::string Show() { return *h_.Cmd("show mac"); }
  SwitchHarness h_;
};

TEST_F(L2Learn, UnknownIsFloodedInItsVlanThenUnicastOnceLearned) {
  // A (port 0) to B, unknown: flooded to port 0's VLAN only, never back to port 0.
  EXPECT_EQ(At(0, 0, Host(2), Host(1)), (std::set<PortId>{1, 2, 3}));
  // B (port 2) answers after the control plane learned A: unicast.
  EXPECT_EQ(At(kSecond, 2, Host(1), Host(2)), (std::set<PortId>{0}));
  EXPECT_EQ(At(2 * kSecond, 0, Host(2), Host(1)), (std::set<PortId>{2}));
  // Broadcast is flooded; port 4's VLAN (20) never sees VLAN 10's frames.
  EXPECT_EQ(At(3 * kSecond, 1, kBroadcastMac, Host(3)), (std::set<PortId>{0, 2, 3}));
  EXPECT_EQ(At(4 * kSecond, 4, kBroadcastMac, Host(4)), (std::set<PortId>{5}));
  std::string show = Show();
  EXPECT_NE(show.find("02:00:00:00:00:01  10    0"), std::string::npos) << show;
  EXPECT_NE(show.find("learned 3,"), std::string::npos) << show;
  EXPECT_NE(*h_.Cmd("show digests"), "");
}

TEST_F(L2Learn, BeforeTheControlPlaneRunsTheFrameIsStillFlooded) {
  At(0, 0, Host(2), Host(1));
  // 1 us later: the digest (10 us latency) is not yet applied.
  EXPECT_EQ(At(1000, 2, Host(1), Host(2)), (std::set<PortId>{0, 1, 3}));
  EXPECT_EQ(At(kSecond, 2, Host(1), Host(2)), (std::set<PortId>{0}));
}

TEST_F(L2Learn, AMovedHostIsFollowed) {
  At(0, 0, Host(2), Host(1));
  EXPECT_EQ(At(kSecond, 2, Host(1), Host(2)), (std::set<PortId>{0}));
  At(2 * kSecond, 3, Host(2), Host(1));  // A now on port 3
  EXPECT_EQ(At(3 * kSecond, 2, Host(1), Host(2)), (std::set<PortId>{3}));
  EXPECT_NE(Show().find("moved 1,"), std::string::npos) << Show();
}

TEST_F(L2Learn, AFrameForItsOwnPortIsNotSentBack) {
  At(0, 0, Host(2), Host(1));
  At(kSecond, 0, Host(1), Host(2));  // B behind the same port (a hub): A's frame stays there
  EXPECT_EQ(At(2 * kSecond, 0, Host(1), Host(2)), (std::set<PortId>{}));
  EXPECT_EQ(h_.sw().Drops(MacLearning::kSamePort), 2u);
}

TEST_F(L2Learn, ATaggedFrameOfAnotherVlanIsDropped) {
  h_.Send(0, FrameBuilder().Eth(kBroadcastMac, Host(1)).Vlan(20).Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2")).Udp(1, 2).Payload(8).Build());
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(MacLearning::kVlanFilter), 1u);
}

class L2LearnAging : public L2Learn {
 protected:
  L2LearnAging() : L2Learn(LearningConfig({{"mac_age", "10"}})) {}
};

TEST_F(L2LearnAging, AnIdleEntryAgesOutAndTrafficKeepsOneAlive) {
  At(0, 0, Host(2), Host(1));  // learns A
  At(0, 2, Host(9), Host(2));  // learns B at about the same time
  // A keeps sending (a refresh digest once its entry is stale after 5 s); B is silent.
  for (TimeNs t = 4; t <= 16; t += 4) At(t * kSecond, 0, Host(9), Host(1));
  EXPECT_EQ(At(17 * kSecond, 3, Host(1), Host(7)), (std::set<PortId>{0}));
  EXPECT_EQ(At(17 * kSecond, 3, Host(2), Host(7)), (std::set<PortId>{0, 1, 2}));  // aged out
  const std::string show = Show();
  EXPECT_NE(show.find("aged 1,"), std::string::npos) << show;
  EXPECT_EQ(show.find("02:00:00:00:00:02"), std::string::npos) << show;
}

class L2LearnFull : public L2Learn {
 protected:
  L2LearnFull() : L2Learn(LearningConfig({{"mac_limit", "4"}, {"mac_age", "0"}})) {}
};

TEST_F(L2LearnFull, AFullTableRefusesNewMacsAndKnownHostsKeepForwarding) {
  At(0, 0, Host(2), Host(1));
  At(kSecond, 2, Host(1), Host(2));
  for (uint64_t i = 0; i < 100; ++i) At(2 * kSecond + i * 1'000'000, 1, Host(1), Host(100 + i));
  At(3 * kSecond, 0, Host(2), Host(1));
  const std::string show = Show();
  EXPECT_NE(show.find("entries 4 of mac_limit 4"), std::string::npos) << show;
  EXPECT_NE(show.find("refused (table full) 98"), std::string::npos) << show;
  EXPECT_EQ(At(4 * kSecond, 2, Host(1), Host(2)), (std::set<PortId>{0}));
  EXPECT_EQ(At(4 * kSecond, 0, Host(2), Host(1)), (std::set<PortId>{2}));
}

TEST_F(L2Learn, AHandWrittenEntryStaysStatic) {
  h_.MustCmd("table_add dmac forward 02:00:00:00:00:01 => 1");
  At(0, 3, Host(2), Host(1));  // A appears on port 3: its entry is not moved
  EXPECT_EQ(At(kSecond, 2, Host(1), Host(2)), (std::set<PortId>{1}));
  const std::string show = Show();
  EXPECT_NE(show.find("02:00:00:00:00:01  10    1     -         static"), std::string::npos)
      << show;
  EXPECT_NE(show.find("moved 0,"), std::string::npos) << show;
}

TEST(L2LearnConfig, BadKeysAreRefusedAndOffKeepsTodaysBehaviour) {
  SwitchConfig bad = LearningConfig({{"port_vlan", "0-9:10"}});
  SwitchHarness h(bad);
  EXPECT_FALSE(h.ok());
  EXPECT_NE(h.error().find("port_vlan"), std::string::npos) << h.error();
  SwitchConfig off;
  off.num_ports = 4;
  off.program_options.Set("mac_age", "10");  // a key of learning, learning off
  SwitchHarness h2(off);
  EXPECT_FALSE(h2.ok());
  SwitchConfig plain;
  plain.num_ports = 4;
  SwitchHarness h3(plain);
  ASSERT_TRUE(h3.ok());
  h3.Send(0, Frame(Host(2), Host(1)));
  EXPECT_TRUE(h3.Drain().empty());  // no dmac entry, no learning: a table miss, as before
  EXPECT_EQ(h3.sw().Drops(DropReason::kTableMiss), 1u);
  EXPECT_FALSE(h3.sw().commands().Has("show mac"));
}

}  // namespace
}  // namespace swemu

namespace swemu {
namespace {

// A program composing l2l3 hands its digests on: flow_ecn learns as l2l3 does.
TEST(L2LearnComposed, FlowEcnLearnsThroughItsL2l3) {
  SwitchConfig config = LearningConfig();
  config.program = "flow_ecn";
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  ASSERT_NE(h.sw().digests(), nullptr);
  h.Send(0, Frame(Host(2), Host(1)));
  EXPECT_EQ(Ports(h.Drain()), (std::set<PortId>{1, 2, 3}));
  h.clock().Set(1'000'000);
  h.sw().ServiceControlPlane(1'000'000);
  h.Send(2, Frame(Host(1), Host(2)));
  EXPECT_EQ(Ports(h.Drain()), (std::set<PortId>{0}));
}

}  // namespace
}  // namespace swemu
