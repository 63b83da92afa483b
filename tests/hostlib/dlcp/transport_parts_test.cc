// DLCP transport's parts: the receive buffer (placement by offset in any order, duplicates,
// out-of-bounds and misaligned packets refused with nothing written, the bound, the missing
// ranges), the sender's segments (whole elements, layer tags, importance against the sampled
// median), and the rate control's states as Figure 7 (corrected) says.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "hostlib/dlcp/rate_control.h"
#include "hostlib/dlcp/receive_buffer.h"
#include "hostlib/dlcp/segments.h"
#include "pipeline/wire/dlcp.h"

namespace swemu {
namespace {

std::vector<uint8_t> Bytes(std::size_t n, uint8_t fill) { return std::vector<uint8_t>(n, fill); }

TEST(DlcpReceiveBuffer, PlacesByOffsetInAnyOrderAndMeetsTheBound) {
  // 10 partitions of 100 bytes, the last one 40: 940 bytes; bound 10% -> 846 bytes needed.
  Result<DlcpReceiveBuffer> b = DlcpReceiveBuffer::Make(940, 100, 0.1);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->required_bytes(), 846u);
  std::vector<uint64_t> order = {9, 3, 0, 7, 1, 5, 8, 2};
  for (uint64_t k : order) {
    EXPECT_EQ(b->Place(k * 100, Bytes(k == 9 ? 40 : 100, static_cast<uint8_t>(k + 1))),
              DlcpPlace::kPlaced);
  }
  EXPECT_EQ(b->received_bytes(), 740u);
  EXPECT_FALSE(b->BoundMet());
  EXPECT_EQ(b->Missing(), (std::vector<std::pair<uint64_t, uint64_t>>{{400, 500}, {600, 700}}));
  EXPECT_EQ(b->Place(300, Bytes(100, 9)), DlcpPlace::kDuplicate);  // counts once, unchanged
  EXPECT_EQ(b->data()[300], 4);
  EXPECT_EQ(b->Place(400, Bytes(100, 5)), DlcpPlace::kPlaced);
  EXPECT_FALSE(b->BoundMet());  // 840 of the 846 bytes needed
  EXPECT_EQ(b->Place(600, Bytes(100, 7)), DlcpPlace::kPlaced);
  EXPECT_TRUE(b->BoundMet());
  EXPECT_TRUE(b->Missing().empty());
  EXPECT_EQ(b->data()[939], 10);
}

TEST(DlcpReceiveBuffer, WithoutDataKeepsTheBitmapAndCountsTheSame) {
  Result<DlcpReceiveBuffer> b = DlcpReceiveBuffer::Make(940, 100, 0.1, 4, /*keep_data=*/false);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->size(), 940u);
  EXPECT_TRUE(b->data().empty());
  for (uint64_t k : {9, 3, 0, 7, 1, 5, 8, 2}) {
    EXPECT_EQ(b->Place(k * 100, Bytes(k == 9 ? 40 : 100, 1)), DlcpPlace::kPlaced);
  }
  EXPECT_EQ(b->Place(300, Bytes(100, 9)), DlcpPlace::kDuplicate);
  EXPECT_EQ(b->Place(900, Bytes(100, 1)), DlcpPlace::kOutOfBounds);
  EXPECT_EQ(b->Place(104, Bytes(100, 1)), DlcpPlace::kMisaligned);
  EXPECT_EQ(b->received_bytes(), 740u);
  EXPECT_EQ(b->Missing(), (std::vector<std::pair<uint64_t, uint64_t>>{{400, 500}, {600, 700}}));
  EXPECT_EQ(b->Place(400, Bytes(100, 5)), DlcpPlace::kPlaced);
  EXPECT_EQ(b->Place(600, Bytes(100, 7)), DlcpPlace::kPlaced);
  EXPECT_TRUE(b->BoundMet());
  EXPECT_TRUE(b->data().empty());
}

TEST(DlcpReceiveBuffer, RefusesWhatIsNotExactlyAPartitionAndWritesNothing) {
  Result<DlcpReceiveBuffer> b = DlcpReceiveBuffer::Make(940, 100, 0.0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Place(940, Bytes(4, 1)), DlcpPlace::kOutOfBounds);
  EXPECT_EQ(b->Place(900, Bytes(100, 1)), DlcpPlace::kOutOfBounds);  // past the end
  EXPECT_EQ(b->Place(UINT64_MAX - 10, Bytes(100, 1)), DlcpPlace::kOutOfBounds);
  EXPECT_EQ(b->Place(104, Bytes(100, 1)), DlcpPlace::kMisaligned);
  EXPECT_EQ(b->Place(100, Bytes(96, 1)), DlcpPlace::kMisaligned);
  EXPECT_EQ(b->Place(900, Bytes(36, 1)), DlcpPlace::kMisaligned);  // the last one is 40
  EXPECT_EQ(b->received_bytes(), 0u);
  EXPECT_TRUE(std::all_of(b->data().begin(), b->data().end(), [](uint8_t x) { return x == 0; }));
  EXPECT_FALSE(DlcpReceiveBuffer::Make(940, 102, 0.1).ok());  // not whole elements
  EXPECT_FALSE(DlcpReceiveBuffer::Make(942, 100, 0.1).ok());
  EXPECT_FALSE(DlcpReceiveBuffer::Make(940, 100, 1.0).ok());
}

