// Multicast replication and the BMv2-style group/node control API.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "tests/pipeline/tm/tm_test_util.h"

namespace swemu::tm_test {
namespace {

class MulticastTest : public TmTest {
 public:
  void SetUp() override { Build(TmConfig()); }

  uint32_t Node(uint16_t rid, std::vector<PortId> ports) {
    auto handle = tm_->McNodeCreate(rid, std::move(ports));
    EXPECT_TRUE(handle.ok()) << handle.message();
    return handle.ok() ? *handle : 0;
  }

  uint32_t SendGroup(uint16_t grp, uint8_t queue = 0) {
    Packet* pkt = Make(200, kPortUnset, queue, 0xAB);
    pkt->meta.mcast_grp = grp;
    return tm_->Enqueue(pkt, 0);
  }

  // Every (port, rid) queued, draining all ports.
  std::multiset<std::pair<PortId, uint16_t>> DrainCopies() {
    std::multiset<std::pair<PortId, uint16_t>> got;
    for (PortId port = 0; port < tm_->num_ports(); ++port) {
      while (Packet* pkt = tm_->Dequeue(port, 0)) {
        EXPECT_EQ(pkt->meta.egress_spec, port);
        EXPECT_EQ(pkt->data[0], 0xAB);
        EXPECT_EQ(pkt->len, 200u);
        got.insert({pkt->meta.egress_port, pkt->meta.egress_rid});
        pool_->Free(pkt);
      }
    }
    return got;
  }
};

TEST_F(MulticastTest, ReplicatesToEveryPortOfEveryNodeWithItsRid) {
  ASSERT_TRUE(tm_->McGroupCreate(5).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(5, Node(10, {0, 2})).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(5, Node(11, {2, 3, 1})).ok());
  EXPECT_EQ(SendGroup(5, 3), 5u);
  EXPECT_EQ(tm_->multicast_copies(), 4u);
  EXPECT_EQ(tm_->DepthPkts(2, 3), 2u);  // the copies keep the original's queue
  std::multiset<std::pair<PortId, uint16_t>> expected = {
      {0, 10}, {2, 10}, {1, 11}, {2, 11}, {3, 11}};
  EXPECT_EQ(DrainCopies(), expected);
  EXPECT_EQ(pool_->InUse(), 0u);
}

TEST_F(MulticastTest, EmptyAndUnknownGroupsDropTheOriginal) {
  ASSERT_TRUE(tm_->McGroupCreate(7).ok());
  EXPECT_EQ(SendGroup(7), 0u);
  EXPECT_EQ(SendGroup(8), 0u);
  EXPECT_EQ(tm_->drops(DropReason::kMulticastEmptyGroup), 2u);
  EXPECT_EQ(pool_->InUse(), 0u);
}

TEST_F(MulticastTest, CloneFailureIsCountedAndTheRestStillGo) {
  Build(TmConfig(), 2);  // room for the original and one clone
  ASSERT_TRUE(tm_->McGroupCreate(1).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(1, Node(0, {0, 1, 2, 3})).ok());
  EXPECT_EQ(SendGroup(1), 2u);
  EXPECT_EQ(tm_->drops(DropReason::kMulticastCloneFailed), 2u);
  EXPECT_EQ(tm_->multicast_copies(), 3u);
  // The first copy was cloned, the next two failed, the original went to the last port.
  EXPECT_EQ(tm_->DepthPkts(0, 0), 1u);
  EXPECT_EQ(tm_->queue_counters(1, 0).dropped, 1u);
  EXPECT_EQ(tm_->queue_counters(2, 0).dropped, 1u);
  EXPECT_EQ(tm_->DepthPkts(3, 0), 1u);
}

TEST_F(MulticastTest, CopiesFaceAdmissionOneByOne) {
  ASSERT_TRUE(tm_->SetQueueDepth(1, 0, 1).ok());
  Send(100, 1, 0, 0);  // port 1 queue 0 is now full
  ASSERT_TRUE(tm_->McGroupCreate(2).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(2, Node(4, {0, 1, 2})).ok());
  EXPECT_EQ(SendGroup(2), 2u);
  EXPECT_EQ(tm_->drops(DropReason::kTmQueueFull), 1u);
  EXPECT_EQ(tm_->TotalQueued(), 3u);
}

TEST_F(MulticastTest, DissociateDestroyAndReassociate) {
  ASSERT_TRUE(tm_->McGroupCreate(3).ok());
  uint32_t a = Node(1, {0});
  uint32_t b = Node(2, {1});
  EXPECT_NE(a, b);
  ASSERT_TRUE(tm_->McNodeAssociate(3, a).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(3, b).ok());
  ASSERT_TRUE(tm_->McNodeDissociate(3, a).ok());
  EXPECT_EQ(SendGroup(3), 1u);
  ASSERT_TRUE(tm_->McNodeDestroy(b).ok());  // destroying an associated node removes it
  EXPECT_EQ(SendGroup(3), 0u);
  ASSERT_TRUE(tm_->McNodeAssociate(3, a).ok());
  EXPECT_EQ(SendGroup(3), 1u);
  ASSERT_TRUE(tm_->McGroupDestroy(3).ok());
  EXPECT_EQ(SendGroup(3), 0u);
  // The node survived its group and can join another.
  ASSERT_TRUE(tm_->McGroupCreate(4).ok());
  ASSERT_TRUE(tm_->McNodeAssociate(4, a).ok());
  EXPECT_EQ(SendGroup(4), 1u);
  std::multiset<std::pair<PortId, uint16_t>> expected = {{1, 2}, {0, 1}, {0, 1}};
  EXPECT_EQ(DrainCopies(), expected);
}

TEST_F(MulticastTest, ControlErrorsNameTheProblem) {
  auto expect_error = [](const Status& status, const std::string& words) {
    ASSERT_FALSE(status.ok()) << words;
    EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
  };
  expect_error(tm_->McGroupCreate(0).status(), "group 0");
  ASSERT_TRUE(tm_->McGroupCreate(9).ok());
  expect_error(tm_->McGroupCreate(9).status(), "already exists");
  expect_error(tm_->McGroupDestroy(10), "group 10 does not exist");
  expect_error(tm_->McNodeCreate(1, {0, 4}).status(), "port 4");
  expect_error(tm_->McNodeCreate(1, {2, 2}).status(), "twice");
  uint32_t node = Node(1, {0});
  expect_error(tm_->McNodeAssociate(10, node), "group 10");
  expect_error(tm_->McNodeAssociate(9, node + 1), "handle " + std::to_string(node + 1));
  ASSERT_TRUE(tm_->McNodeAssociate(9, node).ok());
  expect_error(tm_->McNodeAssociate(9, node), "already associated");
  ASSERT_TRUE(tm_->McGroupCreate(11).ok());
  expect_error(tm_->McNodeDissociate(11, node), "not associated");
  expect_error(tm_->McNodeDestroy(node + 5), "does not exist");
}

TEST_F(MulticastTest, DumpListsGroupsAndNodes) {
  ASSERT_TRUE(tm_->McGroupCreate(6).ok());
  uint32_t node = Node(42, {3, 1});
  Node(43, {2});
  ASSERT_TRUE(tm_->McNodeAssociate(6, node).ok());
  std::string dump = tm_->McDump();
  EXPECT_NE(dump.find("mgrp 6: node 0 (rid 42 ports 1 3)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("node 1 (rid 43) not associated"), std::string::npos) << dump;
}

}  // namespace
}  // namespace swemu::tm_test
