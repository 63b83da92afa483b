// The atp program's aggregator, case by case (ATP paper Figure 4; docs/wire.md "ATP"): one
// rack, workers 0-3 on ports 0-3, the PS on port 4, 8 elements per packet.
#include <gtest/gtest.h>

#include <set>

#include "tests/pipeline/programs/atp_test_util.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT(build/namespaces)

constexpr uint16_t kN = 8;
constexpr uint32_t kAggs = 1024;

class AtpCaseTest : public AtpRackTest {};

TEST_F(AtpCaseTest, FirstGradientClaimsTheEmptyAggregatorAndIsConsumed) {
  Send(Gradient(kJob, 7, 2, 4, 0, {1, 2, 3, 4, 5, 6, 7, -8}), 2);
  EXPECT_TRUE(h_.Drain().empty());
  const uint32_t idx = Index(7);
  EXPECT_EQ(Cell(h_, "atp_id", idx), AtpAggregatorId(kJob, 7));
  EXPECT_EQ(Cell(h_, "atp_bitmap", idx), 0x4u);
  EXPECT_EQ(Cell(h_, "atp_count", idx), 1u);
  EXPECT_EQ(Cell(h_, "atp_value", idx, 2), 3u);
  EXPECT_EQ(AsInt32(Cell(h_, "atp_value", idx, 7)), -8);
  EXPECT_EQ(Atp(h_).counters().claimed, 1u);
  EXPECT_EQ(h_.sw().counters().program.consumed, 1u);
  ExpectConservation(h_);
}

TEST_F(AtpCaseTest, AggregatesUntilFanInThenSendsSumAndBitmapUpstreamWithEdgeFlipped) {
  for (uint8_t w = 0; w < 3; ++w) Send(Gradient(kJob, 1, w, 4, 0, Fill(kN, w + 1)), w);
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Cell(h_, "atp_count", Index(1)), 3u);
  Send(Gradient(kJob, 1, 3, 4, 0, Fill(kN, 100)), 3);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.port, kPsPort);
  EXPECT_EQ(r.values, Fill(kN, 1 + 2 + 3 + 100));
  EXPECT_EQ(r.f.bitmap, 0xFu);
  EXPECT_TRUE(r.f.Has(kAtpFlagEdge));
  EXPECT_FALSE(r.f.Has(kAtpFlagResend));
  EXPECT_EQ(r.f.worker_id, 3);  // the rest of the header is the completing packet's
  EXPECT_EQ(Atp(h_).counters().aggregated, 3u);
  EXPECT_EQ(Atp(h_).counters().completed, 1u);
  // Not freed by completion: the parameter packet frees it.
  EXPECT_EQ(Cell(h_, "atp_id", Index(1)), AtpAggregatorId(kJob, 1));
  ExpectConservation(h_);
}

TEST_F(AtpCaseTest, CollisionIsForwardedUpstreamAsResendWithEdgeFlipped) {
  const uint32_t other = CollidingSeq(kJob, 5, kJob, kAggs);
  Send(Gradient(kJob, 5, 0, 4, 0, Fill(kN, 1)));
  Send(Gradient(kJob, other, 1, 4, 0, Fill(kN, 9)), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.port, kPsPort);
  EXPECT_EQ(r.f.seq, other);
  EXPECT_TRUE(r.f.Has(kAtpFlagResend));
  EXPECT_TRUE(r.f.Has(kAtpFlagEdge));
  EXPECT_EQ(r.f.bitmap, 0x2u);
  EXPECT_EQ(r.values, Fill(kN, 9));
  EXPECT_EQ(Cell(h_, "atp_id", Index(5)), AtpAggregatorId(kJob, 5));  // holder unchanged
  EXPECT_EQ(Cell(h_, "atp_bitmap", Index(5)), 0x1u);
  EXPECT_EQ(Atp(h_).counters().collisions, 1u);
}

TEST_F(AtpCaseTest, FanInIsTheOneOfThePacketsEdge) {
  // Edge 1 (second level): fan_in1 = 8 from two rack aggregates of 4 workers each.
  AtpPacket a = Gradient(kJob, 3, 0, 4, 8, Fill(kN, 10), kAtpFlagEdge);
  a.f.bitmap = 0x0F;
  AtpPacket b = Gradient(kJob, 3, 4, 4, 8, Fill(kN, 20), kAtpFlagEdge);
  b.f.bitmap = 0xF0;
  Send(a);
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Cell(h_, "atp_count", Index(3)), 4u);
  Send(b);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.f.bitmap, 0xFFu);
  EXPECT_EQ(r.values, Fill(kN, 30));
  EXPECT_FALSE(r.f.Has(kAtpFlagEdge));  // flipped from 1
  // Edge 0 with fan_in0 = 2 completes at two workers.
  Send(Gradient(kJob, 4, 0, 2, 0, Fill(kN, 1)));
  Send(Gradient(kJob, 4, 1, 2, 0, Fill(kN, 2)), 1);
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).values, Fill(kN, 3));
}

