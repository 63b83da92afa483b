// The helpers from which commands build their merge rule over several replicas.
#include "pipeline/control/answer_merge.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

TEST(AnswerMergeTest, SumNumbersAddsEveryNumberOfEveryLine) {
  EXPECT_EQ(SumNumbers()({"a 1, b 2\nc 3\n", "a 10, b 20\nc 30\n"}), "a 11, b 22\nc 33\n");
  EXPECT_EQ(SumNumbers()({"", ""}), "");
}

TEST(AnswerMergeTest, NumbersInsideWordsAreText) {
  EXPECT_EQ(SumNumbers()({"ipv4 10G rx 5", "ipv4 10G rx 6"}), "ipv4 10G rx 11");
  EXPECT_EQ(CountNumbers("ipv4 10G port_rx[3] 5"), 2u);
}

TEST(AnswerMergeTest, SumAllButLastKeepsTheConfiguration) {
  EXPECT_EQ(
      MergeEachLine(SumAllButLast(2))({"used 3, size 64, lanes 8", "used 4, size 64, lanes 8"}),
      "used 7, size 64, lanes 8");
}

TEST(AnswerMergeTest, AnotherShapeGivesReplicaZerosAnswer) {
  EXPECT_EQ(SumNumbers()({"a 1\nb 2\n", "a 1\n"}), "a 1\nb 2\n");
  EXPECT_EQ(SumNumbers()({"a 1\n", "b 1\n"}), "a 1\n");
}

TEST(AnswerMergeTest, OwnedRowsTakesKeyKFromReplicaKModN) {
  const std::vector<std::string> answers = {"x\nport 0: a\nport 1: stale\nport 2: c\n",
                                            "port 1: b\nport 3: d\nport 2: stale\n"};
  EXPECT_EQ(OwnedRows(answers, "port "), "port 0: a\nport 1: b\nport 2: c\nport 3: d\n");
}

TEST(AnswerMergeTest, CountNumbersCountsWords) {
  EXPECT_EQ(CountNumbers("dmac[3]= 4 5"), 3u);
  EXPECT_EQ(CountNumbers("ipv4"), 0u);
}

}  // namespace
}  // namespace swemu
