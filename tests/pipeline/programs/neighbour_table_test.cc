// The neighbour table's state machine on a clock the test moves: INCOMPLETE with its retries,
// REACHABLE, re-probed (STALE) when its time is up, FAILED; the per-entry packet queue; IPv4
// and IPv6 neighbours in one table.
#include "pipeline/programs/neighbour_table.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

constexpr TimeNs kSecond = 1'000'000'000;
constexpr Ipv6Addr kIp = Ipv6Addr::MappedIpv4(0x0A010102);  // 10.1.1.2
constexpr uint64_t kMac = 0x020000000002;

std::vector<NeighbourEvent::Kind> Kinds(const std::vector<NeighbourEvent>& events) {
  std::vector<NeighbourEvent::Kind> kinds;
  for (const NeighbourEvent& e : events) kinds.push_back(e.kind);
  return kinds;
}

TEST(NeighbourTableTest, UnansweredRequestsRetryASecondApartThenFail) {
  NeighbourTable table({}, 8);
  std::vector<NeighbourEvent> events;
  Neighbour* n = table.Resolve(kIp, 0, 0, &events);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NeighbourState::kIncomplete);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kRequest});
  EXPECT_EQ(events[0].mac, 0u);  // broadcast
  Packet a, b, c, d;
  EXPECT_TRUE(table.Hold(*n, &a));
  EXPECT_TRUE(table.Hold(*n, &b));
  EXPECT_TRUE(table.Hold(*n, &c));
  EXPECT_FALSE(table.Hold(*n, &d));  // three wait, as the kernel's unres_qlen
  events.clear();
  table.Expire(kSecond - 1, &events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(table.NextTimer(), kSecond);
  table.Expire(kSecond, &events);
  table.Expire(2 * kSecond, &events);
  EXPECT_EQ(Kinds(events), (std::vector{NeighbourEvent::kRequest, NeighbourEvent::kRequest}));
  events.clear();
  table.Expire(3 * kSecond, &events);  // three requests unanswered
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kFailed});
  EXPECT_EQ(events[0].pending, (std::vector<Packet*>{&a, &b, &c}));
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kFailed);
  EXPECT_EQ(table.NextTimer(), kNever);
  events.clear();
  n = table.Resolve(kIp, 0, 4 * kSecond, &events);  // new traffic: a new round
  EXPECT_EQ(n->state, NeighbourState::kIncomplete);
  EXPECT_EQ(Kinds(events), std::vector{NeighbourEvent::kRequest});
}

TEST(NeighbourTableTest, AReplyResolvesAndHandsBackTheQueue) {
  NeighbourTable table({}, 8);
  std::vector<NeighbourEvent> events;
  Neighbour* n = table.Resolve(kIp, 1, 0, &events);
  Packet a;
  ASSERT_TRUE(table.Hold(*n, &a));
  events.clear();
  table.Confirm(kIp, 1, kMac, 3, kSecond / 2, false, &events);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kResolved});
  EXPECT_EQ(events[0].mac, kMac);
  EXPECT_EQ(events[0].port, 3);
  EXPECT_EQ(events[0].pending, std::vector<Packet*>{&a});
  EXPECT_EQ(n->state, NeighbourState::kReachable);
  // The same answer again changes nothing; a move is news.
  events.clear();
  table.Confirm(kIp, 1, kMac, 3, kSecond, false, &events);
  EXPECT_TRUE(events.empty());
  table.Confirm(kIp, 1, kMac, 2, kSecond, false, &events);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kResolved});
  EXPECT_EQ(events[0].port, 2);
}

TEST(NeighbourTableTest, ReachableAgesIntoUnicastProbesThenFails) {
  NeighbourTimers timers;
  timers.reachable_ns = 30 * kSecond;
  NeighbourTable table(timers, 8);
  std::vector<NeighbourEvent> events;
  table.Confirm(kIp, 0, kMac, 1, 0, true, &events);  // learned from its own request
  ASSERT_NE(table.Find(kIp), nullptr);
  events.clear();
  table.Expire(30 * kSecond - 1, &events);
  EXPECT_TRUE(events.empty());
  table.Expire(30 * kSecond, &events);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kRequest});
  EXPECT_EQ(events[0].mac, kMac);  // a unicast probe where it was
  EXPECT_EQ(events[0].port, 1);
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kStale);
  // Answered: reachable again for another reachable time.
  events.clear();
  table.Confirm(kIp, 0, kMac, 1, 31 * kSecond, false, &events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kReachable);
  EXPECT_EQ(table.NextTimer(), 61 * kSecond);
  // Unanswered: three probes, then FAILED.
  for (TimeNs t = 61; t <= 64; ++t) table.Expire(t * kSecond, &events);
  EXPECT_EQ(Kinds(events), (std::vector{NeighbourEvent::kRequest, NeighbourEvent::kRequest,
                                        NeighbourEvent::kRequest, NeighbourEvent::kFailed}));
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kFailed);
}