TEST_F(AtpCaseTest, CompleteAggregateAtClaimIsSentAtOnce) {
  AtpPacket rack = Gradient(kJob, 2, 0, 2, 2, Fill(kN, 6), kAtpFlagEdge);
  rack.f.bitmap = 0x3;
  Send(rack);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(kN, 6));
  EXPECT_EQ(r.f.bitmap, 0x3u);
  EXPECT_FALSE(r.f.Has(kAtpFlagEdge));
  EXPECT_EQ(Atp(h_).counters().claimed, 1u);
  EXPECT_EQ(Atp(h_).counters().completed, 1u);
}

TEST_F(AtpCaseTest, DuplicateIsDroppedWithoutChangingTheAggregator) {
  Send(Gradient(kJob, 1, 0, 4, 0, Fill(kN, 5)));
  Send(Gradient(kJob, 1, 0, 4, 0, Fill(kN, 5)));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(AtpDrop::kDuplicate), 1u);
  EXPECT_EQ(Atp(h_).counters().duplicates, 1u);
  EXPECT_EQ(Cell(h_, "atp_count", Index(1)), 1u);
  EXPECT_EQ(Cell(h_, "atp_value", Index(1)), 5u);
  ExpectConservation(h_);
}

TEST_F(AtpCaseTest, ParameterPacketDeallocatesAndIsMulticastToTheGroup) {
  for (uint8_t w = 0; w < 4; ++w) Send(Gradient(kJob, 9, w, 4, 0, Fill(kN, 1)), w);
  ASSERT_EQ(h_.Drain().size(), 1u);
  Send(Param(kJob, 9, kN), kPsPort);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 4u);
  std::set<PortId> ports;
  for (const SentFrame& f : out) {
    ports.insert(f.port);
    EXPECT_TRUE(Decode(f).f.Has(kAtpFlagParam));
  }
  EXPECT_EQ(ports, (std::set<PortId>{0, 1, 2, 3}));
  EXPECT_TRUE(AggregatorEmpty(h_, Index(9), kN));
  EXPECT_EQ(Atp(h_).counters().param_dealloc, 1u);
  ExpectConservation(h_);
}

TEST_F(AtpCaseTest, ParameterPacketLeavesAnotherSeqsAggregatorAlone) {
  const uint32_t other = CollidingSeq(kJob, 5, kJob, kAggs);
  Send(Gradient(kJob, 5, 0, 4, 0, Fill(kN, 1)));
  Send(Param(kJob, other, kN), kPsPort);
  EXPECT_EQ(h_.Drain().size(), 4u);
  EXPECT_EQ(Cell(h_, "atp_id", Index(5)), AtpAggregatorId(kJob, 5));
  EXPECT_EQ(Atp(h_).counters().param_dealloc, 0u);
}

TEST_F(AtpCaseTest, ResendWithItsBitUnsetTakesThePartialResultAndDeallocates) {
  Send(Gradient(kJob, 6, 0, 4, 0, Fill(kN, 1)));
  Send(Gradient(kJob, 6, 1, 4, 0, Fill(kN, 2)), 1);
  Send(Gradient(kJob, 6, 2, 4, 0, Fill(kN, 4), kAtpFlagResend), 2);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.port, kPsPort);
  EXPECT_EQ(r.values, Fill(kN, 7));
  EXPECT_EQ(r.f.bitmap, 0x7u);
  EXPECT_TRUE(r.f.Has(kAtpFlagResend));
  EXPECT_TRUE(r.f.Has(kAtpFlagEdge));
  EXPECT_TRUE(AggregatorEmpty(h_, Index(6), kN));
  EXPECT_EQ(Atp(h_).counters().resend_dealloc, 1u);
}

TEST_F(AtpCaseTest, ResendWithItsBitSetIsForwardedAsIsAndDeallocates) {
  Send(Gradient(kJob, 6, 0, 4, 0, Fill(kN, 1)));
  Send(Gradient(kJob, 6, 1, 4, 0, Fill(kN, 2)), 1);
  Send(Gradient(kJob, 6, 0, 4, 0, Fill(kN, 1), kAtpFlagResend));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(kN, 1));
  EXPECT_EQ(r.f.bitmap, 0x1u);
  EXPECT_FALSE(r.f.Has(kAtpFlagEdge));  // Fig. 4 (8): as-is, the edge bit untouched
  EXPECT_TRUE(r.f.Has(kAtpFlagResend));
  EXPECT_TRUE(AggregatorEmpty(h_, Index(6), kN));
}

TEST_F(AtpCaseTest, SecondLevelResendIsForwardedDirectlyAndDeallocates) {
  AtpPacket rack = Gradient(kJob, 8, 0, 2, 4, Fill(kN, 3), kAtpFlagEdge);
  rack.f.bitmap = 0x3;
  Send(rack);
  EXPECT_TRUE(h_.Drain().empty());
  AtpPacket again = rack;
  again.f.flags |= kAtpFlagResend;
  again.values = Fill(kN, 3);
  Send(again);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(kN, 3));
  EXPECT_EQ(r.f.bitmap, 0x3u);
  EXPECT_TRUE(r.f.Has(kAtpFlagEdge));  // as-is
  EXPECT_TRUE(AggregatorEmpty(h_, Index(8), kN));
  EXPECT_EQ(Atp(h_).counters().resend_dealloc, 1u);
}

