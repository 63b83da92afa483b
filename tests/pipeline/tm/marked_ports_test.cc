// The ports the TM marks as possibly ready sooner (TakeMarkedPorts): every port at first, then
// those packets were queued on or whose rates changed, in ascending order, once each.
#include <gtest/gtest.h>

#include <vector>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

using MarkedPortsTest = TmTest;

std::vector<PortId> Take(TrafficManager& tm) {
  std::vector<PortId> ports;
  tm.TakeMarkedPorts([&](PortId p) { ports.push_back(p); });
  return ports;
}

TmConfig Ports(uint16_t n) {
  TmConfig config;
  config.num_ports = n;
  return config;
}

TEST_F(MarkedPortsTest, EveryPortStartsMarkedAndATakeUnmarks) {
  Build(Ports(70));  // two words of marks
  std::vector<PortId> all(70);
  for (PortId p = 0; p < 70; ++p) all[p] = p;
  EXPECT_EQ(Take(*tm_), all);
  EXPECT_EQ(Take(*tm_), std::vector<PortId>{});
}

TEST_F(MarkedPortsTest, QueuedPacketsMarkTheirPortsInAscendingOrder) {
  Build(Ports(70));
  Take(*tm_);
  ASSERT_EQ(Send(100, 66, 0, 0), 1u);
  ASSERT_EQ(Send(100, 3, 7, 0), 1u);
  ASSERT_EQ(Send(100, 3, 0, 0), 1u);
  EXPECT_EQ(Take(*tm_), (std::vector<PortId>{3, 66}));
  // A dequeue makes a port ready later, not sooner: no mark.
  Packet* pkt = tm_->Dequeue(3, 0);
  ASSERT_NE(pkt, nullptr);
  pool_->Free(pkt);
  EXPECT_EQ(Take(*tm_), std::vector<PortId>{});
}

TEST_F(MarkedPortsTest, MulticastCopiesMarkEveryPortTheyAreQueuedOn) {
  Build(Ports(8));
  ASSERT_TRUE(tm_->McGroupCreate(1).ok());
  Result<uint32_t> node = tm_->McNodeCreate(0, {2, 5, 6});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(tm_->McNodeAssociate(1, *node).ok());
  Take(*tm_);
  Packet* pkt = Make(100, 0);
  pkt->meta.mcast_grp = 1;
  ASSERT_EQ(tm_->Enqueue(pkt, 0), 3u);
  EXPECT_EQ(Take(*tm_), (std::vector<PortId>{2, 5, 6}));
}

// A faster rate can make a backlogged port ready sooner without a packet queued: marked.
TEST_F(MarkedPortsTest, RateChangesMarkThePortsTheyApplyTo) {
  TmConfig config = Ports(4);
  config.port_rate_bps = 1'000'000;
  Build(config);
  ASSERT_EQ(Send(1000, 1, 0, 0), 1u);
  ASSERT_EQ(Send(1000, 1, 0, 0), 1u);
  Packet* pkt = tm_->Dequeue(1, 0);
  ASSERT_NE(pkt, nullptr);
  pool_->Free(pkt);
  const TimeNs slow = tm_->NextDequeueTime(1, 0);
  Take(*tm_);
  ASSERT_TRUE(tm_->SetPortRate(PortId{1}, 1'000'000'000).ok());
  EXPECT_LT(tm_->NextDequeueTime(1, 0), slow);
  EXPECT_EQ(Take(*tm_), std::vector<PortId>{1});
  ASSERT_TRUE(tm_->SetQueueRate(PortId{2}, 0, 1000).ok());
  ASSERT_TRUE(tm_->SetPortRate(std::nullopt, 1'000'000'000).ok());
  EXPECT_EQ(Take(*tm_), (std::vector<PortId>{0, 1, 2, 3}));
  // Thresholds change no dequeue time: no mark.
  tm_->SetEcnThreshold(1, 0, 5000);
  ASSERT_TRUE(tm_->SetQueueDepth(PortId{1}, 0, 16).ok());
  EXPECT_EQ(Take(*tm_), std::vector<PortId>{});
}

}  // namespace
}  // namespace swemu::tm_test
