#include <gtest/gtest.h>

#include <string>

#include "pipeline/program/program_builder.h"

namespace swemu {
namespace {

class LaneSplitTest : public ::testing::Test {
 protected:
  PipelineConfig config_;
  PipelineResources resources_;
  ProgramBuilder b_{"test", config_, resources_};
};

TEST_F(LaneSplitTest, LanesAreChargedPerStageAndContinueIntoEgress) {
  Result<LaneSplitRegister> r =
      b_.AddLaneSplitRegister(Gress::kIngress, 4, {"agg", 1024, 32, 64, 4}, 4);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->reg->lanes(), 64u);
  EXPECT_EQ(r->lanes_per_stage, 4u);
  EXPECT_EQ(r->range.stages, 16);
  EXPECT_EQ(r->range.first_gress, Gress::kIngress);
  EXPECT_EQ(r->range.first_stage, 4);
  EXPECT_EQ(r->range.last_gress, Gress::kEgress);
  EXPECT_EQ(r->range.last_stage, 7);
  EXPECT_EQ(r->range.ToString(), "ingress stages 4-11 and egress stages 0-7");
  const ResourceReport& report = b_.report();
  for (int s = 0; s < 4; ++s) EXPECT_TRUE(report.ingress[s].empty()) << s;
  for (int s = 4; s < 12; ++s) {
    EXPECT_EQ(report.ingress[s].stateful_alus, 4u) << s;
    EXPECT_EQ(report.ingress[s].sram_bytes, 1024u * 4 * 4) << s;
  }
  for (int s = 0; s < 8; ++s) EXPECT_EQ(report.egress[s].stateful_alus, 4u) << s;
  EXPECT_TRUE(report.egress[8].empty());
  ASSERT_EQ(report.egress[0].items.size(), 1u);
  EXPECT_EQ(report.egress[0].items[0],
            "register agg lanes 32-35 (1024 x 4 x 32 bit; one array of 64 lanes)");
  EXPECT_EQ(resources_.FindRegister("agg"), r->reg);
  EXPECT_TRUE(b_.Finish().ok());
}

TEST_F(LaneSplitTest, LastStageTakesTheRemainderAndCombinesWithOtherArrays) {
  ASSERT_TRUE(b_.AddRegister(Gress::kIngress, 3, {"id", 1024, 64}).ok());
  Result<LaneSplitRegister> r =
      b_.AddLaneSplitRegister(Gress::kIngress, 1, {"agg", 1024, 16, 10}, 4);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->range.ToString(), "ingress stages 1-3");
  EXPECT_EQ(b_.report().ingress[3].stateful_alus, 2u + 1u);  // lanes 8-9 beside id
  EXPECT_EQ(b_.report().ingress[3].sram_bytes, 1024u * 2 * 2 + 1024u * 8);
  EXPECT_TRUE(b_.Finish().ok());
}

TEST_F(LaneSplitTest, OneAccessPerPassCoversAllLanes) {
  Result<LaneSplitRegister> r =
      b_.AddLaneSplitRegister(Gress::kIngress, 0, {"agg", 8, 32, 12, 4}, 4);
  ASSERT_TRUE(r.ok()) << r.message();
  Packet pkt;
  EXPECT_TRUE(r->reg->Rmw32(pkt, 2, [](std::span<uint32_t> lanes) {
    for (uint32_t& lane : lanes) lane += 1;
  }));
  EXPECT_EQ(*r->reg->Read(2, 0), 1u);
  EXPECT_EQ(*r->reg->Read(2, 11), 1u);
  // A second access in the same pass, even to lanes of another stage, is refused.
  EXPECT_FALSE(r->reg->Rmw32(pkt, 2, [](std::span<uint32_t> lanes) { lanes[11] = 5; }));
  EXPECT_EQ(pkt.meta.drop_reason, DropReason::kRegisterDoubleAccess);
  EXPECT_EQ(*r->reg->Read(2, 11), 1u);
  Status again = b_.AccessRegister(Gress::kIngress, 5, r->reg);
  EXPECT_EQ(again.message(),
            "register agg is accessed twice in one pass (ingress stages 0-2 and ingress stage 5): "
            "one read-modify-write per array per pass");
}

TEST_F(LaneSplitTest, TooManyLanesForTheRemainingStagesIsRefused) {
  Result<LaneSplitRegister> r =
      b_.AddLaneSplitRegister(Gress::kIngress, 4, {"agg", 1024, 32, 84}, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "register agg: 84 lanes at 4 per stage need 21 stages from ingress stage 4, but only "
            "20 remain");
  EXPECT_EQ(resources_.FindRegister("agg"), nullptr);
  // An egress array does not wrap around to ingress.
  Result<LaneSplitRegister> e = b_.AddLaneSplitRegister(Gress::kEgress, 10, {"e", 8, 32, 9}, 4);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("need 3 stages from egress stage 10, but only 2 remain"),
            std::string::npos)
      << e.message();
  EXPECT_FALSE(b_.Finish().ok());  // the refusals stay in the report
  EXPECT_EQ(b_.report().errors.size(), 2u);
}

TEST_F(LaneSplitTest, BadArgumentsNameTheProblem) {
  EXPECT_EQ(b_.AddLaneSplitRegister(Gress::kIngress, 0, {"a", 8, 32, 4}, 0).message(),
            "register a: lanes per stage must be at least 1");
  EXPECT_EQ(b_.AddLaneSplitRegister(Gress::kEgress, 12, {"a", 8, 32, 4}, 4).message(),
            "register a: egress stage 12 does not exist");
  ASSERT_TRUE(b_.AddLaneSplitRegister(Gress::kIngress, 0, {"a", 8, 32, 4}, 4).ok());
  EXPECT_EQ(b_.AddLaneSplitRegister(Gress::kIngress, 1, {"a", 8, 32, 4}, 4).message(),
            "register a is declared twice");
  EXPECT_EQ(b_.AddLaneSplitRegister(Gress::kIngress, 1, {"b", 8, 40, 4, 4}, 4).message(),
            "register b: storage must be 8 bytes per cell, or 4 for widths up to 32 bits, not 4");
}

TEST_F(LaneSplitTest, StagesOverTheAluBudgetAreReportedAtFinish) {
  ASSERT_TRUE(b_.AddRegister(Gress::kIngress, 5, {"other", 64, 32, 2}).ok());
  ASSERT_TRUE(b_.AddLaneSplitRegister(Gress::kIngress, 4, {"agg", 64, 32, 8}, 4).ok());
  Status fits = b_.Finish();
  ASSERT_FALSE(fits.ok());
  EXPECT_EQ(fits.message(), "program test does not fit: ingress stage 5: 6 stateful ALUs > 4");
}

TEST(StageRangeTest, SingleStageAndEgressOnlyRangesReadNaturally) {
  EXPECT_EQ((StageRange{Gress::kIngress, 3, Gress::kIngress, 3, 1}).ToString(), "ingress stage 3");
  EXPECT_EQ((StageRange{Gress::kEgress, 0, Gress::kEgress, 2, 3}).ToString(), "egress stages 0-2");
  EXPECT_EQ((StageRange{Gress::kIngress, 11, Gress::kEgress, 0, 2}).ToString(),
            "ingress stage 11 and egress stage 0");
}

}  // namespace
}  // namespace swemu
