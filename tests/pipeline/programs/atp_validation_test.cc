// The atp program's input checks, load-time configuration, resources, shard key and the burst
// path's equivalence with packet-by-packet processing.
#include <gtest/gtest.h>

#include "tests/pipeline/programs/atp_test_util.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT(build/namespaces)

constexpr uint16_t kN = 8;
constexpr uint32_t kAggs = 1024;

class AtpValidationTest : public AtpRackTest {};

TEST_F(AtpValidationTest, UnknownJobIsDropped) {
  h_.Send(0, Gradient(77, 0, 0, 4, 0, Fill(kN, 1)).Build());
  h_.Send(kPsPort, Param(77, 0, kN).Build());
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(AtpDrop::kUnknownJob), 2u);
  // atp's own reason (registered by atp.h), shown and read by its name.
  EXPECT_EQ(*h_.sw().commands().Execute("counter_read drop atp_unknown_job"),
            "drop[atp_unknown_job]= 2 packets");
  EXPECT_EQ(*h_.sw().commands().Execute("show drops"), "  atp_unknown_job 2\n");
}

TEST_F(AtpValidationTest, WorkerIdBeyondTheBitmapIsDropped) {
  AtpPacket p = Gradient(kJob, 0, 32, 4, 0, Fill(kN, 1));
  p.f.bitmap = 1;
  h_.Send(0, p.Build());
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(AtpDrop::kWorkerIdRange), 1u);
}

// Every malformed header is dropped with its reason, and none of them touches the aggregator
// job 2 holds at the same index.
TEST_F(AtpValidationTest, MalformedHeadersAreDroppedWithReasonsAndNoEffect) {
  h_.MustCmd("table_add atp_job aggregate 2 => 1");
  const uint32_t seq2 = CollidingSeq(kJob, 0, 2, kAggs);
  h_.Send(0, Gradient(2, seq2, 0, 2, 0, Fill(kN, 5)).Build());
  const uint32_t idx = AtpAggregatorIndex(2, seq2, kAggs);
  ASSERT_EQ(idx, AtpAggregatorIndex(kJob, 0, kAggs));

  std::vector<uint8_t> truncated = Gradient(kJob, 0, 1, 4, 0, Fill(kN, 1)).Build();
  truncated.resize(truncated.size() - 4);
  h_.Send(1, truncated);  // IPv4/UDP lengths now exceed the frame: the parser refuses it
  AtpPacket short_udp = Gradient(kJob, 0, 1, 4, 0, Fill(kN - 1, 1));
  short_udp.f.num_elements = kN;  // claims 8 elements, carries 7
  h_.Send(1, short_udp.Build());
  AtpPacket bad_version = Gradient(kJob, 0, 1, 4, 0, Fill(kN, 1));
  std::vector<uint8_t> bv = bad_version.Build();
  bv[kAtpHeaderOffset] =
      static_cast<uint8_t>((2 << kAtpVersionShift) | (bv[kAtpHeaderOffset] & 0x3F));
  h_.Send(1, bv);  // UDP checksum is not verified by the switch
  h_.Send(1, Gradient(kJob, 0, 1, 4, 0, Fill(kN / 2, 1)).Build());  // 4 elements, 8 configured
  AtpPacket no_bits = Gradient(kJob, 0, 1, 4, 0, Fill(kN, 1));
  no_bits.f.bitmap = 0;
  h_.Send(1, no_bits.Build());
  h_.Send(1, Gradient(kJob, 0, 1, 33, 0, Fill(kN, 1)).Build());  // fan-in > 32
  AtpPacket too_many = Gradient(kJob, 0, 1, 2, 0, Fill(kN, 1));
  too_many.f.bitmap = 0x7;  // three workers for a fan-in of 2
  h_.Send(1, too_many.Build());
  EXPECT_TRUE(h_.Drain().empty());
  const Switch& sw = h_.sw();
  EXPECT_EQ(sw.Drops(DropReason::kIpv4BadTotalLength) + sw.Drops(DropReason::kUdpBadLength), 1u);
  EXPECT_EQ(sw.Drops(DropReason::kTruncatedAppHeader), 1u);
  EXPECT_EQ(sw.Drops(AtpDrop::kBadVersion), 1u);
  EXPECT_EQ(sw.Drops(AtpDrop::kBadElements), 1u);
  EXPECT_EQ(sw.Drops(AtpDrop::kInconsistent), 3u);
  EXPECT_EQ(Cell(h_, "atp_id", idx), AtpAggregatorId(2, seq2));
  EXPECT_EQ(Cell(h_, "atp_bitmap", idx), 0x1u);
  EXPECT_EQ(Cell(h_, "atp_count", idx), 1u);
  EXPECT_EQ(Cell(h_, "atp_value", idx, 7), 5u);
  EXPECT_EQ(Atp(h_).counters().collisions, 0u);
  // Job 2 still completes with the right sum.
  h_.Send(1, Gradient(2, seq2, 1, 2, 0, Fill(kN, 6)).Build());
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).values, Fill(kN, 11));
  ExpectConservation(h_);
}

