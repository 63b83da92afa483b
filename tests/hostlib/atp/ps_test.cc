// The PS of one job: aggregation, duplicates, partial overlap, overflow, parameter re-sends.
#include "hostlib/atp/ps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "tests/hostlib/atp/atp_test_util.h"

namespace swemu {
namespace {

using atp_test::AtpFrame;
using atp_test::HeaderOf;
using atp_test::Job;
using atp_test::RecordingTransport;

constexpr double kScale = kAtpDefaultScale;

class PsTest : public ::testing::Test {
 protected:
  PsTest() : job_(Job(4, 3, 16)), ps_(job_, &tx_, {64, 256}) {}

  // A gradient for seq from the workers in bitmap whose elements all hold `value` (already
  // scaled, as the switch would have summed it).
  void Gradient(uint32_t seq, uint32_t bitmap, double value, uint8_t flags = 0, bool ce = false) {
    AtpFields f;
    f.flags = flags;
    f.seq = seq;
    f.bitmap = bitmap;
    std::vector<uint8_t> frame = AtpFrame(job_, f, std::vector<double>(16, value));
    ps_.OnGradient(HeaderOf(frame), ce);
  }
  float ParamValue(std::size_t frame, int i = 0) const {
    return LoadAtpFloat(tx_.Header(frame).Elements(), i);
  }

