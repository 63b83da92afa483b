// DLCP's control channel: repeats of a signal are told apart from new ones with a record per
// peer that stays as small as the signals out of order.
#include "hostlib/dlcp/control_channel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace swemu {
namespace {

TEST(DlcpReceivedSignalsTest, InOrderSignalsKeepOnlyAFloor) {
  DlcpReceivedSignals seen;
  for (uint32_t seq = 0; seq < 10'000; ++seq) ASSERT_TRUE(seen.Insert(seq)) << seq;
  EXPECT_EQ(seen.floor(), 10'000u);
  EXPECT_EQ(seen.out_of_order(), 0u);
  EXPECT_FALSE(seen.Insert(0));
  EXPECT_FALSE(seen.Insert(9'999));
  EXPECT_TRUE(seen.Insert(10'000));
}

TEST(DlcpReceivedSignalsTest, SignalsThatOvertookALostOneWaitAboveTheFloor) {
  DlcpReceivedSignals seen;
  ASSERT_TRUE(seen.Insert(0));
  for (uint32_t seq : {5u, 3u, 4u, 2u}) ASSERT_TRUE(seen.Insert(seq)) << seq;
  EXPECT_FALSE(seen.Insert(4));
  EXPECT_EQ(seen.floor(), 1u);
  EXPECT_EQ(seen.out_of_order(), 4u);
  ASSERT_TRUE(seen.Insert(1));  // the lost one, resent: the run 2..5 goes below the floor
  EXPECT_EQ(seen.floor(), 6u);
  EXPECT_EQ(seen.out_of_order(), 0u);
  EXPECT_FALSE(seen.Insert(3));
}

// Against the set it replaced: every number once, shuffled in blocks of 8 as losses and
// resends would reorder them, with repeats of recent ones: the same answers, and never more
// than a block's worth held above the floor.
TEST(DlcpReceivedSignalsTest, AnswersAsASetOfEverySignalWould) {
  DlcpReceivedSignals seen;
  std::set<uint32_t> all;
  std::mt19937 rng(7);
  std::size_t most_held = 0;
  for (uint32_t block = 0; block < 2'000; ++block) {
    std::vector<uint32_t> seqs(8);
    std::iota(seqs.begin(), seqs.end(), block * 8);
    std::shuffle(seqs.begin(), seqs.end(), rng);
    for (uint32_t seq : seqs) {
      ASSERT_EQ(seen.Insert(seq), all.insert(seq).second) << seq;
      const uint32_t again = seq - std::min<uint32_t>(seq, rng() % 20);
      if (rng() % 4 == 0) {
        ASSERT_EQ(seen.Insert(again), all.insert(again).second) << again;
      }
      most_held = std::max(most_held, seen.out_of_order());
    }
  }
  EXPECT_EQ(seen.floor(), 16'000u);
  EXPECT_EQ(seen.out_of_order(), 0u);
  EXPECT_LE(most_held, 7u);
}

// Keeps every frame the channel sends.
class FrameLog final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    frames.emplace_back(frame.begin(), frame.end());
    return true;
  }
  std::vector<std::vector<uint8_t>> frames;
};

constexpr uint16_t kPort = 4791;

TcpEnd End(uint8_t host) {
  return {MacAddr::FromU64(0x020000000000ull | host), MakeIpv4Addr(10, 0, 0, host), kPort};
}

// The frames a channel sent, as another channel reads them: the signals new to it.
int Deliver(FrameLog& from, DlcpControlChannel& to, TcpEnd from_end) {
  int fresh = 0;
  for (const std::vector<uint8_t>& frame : from.frames) {
    DlcpFrameView view;
    EXPECT_TRUE(ParseDlcpFrame(frame, kPort, &view));
    DlcpSignal signal;
    fresh += to.OnControl(from_end, *view.header, view.payload, &signal) ? 1 : 0;
  }
  from.frames.clear();
  return fresh;
}

TEST(DlcpControlChannelTest, NextTimerIsTheEarliestDueAsSignalsAreSentAckedAndResent) {
  FrameLog a_log, b_log;
  DlcpControlChannel a(a_log, End(1), 48), b(b_log, End(2), 48);
  constexpr TimeNs kT = DlcpControlChannel::kFirstTimeoutNs;
  EXPECT_EQ(a.NextTimer(), kNever);
  for (TimeNs at : {0, 10, 20}) a.Send(at, End(2), DlcpSignal{});
  EXPECT_EQ(a.NextTimer(), kT);
  std::vector<uint8_t> first = a_log.frames[0];
  a_log.frames.erase(a_log.frames.begin());
  EXPECT_EQ(Deliver(a_log, b, End(1)), 2);  // signals 1 and 2; signal 0 is lost
  EXPECT_EQ(Deliver(b_log, a, End(2)), 0);  // their ACKs
  EXPECT_EQ(a.NextTimer(), kT);             // signal 0 still waits
  a.OnTimer(kT);                            // resent, its wait doubled
  EXPECT_EQ(a.NextTimer(), 3 * kT);
  EXPECT_EQ(a.stats().resent, 1u);
  EXPECT_EQ(Deliver(a_log, b, End(1)), 1);
  a_log.frames.push_back(first);            // the lost copy turns up late: a repeat
  EXPECT_EQ(Deliver(a_log, b, End(1)), 0);
  EXPECT_EQ(b.stats().duplicates, 1u);
  Deliver(b_log, a, End(2));
  EXPECT_EQ(a.NextTimer(), kNever);
  EXPECT_TRUE(a.idle());
  EXPECT_EQ(a.stats().acked, 3u);
}

}  // namespace
}  // namespace swemu