TEST_F(AtpValidationTest, FanInZeroAtThisEdgeIsForwardedUnchanged) {
  AtpPacket p = Gradient(kJob, 0, 1, 4, 0, Fill(kN, 1), kAtpFlagEdge);  // edge 1, fan_in1 0
  h_.Send(1, p.Build());
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes, p.Build());
  EXPECT_TRUE(AggregatorEmpty(h_, AtpAggregatorIndex(kJob, 0, kAggs), kN));
}

TEST_F(AtpValidationTest, ShardKeyIsTheAggregatorIndexForAtpAndTheFlowHashOtherwise) {
  std::vector<uint8_t> atp = Gradient(kJob, 1234, 1, 4, 0, Fill(kN, 1)).Build();
  Packet* pkt = h_.pool().FromBytes(atp.data(), static_cast<uint32_t>(atp.size()));
  EXPECT_EQ(h_.sw().ShardKeyOf(*pkt, 1), AtpAggregatorIndex(kJob, 1234, kAggs));
  h_.pool().Free(pkt);
  std::vector<uint8_t> plain =
      FrameBuilder().Eth(PsMac(), WorkerMac(1)).Ipv4(1, 2).Udp(1, 2).Payload(8).Build();
  pkt = h_.pool().FromBytes(plain.data(), static_cast<uint32_t>(plain.size()));
  const uint32_t key = h_.sw().ShardKeyOf(*pkt, 1);  // parses the packet
  EXPECT_EQ(key, FlowHash(*pkt));
  EXPECT_NE(key, 0u);
  h_.pool().Free(pkt);
}

TEST_F(AtpValidationTest, RegistersAreReadAndResetByTheControlPlane) {
  h_.Send(0, Gradient(kJob, 5, 0, 4, 0, {1, 2, 3, 4, 5, 6, 7, 8}).Build());
  const std::string idx = std::to_string(AtpAggregatorIndex(kJob, 5, kAggs));
  Result<std::string> r = h_.Cmd("register_read atp_value " + idx);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r->find("=1,2,3,4,5,6,7,8"), std::string::npos) << *r;
  EXPECT_EQ(Atp(h_).AggregatorsInUse(), 1u);
  h_.MustCmd("register_reset atp_id");
  EXPECT_EQ(Atp(h_).AggregatorsInUse(), 0u);
}

TEST(AtpLoadTest, DefaultsFitTheBudgetWithTheSecondPipelineNoted) {
  SwitchHarness h(AtpConfig(kAtpDefaultElements, 16384));
  ASSERT_TRUE(h.ok()) << h.error();
  const ResourceReport& report = h.sw().resource_report();
  EXPECT_TRUE(report.fits());
  bool noted = false;
  for (const std::string& note : report.notes) {
    noted = noted || note.find("second pipeline") != std::string::npos;
  }
  EXPECT_TRUE(noted) << report.Format();
  // One array of 64 lanes, 4 per stage: ingress stages 4-11 and egress stages 0-7.
  const RegisterArray* values = h.sw().resources().FindRegister("atp_value");
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->lanes(), 64u);
  EXPECT_EQ(h.sw().resources().FindRegister("atp_value_0"), nullptr);
  for (int s = 4; s < 12; ++s) EXPECT_EQ(report.ingress[s].stateful_alus, 4u) << s;
  for (int s = 0; s < 8; ++s) EXPECT_EQ(report.egress[s].stateful_alus, 4u) << s;
  for (const StageUsage& s : report.ingress) EXPECT_LE(s.stateful_alus, 4u);
  EXPECT_EQ(report.egress[8].stateful_alus, 1u);  // atp_overflow after lanes 32..63
  EXPECT_EQ(report.egress[9].stateful_alus, 0u);
  EXPECT_NE(report.Format().find("register atp_value lanes 32-35"), std::string::npos)
      << report.Format();
}

