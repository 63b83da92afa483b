#include "pipeline/control/units.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

TEST(UnitsTest, ParsesUnsignedIntegers) {
  EXPECT_EQ(*ParseUint("42"), 42u);
  EXPECT_EQ(*ParseUint("0x1f"), 31u);
  EXPECT_FALSE(ParseUint("").ok());
  EXPECT_FALSE(ParseUint("-1").ok());
  EXPECT_FALSE(ParseUint("12a").ok());
  Result<uint64_t> r = ParseUint("9", 0, 8);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "\"9\" is out of range [0, 8]");
}

TEST(UnitsTest, ParsesRates) {
  EXPECT_EQ(*ParseRate("10G"), 10'000'000'000u);
  EXPECT_EQ(*ParseRate("100M"), 100'000'000u);
  EXPECT_EQ(*ParseRate("1.5Gbps"), 1'500'000'000u);
  EXPECT_EQ(*ParseRate("2500"), 2500u);
  EXPECT_EQ(*ParseRate("0"), 0u);
  EXPECT_FALSE(ParseRate("fast").ok());
  Result<uint64_t> r = ParseRate("10Q");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "\"10Q\" has an unknown rate unit (use K, M, G or T)");
}

TEST(UnitsTest, ParsesSizes) {
  EXPECT_EQ(*ParseBytes("1500"), 1500u);
  EXPECT_EQ(*ParseBytes("64KB"), 64'000u);
  EXPECT_EQ(*ParseBytes("64KiB"), 65'536u);
  EXPECT_EQ(*ParseBytes("16MiB"), 16u << 20);
  EXPECT_FALSE(ParseBytes("1.5B").ok());
  EXPECT_FALSE(ParseBytes("12 parsecs").ok());
}

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(*ParseDuration("500"), 500u);
  EXPECT_EQ(*ParseDuration("2us"), 2000u);
  EXPECT_EQ(*ParseDuration("1.5ms"), 1'500'000u);
  EXPECT_EQ(*ParseDuration("1s"), 1'000'000'000u);
  EXPECT_FALSE(ParseDuration("3h").ok());
}

TEST(UnitsTest, ParsesBoolsAndProbabilities) {
  EXPECT_TRUE(*ParseBool("yes"));
  EXPECT_FALSE(*ParseBool("off"));
  EXPECT_FALSE(ParseBool("maybe").ok());
  EXPECT_DOUBLE_EQ(*ParseProbability("0.001"), 0.001);
  EXPECT_DOUBLE_EQ(*ParseProbability("1%"), 0.01);
  EXPECT_FALSE(ParseProbability("1.5").ok());
}

TEST(UnitsTest, FormatsRatesAndSizes) {
  EXPECT_EQ(FormatRate(10'000'000'000), "10G");
  EXPECT_EQ(FormatRate(0), "unlimited");
  EXPECT_EQ(FormatBytes(16 << 20), "16MiB");
  EXPECT_EQ(FormatBytes(1500), "1500B");
}

TEST(UnitsTest, FormatsCountsForPeopleInSiUnits) {
  EXPECT_EQ(FormatSi(7'211'648'000, "B"), "7.21 GB");
  EXPECT_EQ(FormatSi(69'000'000, ""), "69.0 M");
  EXPECT_EQ(FormatSi(512, "B"), "512 B");
  EXPECT_EQ(FormatSi(0, "B"), "0 B");
  EXPECT_EQ(FormatSi(999'999, "B"), "1.00 MB");  // rounding moves up a prefix, not to "1000 kB"
  EXPECT_EQ(FormatSi(1.5e15, "B"), "1.50 PB");
}

}  // namespace
}  // namespace swemu
