// The shared aggregator stages (agg_kernel.h) over a toy program: its ops, a bitmap of workers
// per packet and a fan-in in the packet's AggMeta, the count flag as a done bit.
#include "pipeline/programs/agg_kernel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

namespace swemu {
namespace {

enum ToyOp : uint8_t { kToyNone, kToyClaim, kToyMerge, kToyAdd, kToyFlush, kToyFull, kToyLate };

struct ToyAgg {
  using Op = ToyOp;
  static constexpr Op kClaim = kToyClaim;
  static constexpr Op kMerge = kToyMerge;
  static constexpr Op kAdd = kToyAdd;
  static uint64_t Workers(Packet& pkt) noexcept {
    uint64_t bits = 0;
    std::memcpy(&bits, pkt.data, sizeof bits);
    return bits;
  }
  static DropReason Duplicate() noexcept { return DropReason::kProgramDrop; }
  static Op OtherBitmap(uint64_t& cell, uint64_t bits, AggMeta<Op>&, uint64_t* result) noexcept {
    *result = cell | bits;  // a flush: the slot's workers and the packet's
    return kToyFlush;
  }
  static uint64_t FanIn(Packet& pkt) noexcept { return AggMetaOf<Op>(pkt).fan_in; }
  static bool TakesAdd(AggCountWord before) noexcept { return !before.flag; }
  static bool CountedFlag(Packet&, AggMeta<Op>&, bool, AggCountWord, bool complete) noexcept {
    return complete;
  }
  static Op OtherCount(Packet&, AggMeta<Op>& meta, AggCountWord before,
                       AggCountWord* after) noexcept {
    if (before.flag) return kToyLate;
    after->flag = true;
    return meta.op;
  }
};

struct ToyCounters {
  uint64_t claimed = 0;
  uint64_t aggregated = 0;
  uint64_t completed = 0;
};

// One packet per access (a packet touches an array once per pass), its workers in its data.
class AggKernelTest : public ::testing::Test {
 protected:
  Packet& Make(ToyOp op, uint64_t workers, uint8_t fan_in = 0) {
    frames_.push_back(std::make_unique<uint64_t>(workers));
    pkts_.push_back(std::make_unique<Packet>());
    Packet& pkt = *pkts_.back();
    pkt.data = reinterpret_cast<uint8_t*>(frames_.back().get());
    pkt.len = sizeof(uint64_t);
    AggMeta<ToyOp>& meta = AggMetaOf<ToyOp>(pkt);
    meta.slot = 1;
    meta.op = op;
    meta.fan_in = fan_in;
    return pkt;
  }
  static AggMeta<ToyOp>& Meta(Packet& pkt) { return AggMetaOf<ToyOp>(pkt); }
  static std::unique_ptr<RegisterArray> Array(const char* name, uint8_t width) {
    Result<std::unique_ptr<RegisterArray>> r = RegisterArray::Create({name, 4, width}, 1);
    EXPECT_TRUE(r.ok()) << r.message();
    return std::move(*r);
  }
  uint32_t Bitmap(RegisterArray* reg, Packet& pkt, uint64_t* duplicates) {
    Packet* one[1] = {&pkt};
    return AggBitmapStage<ToyAgg>(reg, one, 1, duplicates, [](Packet&) { return true; });
  }
  void Count(RegisterArray* reg, Packet& pkt, ToyCounters& counters) {
    Packet* one[1] = {&pkt};
    AggCountStage<ToyAgg>(reg, one, 1, counters, [](Packet&, AggCountWord, bool) {});
  }