TEST(DlcpSegments, WholeElementsLayerTagsAndTheMedianSplit) {
  std::vector<float> g(1000);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = (i % 2 ? -1.f : 1.f) * static_cast<float>(i);
  Result<std::vector<DlcpSegment>> segs = SegmentTensor(g, 400, LayerPriority(30, 54));
  ASSERT_TRUE(segs.ok()) << segs.message();
  ASSERT_EQ(segs->size(), 10u);
  for (std::size_t k = 0; k < segs->size(); ++k) {
    EXPECT_EQ((*segs)[k].offset, k * 400);
    EXPECT_EQ((*segs)[k].length, 400u);
    EXPECT_EQ((*segs)[k].tag, 3);  // floor(30 * 7 / 54)
  }
  // |g| grows with the index: the segments past the median are the important ones.
  int important = 0;
  for (const DlcpSegment& s : *segs) important += s.important;
  EXPECT_GE(important, 4);
  EXPECT_LE(important, 6);
  EXPECT_FALSE((*segs)[0].important);
  EXPECT_TRUE((*segs)[9].important);
  // A tensor that does not fill its last partition; a bad partition size.
  EXPECT_EQ(SegmentTensor(std::vector<float>(7, 1.f), 8, LayerPriority(0, 1))->back().length, 4u);
  EXPECT_FALSE(SegmentTensor(g, 402, LayerPriority(0, 1)).ok());
  EXPECT_EQ(DlcpTagOfLayer(53, 54), 6u);
  EXPECT_EQ(DlcpTagOfLayer(0, 54), 0u);
}

TEST(DlcpSegments, SmallTensorsAreSampledToo) {
  std::vector<float> g(64);
  std::iota(g.begin(), g.end(), 1.f);  // 0.1% of 64 is no element: the minimum sample applies
  const float median = EstimateMedianMagnitude(g);
  EXPECT_GE(median, 30.f);
  EXPECT_LE(median, 34.f);
  EXPECT_EQ(EstimateMedianMagnitude({}), 0.f);
}

TEST(DlcpRateControl, FollowsFigureSeven) {
  DlcpRateOptions o;
  o.link_bps = 10'000'000'000;
  DlcpRateControl rc(o);
  EXPECT_EQ(rc.state(), DlcpRateControl::State::kLineRateStart);
  rc.OnReport(10e9, 6e9);  // 10 <= 2 * 6: stays at line rate
  EXPECT_EQ(rc.rate_bps(), 10e9);
  rc.OnReport(10e9, 4e9);  // 10 > 8: congestion avoidance, halved
  EXPECT_EQ(rc.state(), DlcpRateControl::State::kCongestionAvoidance);
  EXPECT_EQ(rc.rate_bps(), 5e9);
  rc.OnReport(5e9, 4e9);  // not congested: + 5% of the link
  EXPECT_EQ(rc.rate_bps(), 5.5e9);
  rc.OnReport(5.5e9, 1e9);  // congested: halved
  EXPECT_EQ(rc.rate_bps(), 2.75e9);
  for (int i = 0; i < 100; ++i) rc.OnReport(rc.rate_bps(), 0);  // nothing received: the floor
  EXPECT_EQ(rc.rate_bps(), 0.01 * 10e9);
  for (int i = 0; i < 100; ++i) rc.OnReport(rc.rate_bps(), rc.rate_bps());  // the cap
  EXPECT_EQ(rc.rate_bps(), 10e9);
  rc.OnRetransmitRequest();
  EXPECT_EQ(rc.state(), DlcpRateControl::State::kLineRateStart);
  EXPECT_EQ(rc.rate_bps(), 10e9);
}

TEST(DlcpHeader, FieldsRoundTrip) {
  DlcpHeader h;
  h.Set(DlcpType::kData, kDlcpFlagPull, 1400, 0xDEADBEEF, 7, 0x12345678);
  EXPECT_EQ(h.Version(), kDlcpVersion);
  EXPECT_EQ(h.Type(), DlcpType::kData);
  EXPECT_EQ(h.flags, kDlcpFlagPull);
  EXPECT_EQ(h.Length(), 1400);
  EXPECT_EQ(h.Tensor(), 0xDEADBEEFu);
  EXPECT_EQ(h.Seq(), 7u);
  EXPECT_EQ(h.Offset(), 0x12345678u);
  const auto* raw = reinterpret_cast<const uint8_t*>(&h);
  EXPECT_EQ(raw[0], 0x11);  // version 1, type 1
  EXPECT_EQ(raw[4], 0xDE);  // big-endian
}

}  // namespace
}  // namespace swemu
