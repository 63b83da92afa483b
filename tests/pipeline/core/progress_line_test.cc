#include "pipeline/core/progress_line.h"

#include <gtest/gtest.h>

#include <sstream>

namespace swemu {
namespace {

TEST(ProgressLineTest, TextGivesTheShareAndTheTimeLeftAtTheSamePace) {
  EXPECT_EQ(ProgressLine::Text("pass 1/6", 0, 3), "pass 1/6 0%");
  EXPECT_EQ(ProgressLine::Text("pass 1/6", 0.25, 10), "pass 1/6 25%, 30 s left");
  EXPECT_EQ(ProgressLine::Text("x", 0.5, 200), "x 50%, 3 min 20 s left");
  EXPECT_EQ(ProgressLine::Text("x", 0.1, 500), "x 10%, 1 h 15 min left");
  EXPECT_EQ(ProgressLine::Text("x", 1, 9), "x 100%");
}

TEST(ProgressLineTest, OnATerminalRewritesInPlaceAtMostFourTimesASecondAndClears) {
  std::ostringstream out;
  {
    ProgressLine line(out, true);
    line.Update("run", 0.5, 1.0);
    line.Update("run", 0.6, 1.1);  // too soon: not drawn
    line.Update("run", 0.9, 1.5);
    EXPECT_EQ(out.str(), "\rrun 50%, 1 s left\rrun 90%, 0 s left");
    line.Clear();
    EXPECT_EQ(out.str().substr(out.str().size() - 19), "\r" + std::string(17, ' ') + "\r");
    out.str("");
    line.Update("run", 0.95, 1.6);  // after Clear, drawn at once
    EXPECT_EQ(out.str(), "\rrun 95%, 0 s left");
    out.str("");
  }
  EXPECT_EQ(out.str(), "\r" + std::string(17, ' ') + "\r");  // erased when it goes
}

TEST(ProgressLineTest, ALongerLineBeforeIsBlankedOver) {
  std::ostringstream out;
  ProgressLine line(out, true);
  line.Update("a long label", 0.5, 1);
  out.str("");
  line.Update("b", 0.5, 2);
  EXPECT_EQ(out.str(), "\rb 50%, 2 s left" + std::string(11, ' '));
}

TEST(ProgressLineTest, WritesNothingWhenNotATerminal) {
  std::ostringstream out;
  {
    ProgressLine line(out, false);
    line.Update("run", 0.5, 1);
    line.Update("run", 0.9, 5);
    line.Clear();
  }
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace swemu