 private:
  std::vector<std::unique_ptr<uint64_t>> frames_;
  std::vector<std::unique_ptr<Packet>> pkts_;
};

TEST(AggCountWordTest, SevenBitCountAndAFlag) {
  EXPECT_EQ((AggCountWord{5, true}).Word(), 0x85u);
  EXPECT_EQ((AggCountWord{300, false}).Word(), 0x7Fu);  // saturates at 7 bits
  const AggCountWord w = AggCountWord::Of(0x83);
  EXPECT_EQ(w.count, 3u);
  EXPECT_TRUE(w.flag);
  EXPECT_EQ(AggCountWord::Of(0x7F).flag, false);
}

TEST_F(AggKernelTest, BitmapClaimsMergesAndDropsDuplicates) {
  auto reg = Array("bitmap", 64);
  uint64_t duplicates = 0;
  Packet& claim = Make(kToyClaim, 0b001);
  EXPECT_EQ(Bitmap(reg.get(), claim, &duplicates), 1u);
  EXPECT_EQ(Meta(claim).bitmap(), 0b001u);
  Packet& merge = Make(kToyMerge, 0b110);
  EXPECT_EQ(Bitmap(reg.get(), merge, &duplicates), 1u);
  EXPECT_EQ(Meta(merge).op, kToyAdd);
  EXPECT_EQ(Meta(merge).bitmap(), 0b111u);
  Packet& dup = Make(kToyMerge, 0b010);
  EXPECT_EQ(Bitmap(reg.get(), dup, &duplicates), 0u);
  EXPECT_EQ(duplicates, 1u);
  EXPECT_EQ(dup.meta.drop_reason, DropReason::kProgramDrop);
  Packet& flush = Make(kToyFlush, uint64_t{1} << 40);  // the program's own rule
  EXPECT_EQ(Bitmap(reg.get(), flush, &duplicates), 1u);
  EXPECT_EQ(Meta(flush).bitmap(), (uint64_t{1} << 40) | 0b111u);
  EXPECT_EQ(*reg->Read(1), 0b111u);  // OtherBitmap left the cell alone
}

TEST_F(AggKernelTest, BitmapGoOnDecidesWhoStays) {
  auto reg = Array("bitmap", 64);
  uint64_t duplicates = 0;
  Packet* pkts[2] = {&Make(kToyClaim, 0b01), &Make(kToyFlush, 0b10)};
  AggMetaOf<ToyOp>(*pkts[1]).slot = 2;
  const uint32_t live = AggBitmapStage<ToyAgg>(reg.get(), pkts, 2, &duplicates, [](Packet& p) {
    return AggMetaOf<ToyOp>(p).op != kToyFlush;
  });
  EXPECT_EQ(live, 1u);
  EXPECT_EQ(AggMetaOf<ToyOp>(*pkts[0]).op, kToyClaim);
}

TEST_F(AggKernelTest, CountCompletesAtTheFanInThenTheFlagTakesOver) {
  auto reg = Array("count", 8);
  ToyCounters counters;
  Packet& claim = Make(kToyClaim, 0b011, 3);
  Count(reg.get(), claim, counters);
  EXPECT_TRUE(claim.meta.consumed);
  EXPECT_FALSE(Meta(claim).write_out);
  EXPECT_EQ(*reg->Read(1), 2u);
  Packet& add = Make(kToyAdd, 0b100, 3);
  Count(reg.get(), add, counters);
  EXPECT_TRUE(Meta(add).write_out);
  EXPECT_FALSE(add.meta.consumed);
  EXPECT_EQ(*reg->Read(1), 0x83u);  // 3 workers, the done flag
  Packet& late = Make(kToyAdd, 0b1000, 3);
  Count(reg.get(), late, counters);  // TakesAdd refuses: OtherCount's op
  EXPECT_EQ(Meta(late).op, kToyLate);
  EXPECT_FALSE(late.meta.consumed);
  EXPECT_EQ(*reg->Read(1), 0x83u);
  EXPECT_EQ(counters.claimed, 1u);
  EXPECT_EQ(counters.aggregated, 1u);
  EXPECT_EQ(counters.completed, 1u);
}

TEST_F(AggKernelTest, CountSaturatesAtSevenBits) {
  auto reg = Array("count", 8);
  ToyCounters counters;
  Packet& claim = Make(kToyClaim, ~uint64_t{0}, 0);  // 64 workers, fan-in 0: complete at once
  Count(reg.get(), claim, counters);
  Packet& add = Make(kToyAdd, ~uint64_t{0} >> 1, 0);
  Count(reg.get(), add, counters);  // done: refused
  EXPECT_EQ(*reg->Read(1), 0xC0u);
  ASSERT_TRUE(reg->Write(1, 100).ok());
  Packet& more = Make(kToyAdd, ~uint64_t{0}, 200);
  Count(reg.get(), more, counters);
  EXPECT_EQ(*reg->Read(1), 0x7Fu);  // 100 + 64 saturates at 127
  EXPECT_TRUE(more.meta.consumed);
}

}  // namespace
}  // namespace swemu