TEST(AtpLoadTest, RefusesElementsBeyondTheParseDepth) {
  SwitchHarness fits(AtpConfig(113, 1024));
  SwitchConfig wide = AtpConfig(113, 1024);
  wide.pipeline.ingress_stages = 40;
  SwitchHarness ok(wide);
  EXPECT_TRUE(ok.ok()) << ok.error();
  SwitchHarness too_many(AtpConfig(114, 1024));
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().find("at most 113 elements"), std::string::npos) << too_many.error();
  // 113 elements need more stages than the default 12 + 12: refused by the budget.
  ASSERT_FALSE(fits.ok());
  EXPECT_NE(fits.error().find("stage"), std::string::npos) << fits.error();
}

TEST(AtpLoadTest, UnknownOptionIsRefusedAndL2l3OptionsPassThrough) {
  SwitchConfig bad = AtpConfig();
  bad.program_options.Set("aggregatorz", "8");
  SwitchHarness h(bad);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().find("aggregatorz"), std::string::npos) << h.error();
  SwitchConfig good = AtpConfig();
  good.program_options.Set("dmac_size", "64");
  good.program_options.Set("udp_port", "9100");
  SwitchHarness g(good);
  EXPECT_TRUE(g.ok()) << g.error();
}

// Several packets of one burst hit one aggregator (claims, adds, a duplicate, a completion, a
// resend, a parameter packet): the batched stages give exactly the per-packet result.
TEST(AtpBurstTest, BurstAndSinglePacketsGiveTheSameFramesRegistersAndCounters) {
  std::vector<std::vector<uint8_t>> frames;
  const uint32_t other = CollidingSeq(kJob, 0, kJob, kAggs);
  for (uint32_t round = 0; round < 3; ++round) {
    for (uint8_t w = 0; w < 4; ++w) {
      frames.push_back(Gradient(kJob, round, w, 4, 0, Fill(kN, w + 1)).Build());
      if (w == 1) frames.push_back(Gradient(kJob, round, 1, 4, 0, Fill(kN, 2)).Build());
    }
    frames.push_back(Gradient(kJob, other, 0, 4, 0, Fill(kN, 9)).Build());
    frames.push_back(Param(kJob, round, kN).Build());
    frames.push_back(Gradient(kJob, other, 1, 4, 0, Fill(kN, 9)).Build());
    frames.push_back(Gradient(kJob, other, 2, 4, 0, Fill(kN, 9), kAtpFlagResend).Build());
  }
  auto run = [&](bool burst, std::vector<SentFrame>* out, std::string* regs, std::string* stats) {
    SwitchHarness h(AtpConfig(kN, kAggs));
    ASSERT_TRUE(h.ok()) << h.error();
    SetupRack(h);
    if (burst) {
      h.SendBurst(0, frames);
    } else {
      for (const std::vector<uint8_t>& f : frames) h.Send(0, f);
    }
    *out = h.Drain();
    for (const char* reg : {"atp_id", "atp_bitmap", "atp_count", "atp_value", "atp_overflow"}) {
      for (uint32_t seq : {0u, 1u, 2u, other}) {
        *regs += *h.Cmd(std::string("register_read ") + reg + " " +
                        std::to_string(AtpAggregatorIndex(kJob, seq, kAggs)));
      }
    }
    *stats = *h.Cmd("atp_stats") + h.sw().CountersJson();
  };
  std::vector<SentFrame> a, b;
  std::string regs_a, regs_b, stats_a, stats_b;
  run(true, &a, &regs_a, &stats_a);
  run(false, &b, &regs_b, &stats_b);
  ASSERT_LE(frames.size(), kMaxBurst);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].port, b[i].port) << i;
    EXPECT_EQ(a[i].bytes, b[i].bytes) << i;
  }
  EXPECT_EQ(regs_a, regs_b);
  EXPECT_EQ(stats_a, stats_b);
  EXPECT_NE(stats_a.find("\"duplicates\": 3"), std::string::npos) << stats_a;
  EXPECT_NE(stats_a.find("\"completed\": 3"), std::string::npos) << stats_a;
}

}  // namespace
}  // namespace swemu
