#include "pipeline/core/packet_pool.h"

#include <gtest/gtest.h>

#include <cstring>

namespace swemu {
namespace {

TEST(HeapPacketPoolTest, AllocFreeAndExhaustion) {
  HeapPacketPool pool(2);
  Packet* a = pool.Alloc();
  Packet* b = pool.Alloc();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.Alloc(), nullptr);
  EXPECT_EQ(pool.InUse(), 2u);
  pool.Free(a);
  EXPECT_EQ(pool.InUse(), 1u);
  Packet* c = pool.Alloc();
  EXPECT_EQ(c, a);
  pool.Free(b);
  pool.Free(c);
  EXPECT_EQ(pool.InUse(), 0u);
}

TEST(HeapPacketPoolTest, CloneCopiesFrameAndMetadata) {
  HeapPacketPool pool(4);
  const uint8_t frame[] = {1, 2, 3, 4, 5, 6, 7, 8};
  Packet* p = pool.FromBytes(frame, sizeof(frame));
  ASSERT_NE(p, nullptr);
  p->meta.egress_spec = 3;
  p->hdr.eth = 0;
  Packet* q = pool.Clone(*p);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q->data, p->data);
  EXPECT_EQ(q->len, sizeof(frame));
  EXPECT_EQ(std::memcmp(q->data, frame, sizeof(frame)), 0);
  EXPECT_EQ(q->meta.egress_spec, 3);
  EXPECT_EQ(q->hdr.eth, 0);
  EXPECT_EQ(q->tailroom, p->tailroom);
}

TEST(HeapPacketPoolTest, FrameHintIsWhereTheFrameStarts) {
  HeapPacketPool pool(3, 256, 64);
  Packet* a = pool.Alloc();
  Packet* b = pool.Alloc();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.FrameHint(a), a->data);
  EXPECT_EQ(pool.FrameHint(b), b->data);
  ASSERT_TRUE(b->Prepend(8));  // moved: the hint stays the buffer's usual start
  EXPECT_EQ(pool.FrameHint(b), b->data + 8);
}

TEST(HeapPacketPoolTest, RejectsOversizedFrame) {
  HeapPacketPool pool(1, 256, 64);
  uint8_t frame[300] = {};
  EXPECT_EQ(pool.FromBytes(frame, sizeof(frame)), nullptr);
  EXPECT_EQ(pool.InUse(), 0u);
}

TEST(PacketTest, PrependAndTrimRespectRoom) {
  HeapPacketPool pool(1, 256, 16);
  Packet* p = pool.Alloc();
  ASSERT_TRUE(p->Append(100));
  EXPECT_FALSE(p->Prepend(17));
  EXPECT_TRUE(p->Prepend(4));
  EXPECT_EQ(p->len, 104u);
  EXPECT_TRUE(p->TrimFront(4));
  EXPECT_FALSE(p->TrimBack(101));
  EXPECT_EQ(p->len, 100u);
}

}  // namespace
}  // namespace swemu
