// The flow_ecn program through one switch in virtual time: each flow's ECT packets past the
// threshold leave CE-marked with a valid checksum, flows count apart, Not-ECT and non-IPv4 frames
// pass unmarked, a window restarts the count, the threshold changes live, bad options are refused
// at load, and the shard key is the flow's counter cell.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "pipeline/parser/parser.h"
#include "pipeline/programs/flow_ecn.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::Cell;
using testing::SentFrame;
using testing::SwitchHarness;

const MacAddr kDst = *ParseMac("00:00:00:00:01:01");
const MacAddr kSrc = *ParseMac("00:00:00:00:00:01");
constexpr uint32_t kThreshold = 3;

SwitchConfig ProgramConfig(std::map<std::string, std::string> options = {}) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "flow_ecn";
  config.program_options.Set("threshold", std::to_string(kThreshold));
  config.program_options.Set("window", "0");
  for (auto& [k, v] : options) config.program_options.Set(k, v);
  return config;
}

// A UDP packet of the flow with source port `sport`.
std::vector<uint8_t> Udp(uint16_t sport, uint8_t ecn = kEcnEct0) {
  return FrameBuilder()
      .Eth(kDst, kSrc)
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.1.1"))
      .Tos(MakeTos(0, ecn))
      .Udp(sport, 7001)
      .Payload(100)
      .Build();
}

uint8_t EcnOf(const SentFrame& f) { return f.bytes[15] & 0x3; }

// The ECN codepoints of what left, in order; each checked for a valid IPv4 checksum.
std::vector<uint8_t> SendAndDrainEcn(SwitchHarness& h, const std::vector<uint8_t>& frame,
                                     int count) {
  for (int i = 0; i < count; ++i) h.Send(0, frame);
  std::vector<uint8_t> ecn;
  for (const SentFrame& f : h.Drain()) {
    EXPECT_TRUE(Ipv4HeaderChecksumOk(f.bytes.data() + 14, 20));
    ecn.push_back(EcnOf(f));
  }
  return ecn;
}

class FlowEcnTest : public ::testing::Test {
 protected:
  explicit FlowEcnTest(std::map<std::string, std::string> options = {})
      : h_(ProgramConfig(std::move(options))) {}
  void SetUp() override {
    ASSERT_TRUE(h_.ok()) << h_.error();
    h_.MustCmd("table_add dmac forward 00:00:00:00:01:01 => 1");
  }
  FlowEcnProgram& program() { return static_cast<FlowEcnProgram&>(h_.sw().program()); }
  SwitchHarness h_;
};

constexpr uint8_t kE = kEcnEct0;
constexpr uint8_t kC = kEcnCe;

TEST_F(FlowEcnTest, PacketsPastTheThresholdAreMarked) {
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 5), (std::vector<uint8_t>{kE, kE, kE, kC, kC}));
  EXPECT_EQ(h_.sw().tm().queue_counters(1, 0).marked, 2u);
  testing::ExpectConservation(h_);
}

TEST_F(FlowEcnTest, FlowsCountApart) {
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 3), (std::vector<uint8_t>{kE, kE, kE}));
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1001), 3), (std::vector<uint8_t>{kE, kE, kE}));
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 1), (std::vector<uint8_t>{kC}));
}

TEST_F(FlowEcnTest, NotEctAndNonIpv4PassUnmarked) {
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000, kEcnNotEct), 5), std::vector<uint8_t>(5, kEcnNotEct));
  EXPECT_EQ(h_.sw().TotalDrops(), 0u);
  const std::vector<uint8_t> arp =
      FrameBuilder().Eth(kDst, kSrc).EtherType(kEtherTypeArp).Payload(46).Build();
  for (int i = 0; i < 5; ++i) h_.Send(0, arp);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 5u);
  for (const SentFrame& f : out) EXPECT_EQ(f.bytes, arp);
}

TEST_F(FlowEcnTest, TheThresholdChangesLiveAndBadValuesChangeNothing) {
  h_.MustCmd("flow_ecn_threshold 0");
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 1), (std::vector<uint8_t>{kC}));
  for (const char* bad : {"flow_ecn_threshold -1", "flow_ecn_threshold x",
                          "flow_ecn_threshold 4294967295", "flow_ecn_threshold"}) {
    EXPECT_FALSE(h_.Cmd(bad).ok()) << bad;
  }
  EXPECT_EQ(program().config().threshold, 0u);
  Result<std::string> show = h_.Cmd("show flow_ecn");
  ASSERT_TRUE(show.ok());
  EXPECT_NE(show->find("past 0 packets per run; 4096 flow cells"), std::string::npos) << *show;
}

TEST_F(FlowEcnTest, RegisterResetStartsTheCountAgain) {
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 4).back(), kC);
  h_.MustCmd("register_reset flow_ecn_count");
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 1), (std::vector<uint8_t>{kE}));
}

// The shard key of a packet is the cell that counts its flow (so one lcore owns each cell).
TEST_F(FlowEcnTest, TheShardKeyIsTheFlowsCounterCell) {
  const std::vector<uint8_t> frame = Udp(1234);
  Packet* pkt = h_.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
  const uint32_t key = h_.sw().ShardKeyOf(*pkt, 0);
  EXPECT_EQ(key, FlowHash(*pkt) % 4096);
  h_.pool().Free(pkt);
  SendAndDrainEcn(h_, frame, 2);
  EXPECT_EQ(Cell(h_, "flow_ecn_count", key, 0), 2u);
}

class FlowEcnWindowTest : public FlowEcnTest {
 protected:
  FlowEcnWindowTest() : FlowEcnTest({{"window", "100us"}}) {}
};

TEST_F(FlowEcnWindowTest, ANewWindowStartsFromZero) {
  h_.clock().Set(1'000'000);  // the start of window 10
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 4), (std::vector<uint8_t>{kE, kE, kE, kC}));
  h_.clock().Set(1'100'000);  // window 11
  EXPECT_EQ(SendAndDrainEcn(h_, Udp(1000), 4), (std::vector<uint8_t>{kE, kE, kE, kC}));
}

TEST(FlowEcnOptions, BadOptionsAreRefusedAtLoad) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"threshold", "x"}, {"window", "1 parsec"}, {"flows", "1000"}, {"flows", "0"},
      {"threshhold", "3"}};
  for (const auto& [key, value] : bad) {
    SwitchHarness h(ProgramConfig({{key, value}}));
    EXPECT_FALSE(h.ok()) << key << "=" << value;
    EXPECT_NE(h.error().find(key), std::string::npos) << h.error();
  }
}

// The counter sits after l2l3's six ingress stages: a pipeline of six does not hold it.
TEST(FlowEcnOptions, SixIngressStagesDoNotFit) {
  SwitchConfig config = ProgramConfig();
  config.pipeline.ingress_stages = 6;
  SwitchHarness h(config);
  EXPECT_FALSE(h.ok());
  EXPECT_NE(h.error().find("flow_ecn_count"), std::string::npos) << h.error();
}

}  // namespace
}  // namespace swemu
