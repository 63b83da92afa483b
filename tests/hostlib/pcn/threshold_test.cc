// PCN's Eq. (1) and (2) as swemu reads them (hostlib/pcn/threshold.h), with the paper's numbers.
#include "hostlib/pcn/threshold.h"

#include <gtest/gtest.h>

#include <cmath>

namespace swemu {
namespace {

TEST(PcnThreshold, InitialIsTheSmallestMultipleOfFiveStrictlyAboveTheBound) {
  EXPECT_EQ(PcnInitialThreshold(37.0), 40u);  // section 3.3: bound 37 -> 40
  EXPECT_EQ(PcnInitialThreshold(35.0), 40u);  // strict: 35 itself is not above 35
  EXPECT_EQ(PcnInitialThreshold(34.99), 35u);
  EXPECT_EQ(PcnInitialThreshold(0.0), 5u);
}

TEST(PcnThreshold, PcnIsKTimesTheInitialThreshold) {
  EXPECT_EQ(*PcnThreshold(40, 0.25), 10u);  // the paper's k = 1/4
  EXPECT_EQ(*PcnThreshold(40, 0.5), 20u);   // and k = 1/2
  EXPECT_EQ(*PcnThreshold(40, 0.3), 10u);   // 12 -> the nearest multiple of 5
  EXPECT_EQ(*PcnThreshold(50, 0.25), 15u);  // 12.5: halves go up
  EXPECT_EQ(*PcnThreshold(10, 0.1), 5u);    // never below 5
  EXPECT_FALSE(PcnThreshold(200, 0.5).ok());  // 100 does not fit the 4-bit field
  EXPECT_FALSE(PcnThreshold(40, 0).ok());
  EXPECT_FALSE(PcnThreshold(40, 1).ok());
  EXPECT_FALSE(PcnThreshold(40, std::nan("")).ok());
}

TEST(PcnThreshold, TheBoundOfThePapersLink) {
  // RTT * C = 96,129 B (the paper's bound 37 with N = 3 and swemu's MTU 1500): on 100 Mbit/s,
  // an RTT of 7.69 ms.
  PcnLink link;
  link.capacity_Bps = 100e6 / 8;
  link.rtt_s = 96129.0 / link.capacity_Bps;
  const Result<double> bound = PcnBound(link);
  ASSERT_TRUE(bound.ok());
  EXPECT_NEAR(*bound, 37.0, 0.01);
  EXPECT_EQ(PcnInitialThreshold(*bound), 40u);
  EXPECT_NEAR(link.rtt_s, 7.69e-3, 0.01e-3);
  for (PcnLink bad : {PcnLink{0, 1e6, 3, 1500}, PcnLink{1e-3, 0, 3, 1500},
                      PcnLink{1e-3, 1e6, 0, 1500}, PcnLink{1e-3, 1e6, 3, 0}}) {
    EXPECT_FALSE(PcnBound(bad).ok());
  }
}

}  // namespace
}  // namespace swemu
