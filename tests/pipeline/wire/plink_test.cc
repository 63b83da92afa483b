// PLink's probe, chunk and chunk ack header (pipeline/wire/plink.h): encode/decode round trip,
// byte order, every type and schedule step, and what Decode refuses.
#include "pipeline/wire/plink.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <utility>

namespace swemu {
namespace {

TEST(PlinkHeader, RoundTripsEveryFieldBigEndian) {
  PlinkFields f;
  f.type = PlinkType::kChunk;
  f.flags = 0x5A;
  f.sender = 0x0102;
  f.receiver = 0x0304;
  f.epoch = 0x0506;
  f.seq = 0x0708090A;
  f.offset = 0x0B0C0D0E;
  f.stamp = 0x0F10111213141516ULL;
  std::array<uint8_t, kPlinkHeaderLen> b{};
  f.Encode(b.data());
  EXPECT_EQ(b[0], 0x12);  // version 1, type 2
  EXPECT_EQ(b[2], 0x01);
  EXPECT_EQ(b[8], 0x07);
  EXPECT_EQ(b[16], 0x0F);
  EXPECT_EQ(b[23], 0x16);
  EXPECT_EQ(PlinkFields::Decode(b.data(), b.size()), f);
}

TEST(PlinkHeader, EveryTypeDecodes) {
  for (PlinkType type : {PlinkType::kProbeRequest, PlinkType::kProbeReply, PlinkType::kChunk,
                         PlinkType::kChunkAck}) {
    PlinkFields f;
    f.type = type;
    std::array<uint8_t, kPlinkHeaderLen> b{};
    f.Encode(b.data());
    EXPECT_EQ(b[0], 0x10 | static_cast<uint8_t>(type));
    const std::optional<PlinkFields> decoded = PlinkFields::Decode(b.data(), b.size());
    ASSERT_TRUE(decoded.has_value()) << static_cast<int>(type);
    EXPECT_EQ(decoded->type, type);
  }
  EXPECT_EQ(kPlinkLastType, static_cast<uint8_t>(PlinkType::kChunkAck));
}

// A chunk ack carries the chunk's fields back, sender and receiver swapped, with its step in
// flags bits 1-0; every step survives the round trip in both.
TEST(PlinkHeader, RoundTripsTheStepOfChunksAndAcks) {
  for (PlinkStep step : {PlinkStep::kToLocalMaster, PlinkStep::kToGlobalMaster,
                         PlinkStep::kTotalToLocal, PlinkStep::kTotalToMember}) {
    const uint8_t bits = static_cast<uint8_t>(step);
    EXPECT_EQ(bits & kPlinkStepMask, bits);
    PlinkFields chunk{.type = PlinkType::kChunk,
                      .flags = bits,
                      .sender = 3,
                      .receiver = 9,
                      .epoch = 2,
                      .seq = 17,
                      .offset = 1024,
                      .stamp = 4096};
    PlinkFields ack = chunk;
    ack.type = PlinkType::kChunkAck;
    std::swap(ack.sender, ack.receiver);
    for (const PlinkFields& f : {chunk, ack}) {
      std::array<uint8_t, kPlinkHeaderLen> b{};
      f.Encode(b.data());
      EXPECT_EQ(b[1], bits);
      const std::optional<PlinkFields> decoded = PlinkFields::Decode(b.data(), b.size());
      ASSERT_TRUE(decoded.has_value());
      EXPECT_EQ(*decoded, f);
      EXPECT_EQ(static_cast<PlinkStep>(decoded->flags & kPlinkStepMask), step);
    }
  }
  EXPECT_EQ(static_cast<uint8_t>(PlinkStep::kToLocalMaster), 0);
  EXPECT_EQ(static_cast<uint8_t>(PlinkStep::kToGlobalMaster), 1);
  EXPECT_EQ(static_cast<uint8_t>(PlinkStep::kTotalToLocal), 2);
  EXPECT_EQ(static_cast<uint8_t>(PlinkStep::kTotalToMember), 3);
}

TEST(PlinkHeader, ShortOtherVersionAndUnknownTypeAreRefused) {
  std::array<uint8_t, kPlinkHeaderLen> b{};
  PlinkFields().Encode(b.data());
  EXPECT_TRUE(PlinkFields::Decode(b.data(), b.size()).has_value());
  EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size() - 1).has_value());
  b[0] = 0x20;
  EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size()).has_value());
  b[0] = 0x13;  // type 3, a chunk ack: the last known type
  EXPECT_TRUE(PlinkFields::Decode(b.data(), b.size()).has_value());
  for (int byte0 : {0x14, 0x1F}) {  // types 4 and 15
    b[0] = static_cast<uint8_t>(byte0);
    EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size()).has_value()) << byte0;
  }
}

}  // namespace
}  // namespace swemu
