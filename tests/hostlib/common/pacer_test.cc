// HostPacer (hostlib/common/pacer.h): serialization gaps rounded per frame, the next slot from the
// later of the last one and now, and the exactness of the double quotient its callers rely on
// (the model TCP computed the gap in integers).
#include "hostlib/common/pacer.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace swemu {
namespace {

TEST(HostPacer, GapIsTheSerializationTime) {
  HostPacer down;
  HostPacer up(HostPacer::Rounding::kUp);
  EXPECT_EQ(down.Gap(1500, 1e9), 12'000u);
  EXPECT_EQ(down.Gap(1538, 1e9), 12'304u);
  EXPECT_EQ(down.Gap(1538, 3e9), 4'101u);  // 4101.33
  EXPECT_EQ(up.Gap(1538, 3e9), 4'102u);
  EXPECT_EQ(up.Gap(1500, 1e9), 12'000u);  // exact: no rounding up
  EXPECT_EQ(down.Gap(1500, 0), 0u);       // unpaced
}

TEST(HostPacer, NextSlotFollowsTheLastOrNow) {
  HostPacer p;
  EXPECT_TRUE(p.Ready(0));
  p.OnSend(1'000, 1500, 1e9);
  EXPECT_EQ(p.next_ns(), 13'000u);
  EXPECT_FALSE(p.Ready(12'999));
  EXPECT_TRUE(p.Ready(13'000));
  p.OnSend(13'000, 1500, 1e9);  // back to back
  EXPECT_EQ(p.next_ns(), 25'000u);
  p.OnSend(100'000, 1500, 2e9);  // idle since: no credit, and the new rate
  EXPECT_EQ(p.next_ns(), 106'000u);
  p.OnSend(100'000, 1500, 0);  // unpaced: not before now, no gap
  EXPECT_EQ(p.next_ns(), 106'000u);
}

TEST(HostPacer, RestartAndCatchUp) {
  HostPacer p;
  p.Restart(50'000);
  EXPECT_FALSE(p.Ready(49'999));
  p.CatchUp(10'000);
  EXPECT_EQ(p.next_ns(), 50'000u);
  p.CatchUp(70'000);
  EXPECT_EQ(p.next_ns(), 70'000u);
  p.Restart(0);
  EXPECT_EQ(p.next_ns(), 0u);
}

TEST(HostPacer, GapsAreRoundedEachWithoutCarry) {
  HostPacer p;
  for (int i = 0; i < 3; ++i) p.OnSend(0, 1538, 3e9);
  EXPECT_EQ(p.next_ns(), 3 * 4'101u);  // 12303, not 12304: the callers' behaviour
}

TEST(HostPacer, RoundedDownEqualsIntegerDivision) {
  HostPacer p;
  uint64_t state = 88172645463325252ull;  // xorshift64
  for (int i = 0; i < 200'000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const uint64_t bytes = 60 + state % 9'000;
    const uint64_t rate = 1'000 + (state >> 16) % 400'000'000'000ull;
    ASSERT_EQ(p.Gap(bytes, static_cast<double>(rate)), bytes * 8 * 1'000'000'000 / rate)
        << bytes << " B at " << rate;
  }
}

}  // namespace
}  // namespace swemu