  AtpJobConfig job_;
  RecordingTransport tx_;
  AtpPs ps_;
};

TEST_F(PsTest, OriginalsCompleteIntoOneParameterPacketToTheGroup) {
  Gradient(5, 0b001, 1 * kScale);
  Gradient(5, 0b100, 2 * kScale);
  EXPECT_TRUE(tx_.frames.empty());
  Gradient(5, 0b010, -0.5 * kScale);
  ASSERT_EQ(tx_.frames.size(), 1u);
  const AtpHeader& h = tx_.Header(0);
  EXPECT_EQ(h.Flags(), kAtpFlagParam | kAtpFlagFloat);
  EXPECT_EQ(h.Seq(), 5u);
  EXPECT_EQ(h.Bitmap(), 0b111u);
  EXPECT_EQ(h.JobId(), 4);
  EXPECT_EQ(h.worker_id, 0);
  EXPECT_EQ(ParamValue(0, 0), 2.5f);
  EXPECT_EQ(ParamValue(0, 15), 2.5f);
  const auto* eth = HeaderAt<EthernetHeader>(tx_.frames[0].data());
  EXPECT_EQ(eth->DstAddr(), MacAddr::FromU64(0x01005E010104ull));
  EXPECT_EQ(HeaderAt<Ipv4Header>(tx_.frames[0].data() + 14)->DstAddr(), job_.spec.group_ip);
  EXPECT_EQ(ps_.stats().completed, 1u);
  EXPECT_EQ(ps_.stats().originals, 3u);
  EXPECT_EQ(ps_.stats().elements_at_ps, 16u);
  EXPECT_EQ(ps_.stats().completed_by_switch, 0u);
}

TEST_F(PsTest, ASwitchCompleteAggregateCompletesAloneAndIsCounted) {
  Gradient(1, 0b111, 6 * kScale);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_EQ(ParamValue(0), 6.0f);
  EXPECT_EQ(ps_.stats().full, 1u);
  EXPECT_EQ(ps_.stats().completed_by_switch, 1u);
  EXPECT_EQ(ps_.stats().elements_by_switch, 16u);
}

TEST_F(PsTest, DuplicatesAndPartialOverlapsAreIgnored) {
  Gradient(2, 0b011, 3 * kScale);  // a partial aggregate of workers 0 and 1
  Gradient(2, 0b001, 1 * kScale);  // worker 0's retransmitted original: a duplicate
  Gradient(2, 0b011, 3 * kScale);  // the same aggregate again
  EXPECT_EQ(ps_.stats().duplicates, 2u);
  EXPECT_EQ(ps_.stats().partials, 2u);
  // A (1,2) aggregate overlaps in worker 1 only: adding it would count worker 1 twice.
  Gradient(2, 0b110, 5 * kScale);
  EXPECT_EQ(ps_.stats().partial_overlaps, 1u);
  EXPECT_TRUE(tx_.frames.empty());
  Gradient(2, 0b100, 4 * kScale);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_EQ(ParamValue(0), 7.0f);
}

// Section 5.4: "if the incoming gradient packet is completely aggregated, ATP replaces the
// value". A worker's retransmitted original reached the PS on its own, then the switch's
// complete aggregate came: it completes the seq at once (it was once ignored as an overlap,
// and the seq waited for every worker to time out).
TEST_F(PsTest, ASupersetAggregateReplacesWhatTheSeqHeld) {
  Gradient(4, 0b001, 1 * kScale);  // worker 0's original alone
  Gradient(4, 0b111, 6 * kScale);  // the switch's aggregate of all three
  EXPECT_EQ(ps_.stats().replaced, 1u);
  EXPECT_EQ(ps_.stats().partial_overlaps, 0u);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_EQ(ParamValue(0), 6.0f);  // not 7: worker 0 is counted once
  // A partial superset replaces too, and the rest is added to it.
  Gradient(5, 0b001, 1 * kScale);
  Gradient(5, 0b011, 3 * kScale);
  Gradient(5, 0b100, 4 * kScale);
  ASSERT_EQ(tx_.frames.size(), 2u);
  EXPECT_EQ(ParamValue(1), 7.0f);
}

TEST_F(PsTest, OverflowFlaggedPacketsAreIgnoredAndOriginalsComplete) {
  Gradient(3, 0b111, 12345, kAtpFlagOverflow);
  Gradient(3, 0b011, 12345, kAtpFlagOverflow);
  EXPECT_EQ(ps_.stats().overflow_ignored, 2u);
  EXPECT_TRUE(tx_.frames.empty());
  Gradient(3, 0b001, 2e9);
  Gradient(3, 0b010, 2e9);  // int32 would wrap; the PS adds in 64 bits
  Gradient(3, 0b100, 2e9);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_FLOAT_EQ(ParamValue(0), static_cast<float>(6e9 / kScale));
  // The parameter packet says its sum was redone after a switch overflowed; another seq's not.
  EXPECT_EQ(tx_.Header(0).Flags(), kAtpFlagParam | kAtpFlagFloat | kAtpFlagOverflow);
  Gradient(4, 0b111, 3 * kScale);
  ASSERT_EQ(tx_.frames.size(), 2u);
  EXPECT_EQ(tx_.Header(1).Flags(), kAtpFlagParam | kAtpFlagFloat);
}

TEST_F(PsTest, FloatPacketsAreAddedInDoubleWithTheIntegers) {
  Gradient(4, 0b001, 1e6, kAtpFlagFloat);  // the overflow path: raw floats
  Gradient(4, 0b110, 3 * kScale);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_EQ(ParamValue(0), 1e6f + 3.0f);
  EXPECT_EQ(ps_.stats().float_packets, 1u);
}

TEST_F(PsTest, EcnOfAnyContributionIsEchoed) {
  Gradient(6, 0b001, 0);
  Gradient(6, 0b010, 0, 0, /*ce=*/true);
  Gradient(6, 0b100, 0);
  Gradient(7, 0b001, 0, kAtpFlagEcn);
  Gradient(7, 0b110, 0);
  Gradient(8, 0b111, 0);
  ASSERT_EQ(tx_.frames.size(), 3u);
  EXPECT_TRUE(tx_.Header(0).Has(kAtpFlagEcn));
  EXPECT_TRUE(tx_.Header(1).Has(kAtpFlagEcn));
  EXPECT_FALSE(tx_.Header(2).Has(kAtpFlagEcn));
}

TEST_F(PsTest, AGradientForACompletedSeqResendsItsParameterPacket) {
  Gradient(9, 0b111, 1 * kScale);
  ASSERT_EQ(tx_.frames.size(), 1u);
  Gradient(9, 0b010, 1 * kScale, kAtpFlagResend);
  ASSERT_EQ(tx_.frames.size(), 2u);
  // The same parameter packet, addressed to worker 1 only (the one that asked), not the group.
  const std::vector<uint8_t>& group = tx_.frames[0];
  const std::vector<uint8_t>& unicast = tx_.frames[1];
  ASSERT_EQ(unicast.size(), group.size());
  EXPECT_TRUE(std::equal(unicast.begin() + kAtpHeaderOffset, unicast.end(),
                         group.begin() + kAtpHeaderOffset));
  EXPECT_TRUE(
      std::equal(unicast.begin(), unicast.begin() + 6, job_.spec.workers[1].mac.bytes.begin()));
  EXPECT_EQ(LoadBe32(unicast.data() + 14 + 16), job_.spec.workers[1].ip);
  EXPECT_EQ(ps_.stats().param_resends, 1u);
  EXPECT_EQ(ps_.stats().params_sent, 2u);
  EXPECT_EQ(ps_.stats().completed, 1u);
  // The history holds the last 256 seqs' parameter packets.
  Gradient(9 + 256, 0b111, 0);  // takes seq 9's history entry (256 entries)
  Gradient(9, 0b010, 1 * kScale, kAtpFlagResend);
  EXPECT_EQ(ps_.stats().history_misses, 1u);
  EXPECT_EQ(tx_.frames.size(), 3u);
}

TEST_F(PsTest, BadPacketsAndBusySlotsAreCountedNotAggregated) {
  Gradient(10, 0b1000, 1);  // worker 3 is not in a 3-worker job
  Gradient(10, 0, 1);
  EXPECT_EQ(ps_.stats().bad_packets, 2u);
  Gradient(11, 0b001, 1);
  Gradient(11 + 64, 0b001, 1);  // same slot (64 slots), still in progress
  EXPECT_EQ(ps_.stats().slot_busy, 1u);
  EXPECT_TRUE(tx_.frames.empty());
}

}  // namespace
}  // namespace swemu