// A first-level retransmission that finds no aggregator goes on as a collision does: marked
// past this level (edge 1), so the PS's switch forwards it by rule 7 instead of applying the
// first-level rules 8/9 to its own aggregator.
TEST_F(AtpCaseTest, ResendToAnEmptyAggregatorIsForwardedPastThisLevelWithoutClaiming) {
  const AtpPacket p = Gradient(kJob, 11, 1, 4, 0, Fill(kN, 2), kAtpFlagResend);
  Send(p, 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpPacket expected = p;
  expected.f.flags |= kAtpFlagEdge;
  EXPECT_EQ(out[0].bytes, expected.Build());
  EXPECT_TRUE(AggregatorEmpty(h_, Index(11), kN));
  EXPECT_EQ(Atp(h_).counters().resend_forwarded, 1u);
}

// The overflow flag a result brings from the level below is remembered by the aggregator it
// claims or joins: the result that leaves carries it, whichever packet completes.
TEST_F(AtpCaseTest, IncomingOverflowFlagIsStickyInTheAggregator) {
  for (const bool flagged_first : {true, false}) {
    const uint32_t seq = flagged_first ? 20 : 21;
    AtpPacket a = Gradient(kJob, seq, 0, 2, 0, Fill(kN, 1));
    AtpPacket b = Gradient(kJob, seq, 1, 2, 0, Fill(kN, 2));
    (flagged_first ? a : b).f.flags |= kAtpFlagOverflow;
    Send(a);
    Send(b, 1);
    std::vector<SentFrame> out = h_.Drain();
    ASSERT_EQ(out.size(), 1u) << flagged_first;
    AtpOut r = Decode(out[0]);
    EXPECT_TRUE(r.f.Has(kAtpFlagOverflow)) << flagged_first;
    EXPECT_EQ(r.f.bitmap, 0x3u);
    Send(Param(kJob, seq, kN, 0x3), kPsPort);
    h_.Drain();
    EXPECT_TRUE(AggregatorEmpty(h_, Index(seq), kN)) << flagged_first;
  }
  // Freed with the aggregator: the next seq on the same cell starts clean.
  Send(Gradient(kJob, 20, 0, 2, 0, Fill(kN, 1)));
  Send(Gradient(kJob, 20, 1, 2, 0, Fill(kN, 1)), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(Decode(out[0]).f.Has(kAtpFlagOverflow));
}

TEST_F(AtpCaseTest, OverflowIsFlaggedOnTheResultAndClearedWithTheAggregator) {
  std::vector<int32_t> big = Fill(kN, 1);
  big[5] = 2'000'000'000;
  Send(Gradient(kJob, 1, 0, 2, 0, big));
  Send(Gradient(kJob, 1, 1, 2, 0, big), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_TRUE(r.f.Has(kAtpFlagOverflow));
  EXPECT_EQ(r.values[0], 2);
  EXPECT_EQ(Atp(h_).counters().overflow, 1u);
  EXPECT_EQ(Cell(h_, "atp_overflow", Index(1)), 1u);
  Send(Param(kJob, 1, kN, 0x3), kPsPort);
  h_.Drain();
  EXPECT_TRUE(AggregatorEmpty(h_, Index(1), kN));
  // Negative overflow too, and a fresh aggregator that does not overflow is not flagged.
  Send(Gradient(kJob, 2, 0, 2, 0, Fill(kN, -2'000'000'000)));
  Send(Gradient(kJob, 2, 1, 2, 0, Fill(kN, -2'000'000'000)), 1);
  Send(Gradient(kJob, 3, 0, 2, 0, Fill(kN, 1'000'000'000)));
  Send(Gradient(kJob, 3, 1, 2, 0, Fill(kN, 1'000'000'000)), 1);
  out = h_.Drain();
  ASSERT_EQ(out.size(), 2u);
  for (const SentFrame& f : out) {
    AtpOut o = Decode(f);
    EXPECT_EQ(o.f.Has(kAtpFlagOverflow), o.f.seq == 2) << o.f.seq;
  }
}

TEST_F(AtpCaseTest, EcnSeenByTheAggregatorIsCarriedInTheResult) {
  AtpPacket a = Gradient(kJob, 1, 0, 2, 0, Fill(kN, 1));
  a.tos = 0x3;  // CE
  Send(a);
  Send(Gradient(kJob, 1, 1, 2, 0, Fill(kN, 1)), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(Decode(out[0]).f.Has(kAtpFlagEcn));
  Send(Gradient(kJob, 2, 0, 2, 0, Fill(kN, 1)));
  Send(Gradient(kJob, 2, 1, 2, 0, Fill(kN, 1)), 1);
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(Decode(out[0]).f.Has(kAtpFlagEcn));
}

}  // namespace
}  // namespace swemu
