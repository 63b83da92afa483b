// The PCN-START/ACK encoding in the TOS byte (pipeline/wire/pcn.h), every threshold value.
#include "pipeline/wire/pcn.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

TEST(PcnTos, ThePapersExampleIs0x8A) {
  EXPECT_EQ((PcnTos{true, false, 10}.Encode(kEcnEct0)), 0x8A);
  EXPECT_EQ(PcnTos::Decode(0x8A), (PcnTos{true, false, 10}));
}

TEST(PcnTos, EveryThresholdWithEveryEcnRoundTrips) {
  for (uint32_t h = 0; h <= kPcnMaxThreshold; h += kPcnThresholdStep) {
    ASSERT_TRUE(PcnThresholdEncodable(h));
    for (bool start : {false, true}) {
      for (bool ack : {false, true}) {
        for (uint8_t ecn = 0; ecn < 4; ++ecn) {
          const PcnTos pcn{start, ack, h};
          const uint8_t tos = pcn.Encode(ecn);
          EXPECT_EQ(TosEcn(tos), ecn);  // bits 1..0 untouched
          EXPECT_EQ(PcnTos::Decode(tos), pcn) << int{tos};
          // A CE mark on the way does not change what the next hop reads.
          EXPECT_EQ(PcnTos::Decode(TosWithEcn(tos, kEcnCe)), pcn);
        }
      }
    }
  }
}

TEST(PcnTos, OnlyMultiplesOfFiveUpTo75AreEncodable) {
  EXPECT_FALSE(PcnThresholdEncodable(80));
  EXPECT_FALSE(PcnThresholdEncodable(12));
  EXPECT_TRUE(PcnThresholdEncodable(0));
  EXPECT_TRUE(PcnThresholdEncodable(75));
}

TEST(PcnTos, OrdinaryDscpValuesReadAsPcnBits) {
  // Why a switch must scope what it reads as PCN: EF and Linux's ICMP errors set bit 7.
  EXPECT_EQ(PcnTos::Decode(0xB8), (PcnTos{true, false, 70}));  // DSCP EF
  EXPECT_EQ(PcnTos::Decode(0xC0), (PcnTos{true, true, 0}));    // CS6
}

}  // namespace
}  // namespace swemu
