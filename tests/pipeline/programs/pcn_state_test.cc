// pcn's cell rules (pipeline/programs/pcn_state.h) one cell at a time: packing, the clock's
// wrap, announcements, arrivals and timeouts.
#include "pipeline/programs/pcn_state.h"

#include <gtest/gtest.h>

#include <array>

namespace swemu::pcn {
namespace {

TEST(PcnState, CellsRoundTrip) {
  const Lane lane{65535, 75, kMsMask};
  EXPECT_EQ(Lane::Unpack(lane.Pack()), lane);
  EXPECT_LT(lane.Pack(), uint64_t{1} << 47);  // pcn_port is declared 47 bits wide
  const Pending p{true, 0x0A000001, 255, 12345};
  const Pending q = Pending::Unpack(p.Pack());
  EXPECT_TRUE(q.Holds(0x0A000001, 255));
  EXPECT_EQ(q.deadline, 12345u);
  EXPECT_EQ(Pending{}.Pack(), 0u);
  EXPECT_FALSE(Pending::Unpack(0).valid);
}

TEST(PcnState, DeadlinesCompareAcrossTheClocksWrap) {
  const uint32_t before_wrap = kMsMask - 10;
  const uint32_t deadline = (before_wrap + 100) & kMsMask;  // wrapped: 89
  EXPECT_FALSE(Reached(before_wrap, deadline));
  EXPECT_FALSE(Reached((before_wrap + 99) & kMsMask, deadline));
  EXPECT_TRUE(Reached((before_wrap + 100) & kMsMask, deadline));
  EXPECT_TRUE(Reached((before_wrap + 100 + kMaxTimeoutMs) & kMsMask, deadline));
  EXPECT_EQ(MsOf(uint64_t{5'000'000}), 5u);
}

TEST(PcnState, StartThenDataIsOneAnnouncementAndOneArrival) {
  PendingResult r = OnStart(Pending{}, 7, 1, 100, 1000);
  EXPECT_EQ(r.op, LaneOp::kAnnounce);
  EXPECT_EQ(r.event, PendingEvent::kNew);
  PendingResult again = OnStart(r.cell, 7, 1, 150, 1000);
  EXPECT_EQ(again.op, LaneOp::kRefresh);
  EXPECT_EQ(again.cell.deadline, 1150u);
  EXPECT_EQ(OnData(again.cell, 8, 1, 160).op, LaneOp::kNone);  // another worker
  EXPECT_EQ(OnData(again.cell, 7, 2, 160).op, LaneOp::kNone);  // another job
  PendingResult arrived = OnData(again.cell, 7, 1, 160);
  EXPECT_EQ(arrived.op, LaneOp::kArrive);
  EXPECT_FALSE(arrived.cell.valid);
  EXPECT_EQ(OnData(again.cell, 7, 1, 1150).event, PendingEvent::kExpired);
  EXPECT_EQ(OnStart(r.cell, 9, 1, 200, 1000).event, PendingEvent::kEvicted);
  EXPECT_EQ(OnStart(r.cell, 9, 1, 1100, 1000).event, PendingEvent::kNew);  // r expired
}

TEST(PcnState, LaneKeepsTheLowestThresholdAndCountsDown) {
  bool timed_out = false;
  Lane lane = ApplyLane(Lane{}, LaneOp::kAnnounce, 20, 0, 100, &timed_out);
  lane = ApplyLane(lane, LaneOp::kAnnounce, 10, 10, 100, &timed_out);
  lane = ApplyLane(lane, LaneOp::kAnnounce, 15, 20, 100, &timed_out);
  EXPECT_EQ(lane.count, 3u);
  EXPECT_EQ(lane.threshold, 10u);
  EXPECT_EQ(lane.deadline, 120u);
  lane = ApplyLane(lane, LaneOp::kArrive, 0, 30, 100, &timed_out);
  lane = ApplyLane(lane, LaneOp::kArrive, 0, 30, 100, &timed_out);
  EXPECT_EQ(lane.count, 1u);
  lane = ApplyLane(lane, LaneOp::kArrive, 0, 30, 100, &timed_out);
  EXPECT_EQ(lane, Lane{});
  EXPECT_FALSE(timed_out);
  lane = ApplyLane(lane, LaneOp::kArrive, 0, 30, 100, &timed_out);  // a stray arrival
  EXPECT_EQ(lane, Lane{});
}

TEST(PcnState, LaneTimesOutAndActiveThresholdIgnoresIt) {
  bool timed_out = false;
  const Lane lane = ApplyLane(Lane{}, LaneOp::kAnnounce, 10, 0, 100, &timed_out);
  const std::array<uint64_t, 2> lanes{lane.Pack(), Lane{}.Pack()};
  EXPECT_EQ(ActiveThreshold(lanes, 40, 99), 10u);
  EXPECT_EQ(ActiveThreshold(lanes, 40, 100), 40u);
  const Lane later = ApplyLane(lane, LaneOp::kNone, 0, 100, 100, &timed_out);
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(later, Lane{});
}

}  // namespace
}  // namespace swemu::pcn
