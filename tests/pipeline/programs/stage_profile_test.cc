// The switch's StageProfile over the atp program: nothing is counted while it is off, every
// stage that holds a table or array is a row named as the resource report places it, the
// stages atp runs in its ingress pass are charged to that pass, and timing changes no result.
#include "pipeline/program/stage_profile.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/pipeline/programs/atp_test_util.h"

namespace swemu::testing {
namespace {

constexpr ScopeOverhead kNoOverhead{};

// Four workers' gradients for seqs [0, seqs): each aggregator completes once.
std::vector<std::vector<uint8_t>> Job(uint32_t seqs) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t w = 0; w < 4; ++w) {
    for (uint32_t s = 0; s < seqs; ++s)
      frames.push_back(Gradient(kJob, s, w, 4, 0, Fill(8, w + 1)).Build());
  }
  return frames;
}

const StageProfile::Row* FindRow(const std::vector<StageProfile::Row>& rows,
                                 const std::string& name) {
  for (const StageProfile::Row& r : rows) {
    if (r.name.find(name) != std::string::npos) return &r;
  }
  return nullptr;
}

TEST(StageProfileTest, OffCountsNothing) {
  SwitchHarness h(AtpConfig());
  ASSERT_TRUE(h.ok()) << h.error();
  SetupRack(h);
  h.SendBurst(0, Job(8));
  h.Drain();
  for (const StageProfile::Row& r : h.sw().stage_profile().Rows(kNoOverhead)) {
    EXPECT_EQ(r.calls, 0u) << r.name;
    EXPECT_EQ(r.cycles, 0) << r.name;
  }
}

TEST(StageProfileTest, EveryStageIsARowChargedToThePassThatRanIt) {
  SwitchHarness h(AtpConfig());
  ASSERT_TRUE(h.ok()) << h.error();
  SetupRack(h);
  StageProfile& profile = h.sw().stage_profile();
  profile.Enable(true);
  const auto job = Job(8);
  for (std::size_t at = 0; at < job.size(); at += 8) {
    h.SendBurst(0, {job.begin() + at, job.begin() + at + 8});
  }
  const std::vector<SentFrame> out = h.Drain();
  profile.Enable(false);
  ASSERT_EQ(out.size(), 8u);  // the eight results, to the PS
  for (const SentFrame& f : out) EXPECT_EQ(Decode(f).values, Fill(8, 1 + 2 + 3 + 4));

  const std::vector<StageProfile::Row> rows = profile.Rows(kNoOverhead);
  const StageProfile::Row* parser = FindRow(rows, "parser");
  ASSERT_NE(parser, nullptr);
  EXPECT_EQ(parser->calls, 4u);     // one per burst
  EXPECT_EQ(parser->packets, 32u);  // every gradient
  // Each aggregator array is timed once per burst (TimeBurst) over the gradients that reach it.
  for (const char* name : {"ingress stage 1: table ipv4_lpm, table ipv6_lpm, register atp_id",
                           "ingress stages 4-5: register atp_value"}) {
    const StageProfile::Row* row = FindRow(rows, name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_TRUE(row->stage);
    EXPECT_EQ(row->calls, 4u) << name;
    EXPECT_EQ(row->packets, 32u) << name;
    EXPECT_GT(row->cycles, 0) << name;
  }
  // atp_overflow sits in an egress stage but runs in the ingress pass: listed before the
  // ingress program's own line, not under egress.
  auto index = [&](const std::string& name) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].name.find(name) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  };
  ASSERT_GE(index("register atp_overflow"), 0);
  EXPECT_LT(index("register atp_overflow"), index("ingress program logic"));
  EXPECT_GT(index("egress program logic"), index("tm dequeue"));
  EXPECT_EQ(FindRow(rows, "tm dequeue")->packets, 0u);  // the TM's calls count no packets
  EXPECT_GT(FindRow(rows, "tm enqueue")->calls, 0u);
  EXPECT_GT(FindRow(rows, "deparser")->calls, 0u);

  // Reset zeroes every row; the format names every row.
  const std::string text = StageProfile::Format(rows, 32, 1.0, "");
  for (const StageProfile::Row& r : rows) EXPECT_NE(text.find(r.name), std::string::npos) << r.name;
  profile.Reset();
  for (const StageProfile::Row& r : profile.Rows(kNoOverhead)) EXPECT_EQ(r.calls, 0u) << r.name;
}

// The overhead of each timed call comes off the call's own row, and what a stage's timing
// added to its program's time comes off the program's row.
TEST(StageProfileTest, OverheadIsTakenOffEachRow) {
  SwitchHarness h(AtpConfig());
  ASSERT_TRUE(h.ok()) << h.error();
  SetupRack(h);
  StageProfile& profile = h.sw().stage_profile();
  profile.Enable(true);
  h.SendBurst(0, Job(8));
  h.Drain();
  profile.Enable(false);
  const std::vector<StageProfile::Row> raw = profile.Rows(kNoOverhead);
  const ScopeOverhead overhead{10, 30};
  const std::vector<StageProfile::Row> net = profile.Rows(overhead);
  ASSERT_EQ(raw.size(), net.size());
  double stage_calls = 0;
  double stage_cut = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].name.starts_with("ingress program")) continue;
    EXPECT_DOUBLE_EQ(net[i].cycles, std::max(0.0, raw[i].cycles - 10.0 * raw[i].calls))
        << raw[i].name;
    if (raw[i].stage && raw[i].calls != 0 && raw[i].name.find("ingress") != std::string::npos) {
      stage_calls += raw[i].calls;
      stage_cut += raw[i].cycles - net[i].cycles;
    }
  }
  const StageProfile::Row* logic_raw = FindRow(raw, "ingress program logic");
  const StageProfile::Row* logic_net = FindRow(net, "ingress program logic");
  // raw logic = program - stages; net logic = program - 10*calls - (stages - cut + 30*calls).
  const double expected =
      logic_raw->cycles - 10.0 * logic_raw->calls + stage_cut - 30 * stage_calls;
  EXPECT_DOUBLE_EQ(logic_net->cycles, std::max(0.0, expected));
}

}  // namespace
}  // namespace swemu::testing

namespace swemu::testing {
namespace {

// The switch's own glue gets rows only when whole receive and transmit calls are timed too
// (swemu --bench); a real-time datapath, which enters the switch elsewhere, never sees them.
TEST(StageProfileTest, SwitchCallRowsOnlyWhenAsked) {
  for (const bool calls : {false, true}) {
    SwitchHarness h(AtpConfig());
    ASSERT_TRUE(h.ok()) << h.error();
    SetupRack(h);
    StageProfile& profile = h.sw().stage_profile();
    profile.TimeSwitchCalls(calls);
    profile.Enable(true);
    h.SendBurst(0, Job(8));
    h.Drain();
    profile.Enable(false);
    const std::vector<StageProfile::Row> rows = profile.Rows(kNoOverhead);
    const StageProfile::Row* rx = FindRow(rows, "switch receive call");
    const StageProfile::Row* tx = FindRow(rows, "switch transmit call");
    EXPECT_EQ(rx != nullptr, calls);
    EXPECT_EQ(tx != nullptr, calls);
    if (calls) {
      EXPECT_EQ(rx->calls, 1u);
      EXPECT_EQ(rx->packets, 32u);
      EXPECT_GT(tx->calls, 0u);
    }
  }
}

}  // namespace
}  // namespace swemu::testing
