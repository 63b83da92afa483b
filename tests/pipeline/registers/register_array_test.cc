#include "pipeline/registers/register_array.h"

#include <gtest/gtest.h>

#include <memory>

namespace swemu {
namespace {

std::unique_ptr<RegisterArray> Make(RegisterSpec spec, uint8_t id = 3) {
  Result<std::unique_ptr<RegisterArray>> r = RegisterArray::Create(spec, id);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? std::move(*r) : nullptr;
}

TEST(RegisterArrayTest, ReadWriteAndReset) {
  auto reg = Make({"counts", 8, 32});
  EXPECT_EQ(reg->id(), 3);
  EXPECT_EQ(reg->name(), "counts");
  EXPECT_EQ(*reg->Read(5), 0u);
  ASSERT_TRUE(reg->Write(5, 0xDEADBEEF).ok());
  EXPECT_EQ(*reg->Read(5), 0xDEADBEEFu);
  EXPECT_EQ(*reg->Read(4), 0u);
  reg->Reset();
  EXPECT_EQ(*reg->Read(5), 0u);
}

TEST(RegisterArrayTest, ControlPlaneErrorsNameTheProblem) {
  auto reg = Make({"counts", 8, 16, 2});
  EXPECT_EQ(reg->Write(8, 1).message(), "register counts: index 8 out of range (size 8)");
  EXPECT_EQ(reg->Read(9).message(), "register counts: index 9 out of range (size 8)");
  EXPECT_EQ(reg->Write(0, 1, 2).message(), "register counts: lane 2 out of range (2 lanes)");
  EXPECT_EQ(reg->Write(0, 65536).message(), "register counts: value 65536 does not fit in 16 bits");
  EXPECT_EQ(*reg->Read(0), 0u);
  EXPECT_EQ(reg->ResetRange(6, 3).message(), "register counts: range [6, 9) exceeds size 8");
}

TEST(RegisterArrayTest, CreateRejectsBadSpecs) {
  EXPECT_EQ(RegisterArray::Create({"r", 0, 32}, 0).message(),
            "register r: size must be at least 1");
  EXPECT_EQ(RegisterArray::Create({"r", 4, 65}, 0).message(),
            "register r: width must be 1..64 bits, not 65");
  EXPECT_EQ(RegisterArray::Create({"r", 4, 0}, 0).message(),
            "register r: width must be 1..64 bits, not 0");
  EXPECT_EQ(RegisterArray::Create({"r", 4, 32, 0}, 0).message(),
            "register r: lanes must be 1..1024, not 0");
  EXPECT_EQ(RegisterArray::Create({"r", 4, 32}, 64).message(), "register r: id 64 is not below 64");
  EXPECT_EQ(RegisterArray::Create({"", 4, 32}, 0).message(), "a register array has no name");
}

TEST(RegisterArrayTest, RmwWrapsToTheWidth) {
  auto reg = Make({"small", 4, 8});
  Packet pkt;
  ASSERT_TRUE(reg->Write(1, 255).ok());
  EXPECT_TRUE(reg->Rmw(pkt, 1, [](std::span<uint64_t> cells) { cells[0] += 1; }));
  EXPECT_EQ(*reg->Read(1), 0u);
  pkt.meta.register_access_mask = 0;
  reg->Rmw(pkt, 1, [](std::span<uint64_t> cells) { cells[0] -= 1; });
  EXPECT_EQ(*reg->Read(1), 255u);
}

TEST(RegisterArrayTest, SecondAccessInOnePassDropsThePacket) {
  auto reg = Make({"r", 4, 32}, 5);
  Packet pkt;
  EXPECT_TRUE(reg->Rmw(pkt, 0, [](std::span<uint64_t> c) { c[0] += 1; }));
  EXPECT_EQ(pkt.meta.register_access_mask, 1u << 5);
  EXPECT_FALSE(pkt.meta.dropped());
  EXPECT_FALSE(reg->Rmw(pkt, 2, [](std::span<uint64_t> c) { c[0] += 1; }));
  EXPECT_EQ(pkt.meta.drop_reason, DropReason::kRegisterDoubleAccess);
  EXPECT_EQ(*reg->Read(2), 0u);  // the refused access changed nothing
  EXPECT_EQ(*reg->Read(0), 1u);
}

TEST(RegisterArrayTest, OtherArraysAndANewPassMayAccessAgain) {
  auto a = Make({"a", 4, 32}, 0);
  auto b = Make({"b", 4, 32}, 1);
  Packet pkt;
  EXPECT_TRUE(a->Rmw(pkt, 0, [](std::span<uint64_t> c) { c[0] += 1; }));
  EXPECT_TRUE(b->Rmw(pkt, 0, [](std::span<uint64_t> c) { c[0] += 1; }));
  pkt.ResetState();  // recirculation: a new pass clears the access mask
  EXPECT_TRUE(a->Rmw(pkt, 0, [](std::span<uint64_t> c) { c[0] += 1; }));
  EXPECT_FALSE(pkt.meta.dropped());
  EXPECT_EQ(*a->Read(0), 2u);
}

TEST(RegisterArrayTest, OutOfRangeIndexWrapsLikeHardware) {
  auto pow2 = Make({"p", 8, 32}, 0);
  auto odd = Make({"o", 6, 32}, 1);
  Packet pkt;
  EXPECT_TRUE(pow2->Rmw(pkt, 8 + 3, [](std::span<uint64_t> c) { c[0] = 7; }));
  EXPECT_TRUE(odd->Rmw(pkt, 6 * 5 + 4, [](std::span<uint64_t> c) { c[0] = 9; }));
  EXPECT_FALSE(pkt.meta.dropped());
  EXPECT_EQ(*pow2->Read(3), 7u);
  EXPECT_EQ(*odd->Read(4), 9u);
}

TEST(RegisterArrayTest, LanesAreUpdatedTogetherAtOneIndex) {
  auto agg = Make({"agg", 4, 32, 64}, 2);
  ASSERT_TRUE(agg->Write(1, FromInt32(-5), 10).ok());
  Packet pkt;
  EXPECT_TRUE(agg->Rmw(pkt, 1, [](std::span<uint64_t> lanes) {
    ASSERT_EQ(lanes.size(), 64u);
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      lanes[i] = FromInt32(AsInt32(lanes[i]) + static_cast<int32_t>(i));
    }
  }));
  EXPECT_EQ(*agg->Read(1, 0), 0u);
  EXPECT_EQ(AsInt32(*agg->Read(1, 10)), 5);
  EXPECT_EQ(*agg->Read(1, 63), 63u);
  EXPECT_EQ(*agg->Read(0, 63), 0u);
  EXPECT_EQ(*agg->Read(2, 1), 0u);
}

TEST(RegisterArrayTest, NegativeInt32LanesStoreAsTwosComplement) {
  auto agg = Make({"agg", 2, 32, 2});
  Packet pkt;
  agg->Rmw(pkt, 0, [](std::span<uint64_t> l) { l[0] = FromInt32(AsInt32(l[0]) - 3); });
  EXPECT_EQ(*agg->Read(0), 0xFFFFFFFDu);
  EXPECT_EQ(AsInt32(*agg->Read(0)), -3);
  EXPECT_EQ(SignExtend(0xFD, 8), -3);
  EXPECT_EQ(SignExtend(0x7F, 8), 127);
}

TEST(RegisterArrayTest, ResetRangeClearsOnlyThoseIndices) {
  auto reg = Make({"r", 8, 16, 2});
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(reg->Write(i, i + 1, 0).ok());
    ASSERT_TRUE(reg->Write(i, i + 1, 1).ok());
  }
  ASSERT_TRUE(reg->ResetRange(2, 3).ok());
  EXPECT_EQ(*reg->Read(1, 1), 2u);
  EXPECT_EQ(*reg->Read(2, 0), 0u);
  EXPECT_EQ(*reg->Read(4, 1), 0u);
  EXPECT_EQ(*reg->Read(5, 0), 6u);
}

