// DlcpSenderAgenda: which senders are due and in which order Pump visits them (cyclic key order
// from the key after the last sender), the group waiting for the NIC alone, and the group's
// members whose report falls due before the NIC is free again.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "hostlib/dlcp/sender_agenda.h"

namespace swemu {
namespace {

TEST(DlcpSenderAgendaTest, PositionsGoRoundFromTheKeyAfterTheLast) {
  EXPECT_EQ(DlcpSenderAgenda::Position(6, 5), 0u);
  EXPECT_EQ(DlcpSenderAgenda::Position(9, 5), 3u);
  EXPECT_EQ(DlcpSenderAgenda::Position(5, 5), ~uint64_t{0});  // the last sender comes last
  EXPECT_LT(DlcpSenderAgenda::Position(100, 5), DlcpSenderAgenda::Position(1, 5));
  EXPECT_EQ(DlcpSenderAgenda::Position(0, ~uint64_t{0}), 0u);  // no last sender: key order
}

TEST(DlcpSenderAgendaTest, DueGivesThoseDueInCyclicOrder) {
  DlcpSenderAgenda agenda;
  agenda.SetOwn(3, 100);
  agenda.SetOwn(7, 50);
  agenda.SetOwn(10, 200);
  agenda.SetOwn(12, 90);
  EXPECT_EQ(agenda.Earliest(kNever), 50);
  EXPECT_EQ(agenda.Due(100, 7), (std::vector<uint64_t>{12, 3, 7}));
  EXPECT_EQ(agenda.size(), 4u);  // until placed again
  for (uint64_t key : {3u, 7u, 12u}) agenda.Erase(key);
  EXPECT_EQ(agenda.Earliest(kNever), 200);
  EXPECT_TRUE(agenda.Due(199, 7).empty());
}

TEST(DlcpSenderAgendaTest, PlacingAgainReplacesTheEntry) {
  DlcpSenderAgenda agenda;
  agenda.SetOwn(4, 10);
  agenda.SetNicBound(4, 500);
  EXPECT_EQ(agenda.size(), 1u);
  EXPECT_EQ(agenda.Earliest(80), 80);  // the group wakes with the NIC
  EXPECT_TRUE(agenda.Due(100, 0).empty());  // its report is not due
  agenda.SetOwn(4, 300);
  EXPECT_EQ(agenda.Earliest(80), 300);
  EXPECT_FALSE(agenda.FirstNicBound(0, 0).has_value());
  agenda.Erase(4);
  EXPECT_EQ(agenda.Earliest(80), kNever);
}

TEST(DlcpSenderAgendaTest, TheNicGoesToTheFirstWaitingMemberInTheRangeRoundTheKeys) {
  DlcpSenderAgenda agenda;
  for (uint64_t key : {2u, 5u, 9u}) agenda.SetNicBound(key, 1'000);
  // After key 5: 9 first, then round to 2, and 5 itself last.
  EXPECT_EQ(agenda.FirstNicBound(5, 0), 9u);
  EXPECT_EQ(agenda.FirstNicBound(5, DlcpSenderAgenda::Position(9, 5) + 1), 2u);
  const uint64_t after2 = DlcpSenderAgenda::Position(2, 5) + 1;
  // A range that ends before 5's position (the last) finds nothing.
  EXPECT_FALSE(agenda.FirstNicBound(5, after2, DlcpSenderAgenda::Position(5, 5)).has_value());
  EXPECT_EQ(agenda.FirstNicBound(5, after2), 5u);
  agenda.Erase(9);
  EXPECT_EQ(agenda.FirstNicBound(5, 0), 2u);
}

TEST(DlcpSenderAgendaTest, ARangeStartingPastAMemberDoesNotGoRoundToIt) {
  DlcpSenderAgenda agenda;
  agenda.SetNicBound(3, 1'000);
  agenda.SetNicBound(8, 1'000);
  // last = 4: positions 8 -> 3, 3 -> 2^64 - 2. From position 4 on, only 3 is left.
  EXPECT_EQ(agenda.FirstNicBound(4, 4), 3u);
  EXPECT_FALSE(agenda.FirstNicBound(4, DlcpSenderAgenda::Position(3, 4) + 1).has_value());
  EXPECT_EQ(agenda.FirstNicBound(4, 0, 4), 8u);
  EXPECT_FALSE(agenda.FirstNicBound(4, 0, 3).has_value());
}

TEST(DlcpSenderAgendaTest, MembersWhoseReportComesBeforeTheNicLeaveTheGroup) {
  DlcpSenderAgenda agenda;
  agenda.SetNicBound(1, 150);
  agenda.SetNicBound(2, 400);
  agenda.OnNicMoved(200);  // the NIC is busy until 200: 1's report at 150 comes first
  EXPECT_EQ(agenda.Earliest(200), 150);
  EXPECT_EQ(agenda.Due(150, 0), (std::vector<uint64_t>{1}));
  EXPECT_EQ(agenda.FirstNicBound(0, 0), 2u);  // 2 still waits for the NIC
  agenda.Erase(1);
  EXPECT_EQ(agenda.Earliest(200), 200);
}

TEST(DlcpSenderAgendaTest, AReportDueWhileWaitingForTheNicIsDueOnItsOwn) {
  DlcpSenderAgenda agenda;
  agenda.SetNicBound(6, 300);
  agenda.SetNicBound(7, 900);
  EXPECT_EQ(agenda.Due(300, 0), (std::vector<uint64_t>{6}));
}

// Thousands of senders placed, moved between the groups and erased at random, as at a PS: after
// every step the agenda answers as a plain list of (key, group, time) does.
TEST(DlcpSenderAgendaTest, ManySendersMovedAtRandomAnswerAsAPlainList) {
  struct Entry {
    bool nic_bound;
    TimeNs time;
  };
  DlcpSenderAgenda agenda;
  std::map<uint64_t, Entry> model;
  std::mt19937_64 rng(7);
  TimeNs nic_next = 0;
  for (int step = 0; step < 40'000; ++step) {
    const uint64_t key = rng() % 3'000 * 0x9e3779b97f4a7c15ULL;  // spread over 64 bits
    const TimeNs time = nic_next + static_cast<TimeNs>(rng() % 5'000);
    switch (rng() % 5) {
      case 0:
        agenda.Erase(key);
        model.erase(key);
        break;
      case 1:
      case 2:
        agenda.SetOwn(key, time);
        model[key] = Entry{false, time};
        break;
      default:
        agenda.SetNicBound(key, time);
        model[key] = Entry{true, time};
    }
    if (step % 7 == 0) {
      nic_next += static_cast<TimeNs>(rng() % 300);
      agenda.OnNicMoved(nic_next);
      for (auto& [k, e] : model) {
        if (e.nic_bound && e.time < nic_next) e.nic_bound = false;
      }
    }
    ASSERT_EQ(agenda.size(), model.size());
    if (step % 5 != 0) continue;
    TimeNs earliest = kNever;
    for (const auto& [k, e] : model) earliest = std::min(earliest, e.nic_bound ? nic_next : e.time);
    ASSERT_EQ(agenda.Earliest(nic_next), earliest) << "step " << step;
    if (step % 95 != 0) continue;
    const TimeNs now = nic_next + static_cast<TimeNs>(rng() % 2'000);
    const uint64_t last = rng();
    std::vector<uint64_t> due;
    std::optional<uint64_t> first_waiting;
    for (const auto& [k, e] : model) {
      if (e.time <= now) due.push_back(k);
      if (e.nic_bound && (!first_waiting || DlcpSenderAgenda::Position(k, last) <
                                                DlcpSenderAgenda::Position(*first_waiting, last))) {
        first_waiting = k;
      }
    }
    std::sort(due.begin(), due.end(), [last](uint64_t a, uint64_t b) {
      return DlcpSenderAgenda::Position(a, last) < DlcpSenderAgenda::Position(b, last);
    });
    ASSERT_EQ(agenda.Due(now, last), due) << "step " << step;
    ASSERT_EQ(agenda.FirstNicBound(last, 0), first_waiting) << "step " << step;
  }
}

}  // namespace
}  // namespace swemu
