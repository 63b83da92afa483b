// Answers of the replicas merged into one for the whole switch (replica_merge.h): for the same
// traffic, the merged answers of two sharded replicas equal one unsharded switch's answers.
#include <gtest/gtest.h>

#include "pipeline/wire/frame_builder.h"
#include "swemu/replica_merge.h"
#include "tests/swemu/multicore_replicas.h"

namespace swemu {
namespace {

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
  MulticoreMergeTest() : twin_(Config(), 2) {
    for (const char* line :
         {"table_add dmac forward 00:00:00:00:00:02 => 1",
          "table_add dmac forward 00:00:00:00:00:03 => 2",
          "table_add dmac forward 00:00:00:00:00:04 => 3",
          "table_add dmac multicast 00:00:00:00:00:77 => 1", "mc_mgrp_create 1",
          "mc_node_create 0 0 1 2 3", "mc_node_associate 1 0", "set_queue_depth 5 3"}) {
      twin_.Cmd(line);
    }
    // Ports 0..3 each receive flows to every destination, a miss, a multicast and a runt; port
    // 3's queue 0 (depth 5) overflows.
    for (uint16_t i = 0; i < 60; ++i) {
      const auto port = static_cast<PortId>(i % 4);
      const uint64_t dst = i % 10 == 9 ? 0xee : i % 13 == 5 ? 0x77 : 2 + i % 3;
      twin_.Send(port, Frame(dst, i % 11));
    }
    twin_.Send(2, std::vector<uint8_t>(8, 0));
    reference_sent_ = twin_.DrainReference();
    replicas_sent_ = twin_.replicas().Drain().size();
  }
  void ExpectMergedEqualsReference(const std::string& line) {
    twin_.ExpectMergedEqualsReference(line);
  }

  testing::ReplicasAndReference twin_;
  std::size_t reference_sent_ = 0;
  std::size_t replicas_sent_ = 0;
};

TEST_F(MulticoreMergeTest, SameTrafficSendsTheSameFrames) {
  EXPECT_EQ(replicas_sent_, reference_sent_);
  EXPECT_GT(twin_.reference().Drops(DropReason::kTmQueueFull), 0u);
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

}  // namespace
}  // namespace swemu
