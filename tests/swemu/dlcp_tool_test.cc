// swemu-dlcp thresholds as users run it: Appendix B's plan for a bundled model, whose printed
// commands a dlcp switch takes as they are; bad options and files end with one line, exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/programs/dlcp.h"
#include "tests/pipeline/switch_harness.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kDlcp = SWEMU_BINARY_DIR "/tools/swemu-dlcp";

std::string Dir() {
  const std::string dir = TestDirFor("dlcp_tool_");
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(DlcpTool, ThePrintedCommandsInstallThePlan) {
  RunResult run = RunCommandIn(Dir(), kDlcp + " thresholds --model ResNet50 --load 1.2");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("ResNet50: DLCP thresholds"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("buffer 341 packets"), std::string::npos) << run.out;  // 512 KB / 1500
  SwitchConfig config;
  config.program = "dlcp";
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  std::istringstream lines(run.out);
  int commands = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find_first_not_of(' ');
    if (at == std::string::npos) continue;
    const std::string cmd = line.substr(at);
    if (cmd.starts_with("dlcp_thresholds") || cmd.starts_with("set_red_threshold") ||
        cmd.starts_with("set_queue_depth")) {
      Result<std::string> r = h.Cmd(cmd);
      EXPECT_TRUE(r.ok()) << cmd << ": " << r.message();
      ++commands;
    }
  }
  EXPECT_EQ(commands, 15);  // the fit, then S_i and L_i queue by queue
}

TEST(DlcpTool, BadOptionsAndFilesEndWithOneLine) {
  const std::string dir = Dir();
  std::ofstream(dir + "empty.txt") << "";
  for (const std::string& args :
       {std::string(""), std::string("bogus"), std::string("thresholds --theta 1"),
        std::string("thresholds --load 0"), std::string("thresholds --load x"),
        std::string("thresholds --buffer 1KB"), std::string("thresholds --model gpt"),
        std::string("thresholds --layers " + dir), std::string("thresholds --layers /dev/zero"),
        std::string("thresholds --layers " + dir + "empty.txt"),
        std::string("thresholds --tol-small 200%"), std::string("thresholds stray"),
        std::string("sim --tors 1"), std::string("sim --rto-min 0"), std::string("sim --bound x"),
        std::string("sim --model gpt"), std::string("sim --bogus"), std::string("sim --pull-bound 100%"),
        std::string("sim --load 0"), std::string("sim --load x"),
        std::string("realtime --senders 0"), std::string("realtime --bytes x"),
        std::string("realtime --host-rate 0")}) {
    RunResult run = RunCommandIn(dir, kDlcp + " " + args);
    EXPECT_EQ(run.status, 2) << args;
    if (!args.empty()) {
      EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    }
  }
}

// The real-time smoke run: a swemu child on vhost-user ports, DLCP hosts on virtio_user.
TEST(DlcpTool, TheRealTimeIncastCompletes) {
  const std::string dir = Dir();
  RunResult run = RunCommandIn(dir, kDlcp + " realtime --senders 2 --bytes 300KB --out-dir " + dir +
                                        "rt");
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("sender 0 (front layers):"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("sender 1 (back layers):"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '%'), 3) << run.out;  // bound + 2 flows
}

}  // namespace
}  // namespace swemu::testing
