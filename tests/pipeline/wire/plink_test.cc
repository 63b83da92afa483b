// PLink's probe and chunk header (pipeline/wire/plink.h): encode/decode round trip, byte order,
// and what Decode refuses.
#include "pipeline/wire/plink.h"

#include <gtest/gtest.h>

#include <array>

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

TEST(PlinkHeader, ShortOtherVersionAndUnknownTypeAreRefused) {
  std::array<uint8_t, kPlinkHeaderLen> b{};
  PlinkFields().Encode(b.data());
  EXPECT_TRUE(PlinkFields::Decode(b.data(), b.size()).has_value());
  EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size() - 1).has_value());
  b[0] = 0x20;
  EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size()).has_value());
  b[0] = 0x13;
  EXPECT_FALSE(PlinkFields::Decode(b.data(), b.size()).has_value());
}

}  // namespace
}  // namespace swemu
