// Answers of the replicas merged into one for the whole switch (replica_merge.h): for the same
// traffic, the merged answers of two sharded replicas equal one unsharded switch's answers.
#include <gtest/gtest.h>

#include "pipeline/wire/frame_builder.h"
#include "swemu/replica_merge.h"
#include "tests/swemu/multicore_replicas.h"

namespace swemu {
namespace {

using testing::Replicas;

// One size for all: which frames an overflowing queue drops depends on arrival order, which the
// hand-over changes, and the byte counters must not.
std::vector<uint8_t> Frame(uint64_t dst, uint16_t flow) {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(dst), MacAddr::FromU64(0x1))
      .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
      .Udp(static_cast<uint16_t>(1000 + flow), 2000)
      .Payload(40)
      .Build();
}

SwitchConfig Config() {
  SwitchConfig config;
  config.num_ports = 4;
  return config;
}

class MulticoreMergeTest : public ::testing::Test {
 protected:
  MulticoreMergeTest() : pool_(4096), replicas_(Config(), 2) {
    reference_ = std::move(*Switch::Create(Config(), pool_, clock_));
    for (const char* line :
         {"table_add dmac forward 00:00:00:00:00:02 => 1",
          "table_add dmac forward 00:00:00:00:00:03 => 2",
          "table_add dmac forward 00:00:00:00:00:04 => 3",
          "table_add dmac multicast 00:00:00:00:00:77 => 1", "mc_mgrp_create 1",
          "mc_node_create 0 0 1 2 3", "mc_node_associate 1 0", "set_queue_depth 5 3"}) {
      EXPECT_TRUE(reference_->commands().Execute(line).ok()) << line;
      replicas_.Cmd(line);
    }
    // Ports 0..3 each receive flows to every destination, a miss, a multicast and a runt; port
    // 3's queue 0 (depth 5) overflows.
    for (uint16_t i = 0; i < 60; ++i) {
      const auto port = static_cast<PortId>(i % 4);
      const uint64_t dst = i % 10 == 9 ? 0xee : i % 13 == 5 ? 0x77 : 2 + i % 3;
      Send(port, Frame(dst, i % 11));
    }
    Send(2, std::vector<uint8_t>(8, 0));
    reference_sent_ = Drain();
    replicas_sent_ = replicas_.Drain().size();
  }
  ~MulticoreMergeTest() override {
    reference_.reset();
    EXPECT_EQ(pool_.InUse(), 0u);
  }

  void Send(PortId port, const std::vector<uint8_t>& frame) {
    reference_->Receive(pool_.FromBytes(frame.data(), static_cast<uint32_t>(frame.size())), port);
    replicas_.Receive(port, frame);
  }
  std::size_t Drain() {
    std::size_t n = 0;
    for (PortId p = 0; p < reference_->num_ports(); ++p) {
      while (Packet* pkt = reference_->Transmit(p)) {
        pool_.Free(pkt);
        ++n;
      }
    }
    return n;
  }
  void ExpectMergedEqualsReference(const std::string& line) {
    Result<std::string> whole = reference_->commands().Execute(line);
    ASSERT_TRUE(whole.ok()) << whole.message();
    const std::vector<std::string> answers = replicas_.Answers(line);
    EXPECT_NE(answers[0], answers[1]) << line << ": each replica holds a part";
    EXPECT_EQ(MergeAnswers(MergeRuleFor(line), answers), *whole) << line;
  }

  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> reference_;
  Replicas replicas_;
  std::size_t reference_sent_ = 0;
  std::size_t replicas_sent_ = 0;
};

TEST_F(MulticoreMergeTest, SameTrafficSendsTheSameFrames) {
  EXPECT_EQ(replicas_sent_, reference_sent_);
  EXPECT_GT(reference_->Drops(DropReason::kTmQueueFull), 0u);
}

TEST_F(MulticoreMergeTest, ShowStatsPortsDropsAndCountersAreTheWholeSwitch) {
  for (const char* line : {"show stats", "show ports", "show drops", "show counters"}) {
    ExpectMergedEqualsReference(line);
  }
}

TEST_F(MulticoreMergeTest, QueuesAndTablesAreTheWholeSwitch) {
  for (const char* line : {"show queues", "show tables", "table_dump dmac"}) {
    ExpectMergedEqualsReference(line);
  }
}

TEST_F(MulticoreMergeTest, CounterReadIsTheWholeSwitch) {
  for (const char* line :
       {"counter_read port_rx 0", "counter_read port_tx 1", "counter_read dmac",
        "counter_read dmac 0", "counter_read drop table_miss", "counter_read queue 3:0"}) {
    ExpectMergedEqualsReference(line);
  }
}

TEST(MulticoreMergeRuleTest, RegisterCellComesFromTheReplicaThatOwnsItsIndex) {
  const std::vector<std::string> answers = {"agg[0]=10\nagg[1]=0\nagg[2]=12\nagg[3]=0",
                                            "agg[0]=0\nagg[1]=21\nagg[2]=0\nagg[3]=23"};
  EXPECT_EQ(MergeAnswers(MergeRuleFor("register_read agg"), answers),
            "agg[0]=10\nagg[1]=21\nagg[2]=12\nagg[3]=23");
  EXPECT_EQ(MergeAnswers(MergeRuleFor("register_read agg 3"), {"agg[3]=1,2", "agg[3]=5,6"}),
            "agg[3]=5,6");
}

TEST(MulticoreMergeRuleTest, RuntimeHasOneSectionPerLcore) {
  EXPECT_EQ(MergeAnswers(MergeRuleFor("show runtime"), {"a\n", "b\n"}),
            "lcore 0:\na\nlcore 1:\nb\n");
}

TEST(MulticoreMergeRuleTest, LinesThatChangeStateAreNotMerged) {
  EXPECT_EQ(MergeRuleFor("table_add dmac forward 00:00:00:00:00:02 => 1"), MergeRule::kNone);
  EXPECT_EQ(MergeRuleFor("register_write agg 1 5"), MergeRule::kNone);
  EXPECT_EQ(MergeRuleFor("show resources"), MergeRule::kNone);
  EXPECT_EQ(MergeAnswers(MergeRule::kNone, {"x", "y"}), "x");
}

TEST(MulticoreMergeRuleTest, AnswersOfAnotherShapeGiveReplicaZerosAnswer) {
  EXPECT_EQ(MergeAnswers(MergeRule::kShowPorts, {"a 1\nb 2\n", "a 1\n"}), "a 1\nb 2\n");
  EXPECT_EQ(MergeAnswers(MergeRule::kShowCounters, {"{\"a\": 1}", "not json"}), "{\"a\": 1}");
}

TEST(MulticoreMergeRuleTest, AWiderSumKeepsColumnsAligned) {
  EXPECT_EQ(
      MergeAnswers(MergeRule::kShowPorts, {"   0        9      99\n", "   0        1       1\n"}),
      "   0       10     100\n");
}

TEST(MulticoreMergeRuleTest, GoatCountersAndSlotsAreSummedTheConfigurationKept) {
  EXPECT_EQ(MergeRuleFor("goat_stats"), MergeRule::kGoatStats);
  EXPECT_EQ(MergeRuleFor("show goat"), MergeRule::kGoatStats);
  EXPECT_EQ(MergeRuleFor("goat_stats reset"), MergeRule::kNone);
  const std::vector<std::string> stats = {
      R"(goat: {"claimed": 4, "slots_in_use": 2, "slots": 64, "elements": 8})",
      R"(goat: {"claimed": 6, "slots_in_use": 1, "slots": 64, "elements": 8})"};
  EXPECT_EQ(MergeAnswers(MergeRule::kGoatStats, stats),
            R"(goat: {"claimed": 10, "slots_in_use": 3, "slots": 64, "elements": 8})");
}

}  // namespace
}  // namespace swemu