TEST(RegisterArrayTest, ResourcesFollowTheDeclaration) {
  EXPECT_EQ(Make({"r", 1000, 32, 64})->SramBytes(), 1000u * 64 * 4);
  EXPECT_EQ(Make({"r", 1000, 12})->SramBytes(), 1000u * 2);
  EXPECT_EQ(Make({"r", 1000, 1})->SramBytes(), 1000u);
  EXPECT_EQ(Make({"r", 1000, 32, 64})->Alus(), 64u);
}

TEST(RegisterArrayTest, HostBytesAreTheCellsAsStored) {
  // The emulator stores storage_bytes per cell whatever the declared width.
  EXPECT_EQ(Make({"r", 1000, 32, 64})->HostBytes(), 1000u * 64 * 8);
  EXPECT_EQ(Make({"r", 1000, 32, 64, 4})->HostBytes(), 1000u * 64 * 4);
  EXPECT_EQ(Make({"r", 1000, 1})->HostBytes(), 1000u * 8);
  EXPECT_EQ(Make({"r", 4000, 1})->HostBytes(), 4000u * 8);
}

TEST(RegisterArrayTest, FourByteStorageHoldsInt32LanesAndReadsAsCells) {
  auto agg = Make({"agg", 4, 32, 64, 4}, 2);
  EXPECT_EQ(agg->storage_bytes(), 4);
  ASSERT_TRUE(agg->Write(1, FromInt32(-5), 10).ok());
  ASSERT_TRUE(agg->Write(1, 0xFFFFFFFF, 63).ok());
  EXPECT_EQ(agg->Write(1, uint64_t{1} << 32, 0).message(),
            "register agg: value 4294967296 does not fit in 32 bits");
  Packet pkt;
  EXPECT_TRUE(agg->Rmw32(pkt, 1, [](std::span<uint32_t> lanes) {
    ASSERT_EQ(lanes.size(), 64u);
    for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i] += static_cast<uint32_t>(i);
  }));
  EXPECT_EQ(AsInt32(*agg->Read(1, 10)), 5);
  EXPECT_EQ(*agg->Read(1, 63), 62u);  // 0xFFFFFFFF + 63 wraps in 32 bits
  EXPECT_EQ(*agg->Read(1, 1), 1u);
  EXPECT_EQ(*agg->Read(0, 1), 0u);  // neighbouring indices untouched
  EXPECT_EQ(*agg->Read(2, 0), 0u);
  ASSERT_TRUE(agg->ResetRange(1, 1).ok());
  EXPECT_EQ(*agg->Read(1, 63), 0u);
  EXPECT_EQ(agg->SramBytes(), 4u * 64 * 4);  // declared resources do not depend on the storage
}

