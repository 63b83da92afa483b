// The switch's own drop reasons and those a program registers by name.
#include "pipeline/core/drop_reason.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

const DropReason kMine = RegisterDropReason("test_program_reason");

TEST(DropReasonTest, TheSwitchsOwnReasonsHaveTheirNames) {
  EXPECT_EQ(DropReasonName(DropReason::kNone), "none");
  EXPECT_EQ(DropReasonName(DropReason::kTableMiss), "table_miss");
  EXPECT_EQ(DropReasonName(DropReason::kShardMulticast), "shard_multicast");
}

TEST(DropReasonTest, AProgramsReasonGetsAnIdAfterTheSwitchsOwn) {
  EXPECT_GE(static_cast<std::size_t>(kMine),
            static_cast<std::size_t>(DropReason::kFirstProgramReason));
  EXPECT_LT(static_cast<std::size_t>(kMine), kDropReasonCount);
  EXPECT_EQ(DropReasonName(kMine), "test_program_reason");
}

TEST(DropReasonTest, OneNameOneId) {
  EXPECT_EQ(RegisterDropReason("test_program_reason"), kMine);
  const DropReason other = RegisterDropReason("test_other_reason");
  EXPECT_NE(other, kMine);
  EXPECT_EQ(DropReasonName(other), "test_other_reason");
}

TEST(DropReasonTest, AnIdNobodyRegisteredHasNoName) {
  EXPECT_EQ(DropReasonName(static_cast<DropReason>(kDropReasonCount - 1)), "");
  EXPECT_EQ(DropReasonName(static_cast<DropReason>(kDropReasonCount)), "");
}

TEST(DropReasonDeathTest, TheSwitchsOwnNameIsRefused) {
  EXPECT_DEATH(RegisterDropReason("table_miss"), "the switch's own reason");
}

}  // namespace
}  // namespace swemu