namespace swemu {
namespace {

// Each aggregator is owned by one lcore (ATP's shard key is its index), so the replicas' counters
// and aggregators in use add up; the array size and the element count are configuration.
TEST(MulticoreMergeRuleTest, AtpCountersAndAggregatorsInUseAreSummed) {
  EXPECT_EQ(MergeRuleFor("show atp"), MergeRule::kShowAtp);
  EXPECT_EQ(MergeRuleFor("atp_stats"), MergeRule::kAtpStats);
  EXPECT_EQ(MergeRuleFor("atp_stats reset"), MergeRule::kNone);
  const std::vector<std::string> show = {
      "atp: 3/1024 aggregators in use, 64 elements\nclaimed 10, aggregated 20\n",
      "atp: 4/1024 aggregators in use, 64 elements\nclaimed 1, aggregated 2\n"};
  EXPECT_EQ(MergeAnswers(MergeRule::kShowAtp, show),
            "atp: 7/1024 aggregators in use, 64 elements\nclaimed 11, aggregated 22\n");
  const std::vector<std::string> stats = {
      R"({"claimed": 10, "aggregators_in_use": 3, "aggregators": 1024, "elements": 64})",
      R"({"claimed": 5, "aggregators_in_use": 4, "aggregators": 1024, "elements": 64})"};
  EXPECT_EQ(MergeAnswers(MergeRule::kAtpStats, stats),
            R"({"claimed": 15, "aggregators_in_use": 7, "aggregators": 1024, "elements": 64})");
}

TEST(MulticoreMergeRuleTest, PcnCountersAreSummed) {
  EXPECT_EQ(MergeRuleFor("pcn_stats"), MergeRule::kPcnStats);
  EXPECT_EQ(MergeRuleFor("pcn_stats reset"), MergeRule::kNone);
  const std::vector<std::string> stats = {R"({"starts": 2, "bursts_arrived": 1, "marked_pcn": 7})",
                                          R"({"starts": 1, "bursts_arrived": 2, "marked_pcn": 0})"};
  EXPECT_EQ(MergeAnswers(MergeRule::kPcnStats, stats),
            R"({"starts": 3, "bursts_arrived": 3, "marked_pcn": 7})");
}

// With the PS on port 1, owned by lcore 1: lcore 0 alone said "no port line, starts 0".
TEST(MulticoreMergeRuleTest, ShowPcnTakesEachPortFromItsOwnerAndSumsTheCounters) {
  EXPECT_EQ(MergeRuleFor("show pcn"), MergeRule::kShowPcn);
  const std::string header = "pcn: udp_port 9200, timeout 8 ms, 4 job lanes per port\n";
  const std::vector<std::string> answers = {
      header + "port 0: initial 64, active 64\n" + R"({"starts": 0, "bursts_arrived": 0})" + "\n",
      header + "port 0: initial 64, active 64\nport 1: initial 64, active 12, job 0: 3 " +
          "pending, threshold 12;\n" + R"({"starts": 9, "bursts_arrived": 8})" + "\n"};
  EXPECT_EQ(MergeAnswers(MergeRule::kShowPcn, answers),
            header + "port 0: initial 64, active 64\nport 1: initial 64, active 12, job 0: 3 " +
                "pending, threshold 12;\n" + R"({"starts": 9, "bursts_arrived": 8})" + "\n");
}

}  // namespace
}  // namespace swemu