TEST(NeighbourTableTest, AFullTableRefusesAndUnsolicitedRepliesNeedCreate) {
  NeighbourTable table({}, 1);
  std::vector<NeighbourEvent> events;
  table.Confirm(kIp, 0, kMac, 1, 0, false, &events);
  EXPECT_EQ(table.Find(kIp), nullptr);  // a reply nobody asked for is not an entry
  ASSERT_NE(table.Resolve(kIp, 0, 0, &events), nullptr);
  EXPECT_EQ(table.Resolve(Ipv6Addr::MappedIpv4(0x0A010103), 0, 0, &events), nullptr);
  EXPECT_EQ(table.Find(kIp)->slot, 0u);
}

TEST(NeighbourTableTest, Ipv6NeighboursShareTheSlotsAndFollowIpv4) {
  NeighbourTable table({}, 2);
  std::vector<NeighbourEvent> events;
  const Ipv6Addr v6 = {0x20010DB800010000ULL, 2};  // 2001:db8:1::2
  Neighbour* n6 = table.Resolve(v6, 0, 0, &events);
  ASSERT_NE(n6, nullptr);
  EXPECT_EQ(n6->slot, 0u);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kRequest});
  EXPECT_EQ(events[0].ip, v6);
  ASSERT_NE(table.Resolve(kIp, 0, 0, &events), nullptr);
  EXPECT_EQ(table.Find(kIp)->slot, 1u);
  EXPECT_EQ(table.Resolve(Ipv6Addr{v6.hi, 3}, 0, 0, &events), nullptr);  // both slots taken
  events.clear();
  table.Confirm(v6, 0, kMac, 4, kSecond / 2, false, &events);
  ASSERT_EQ(Kinds(events), std::vector{NeighbourEvent::kResolved});
  EXPECT_EQ(events[0].ip, v6);
  EXPECT_EQ(table.Find(v6)->state, NeighbourState::kReachable);
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kIncomplete);
  EXPECT_EQ(table.entries().begin()->first, kIp);  // IPv4 (::ffff:0:0/96) lists first
}

TEST(NeighbourTableTest, AMacMovedByLearningMovesItsResolvedEntriesOfThatInterface) {
  NeighbourTable table({}, 8);
  std::vector<NeighbourEvent> events;
  const Ipv6Addr ip6 = *ParseIpv6("2001:db8::2");
  const Ipv6Addr other = Ipv6Addr::MappedIpv4(0x0A010103);
  table.Confirm(kIp, 0, kMac, 1, 0, true, &events);
  table.Confirm(ip6, 0, kMac, 1, 0, true, &events);  // the same host's IPv6 address
  table.Confirm(other, 0, kMac + 1, 1, 0, true, &events);
  table.Resolve(Ipv6Addr::MappedIpv4(0x0A010104), 0, 0, &events);  // INCOMPLETE: no MAC yet
  events.clear();
  const TimeNs next = table.NextTimer();
  table.MoveMac(kMac, 0, 1, &events);  // where it already is
  EXPECT_TRUE(events.empty());
  table.MoveMac(kMac, 1, 2, &events);  // a port of another interface
  EXPECT_TRUE(events.empty());
  table.MoveMac(kMac, 0, 2, &events);
  ASSERT_EQ(Kinds(events), (std::vector{NeighbourEvent::kResolved, NeighbourEvent::kResolved}));
  EXPECT_EQ(events[0].ip, kIp);
  EXPECT_EQ(events[1].ip, ip6);
  for (const NeighbourEvent& e : events) {
    EXPECT_EQ(e.port, 2);
    EXPECT_EQ(e.mac, kMac);
  }
  EXPECT_EQ(table.Find(kIp)->port, 2);
  EXPECT_EQ(table.Find(kIp)->state, NeighbourState::kReachable);  // state and timers stay
  EXPECT_EQ(table.Find(other)->port, 1);
  EXPECT_EQ(table.NextTimer(), next);
}

}  // namespace
}  // namespace swemu
