// swemu-pcn threshold as users run it: the paper's link gives 40 and 10 and the START byte 0x8A;
// bad options end with one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPcn = SWEMU_BINARY_DIR "/tools/swemu-pcn";

std::string Dir() {
  const std::string dir = TestDirFor("pcn_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(PcnTool, ThePapersLinkGivesFortyAndTen) {
  RunResult run = RunCommandIn(Dir(), kPcn + " threshold --rtt 7690us --rate 100M");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("= 37.00 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("h_initial = 40 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("-> 10 packets"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("PCN-START TOS: 0x8A with ECT(0)"), std::string::npos) << run.out;
  RunResult half = RunCommandIn(Dir(), kPcn + " threshold --rtt 7690us --rate 100M --k 0.5");
  EXPECT_NE(half.out.find("-> 20 packets"), std::string::npos) << half.out;
}

TEST(PcnTool, BadOptionsEndWithOneLine) {
  for (const std::string& args :
       {std::string(""), std::string("bogus"), std::string("threshold"),
        std::string("threshold --rtt 1ms"), std::string("threshold --rtt 0 --rate 1G"),
        std::string("threshold --rtt 1ms --rate fast"), std::string("threshold --rtt 1ms --rate 1G --k 1"),
        std::string("threshold --rtt 1ms --rate 1G --k x"), std::string("threshold --rtt 1ms --rate 1G --flows 0"),
        std::string("threshold --rtt 1ms --rate 1G stray"), std::string("threshold --rtt 1s --rate 10G --k 0.9")}) {
    RunResult run = RunCommandIn(Dir(), kPcn + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
      EXPECT_EQ(run.err.rfind("swemu-pcn", 0), 0u) << run.err;
    }
  }
}

}  // namespace
}  // namespace swemu::testing