TEST(RegisterArrayTest, FourByteStorageTruncatesNarrowWidthsAndKeepsTheAccessRule) {
  auto reg = Make({"small", 4, 8, 2, 4}, 6);
  Packet pkt;
  EXPECT_TRUE(reg->Rmw32(pkt, 5, [](std::span<uint32_t> c) {
    c[0] = 255 + 1;
    c[1] = 7;
  }));
  EXPECT_EQ(*reg->Read(1, 0), 0u);  // index 5 wraps to 1; 256 wraps to 0 in 8 bits
  EXPECT_EQ(*reg->Read(1, 1), 7u);
  EXPECT_FALSE(reg->Rmw32(pkt, 1, [](std::span<uint32_t> c) { c[1] = 9; }));
  EXPECT_EQ(pkt.meta.drop_reason, DropReason::kRegisterDoubleAccess);
  EXPECT_EQ(*reg->Read(1, 1), 7u);
}

TEST(RegisterArrayTest, RmwFlavourMustMatchTheStorage) {
  auto narrow = Make({"n", 4, 32, 1, 4}, 0);
  auto wide = Make({"w", 4, 32}, 1);
  Packet a;
  EXPECT_FALSE(narrow->Rmw(a, 0, [](std::span<uint64_t> c) { c[0] = 1; }));
  EXPECT_EQ(a.meta.drop_reason, DropReason::kProgramDrop);
  Packet b;
  EXPECT_FALSE(wide->Rmw32(b, 0, [](std::span<uint32_t> c) { c[0] = 1; }));
  EXPECT_EQ(b.meta.drop_reason, DropReason::kProgramDrop);
  EXPECT_EQ(*narrow->Read(0), 0u);
  EXPECT_EQ(*wide->Read(0), 0u);
}

TEST(RegisterArrayTest, FourByteStorageNeedsWidthUpTo32) {
  EXPECT_EQ(RegisterArray::Create({"r", 4, 33, 1, 4}, 0).message(),
            "register r: storage must be 8 bytes per cell, or 4 for widths up to 32 bits, not 4");
  EXPECT_EQ(RegisterArray::Create({"r", 4, 8, 1, 2}, 0).message(),
            "register r: storage must be 8 bytes per cell, or 4 for widths up to 32 bits, not 2");
}

TEST(RegisterArrayTest, PrefetchOfManyLanesIsAHintThatCountsNoAccess) {
  auto agg = Make({"agg", 16, 32, 112, 4}, 4);
  Packet pkt;
  for (uint32_t i = 0; i < 40; ++i) agg->Prefetch(i);  // wraps like an access; only a hint
  EXPECT_EQ(pkt.meta.register_access_mask, 0u);
  EXPECT_TRUE(agg->Rmw32(pkt, 15, [](std::span<uint32_t> c) { c[111] = 3; }));
  EXPECT_EQ(*agg->Read(15, 111), 3u);
}

}  // namespace
}  // namespace swemu
