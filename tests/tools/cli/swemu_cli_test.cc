// Runs the built swemu-cli binary against a ControlServer in this process: one-shot exit
// statuses 0/1/2, piped scripts, TCP.
#include <sys/wait.h>

#include <fstream>

#include "tests/swemu/control_fixture.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kCli = SWEMU_BINARY_DIR "/tools/swemu-cli";

class SwemuCliTest : public ControlTest {
 protected:
  // `args` are shell words; stdin is `input` (never a terminal).
  RunResult Run(const std::string& args, const std::string& input = "") {
    std::ofstream(dir_ + "/stdin") << input;
    return RunCommandIn(dir_ + "/", kCli + " " + args, dir_ + "/stdin");
  }
};

TEST_F(SwemuCliTest, OneShotSuccessPrintsTheOutputAndExits0) {
  StartServer();
  RunResult add = Run("--socket " + path_ + " table_add dmac forward 00:00:00:00:00:0b '=>' 1");
  EXPECT_EQ(add.status, 0) << add.err;
  EXPECT_EQ(add.out, "Entry has been added with handle 0\n");
  EXPECT_EQ(add.err, "");
  RunResult dump = Run("-s " + path_ + " 'table_dump dmac'");
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find("00:00:00:00:00:0b"), std::string::npos) << dump.out;
}

TEST_F(SwemuCliTest, FailedCommandPrintsItsErrorAndExits1) {
  StartServer();
  RunResult run = Run("--socket " + path_ + " no_such_command");
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "swemu-cli: unknown command: no_such_command\n");
}

TEST_F(SwemuCliTest, NoServerIsOneLineAndExit2) {
  RunResult run = Run("--socket " + path_ + " show stats");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err, "swemu-cli: cannot connect to " + path_ + ": No such file or directory (is swemu running in real time with this control socket? "
            "--offline runs have none)\n");
}

TEST_F(SwemuCliTest, UsageProblemsExit2) {
  RunResult run = Run("--no-such-option");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.err.rfind("swemu-cli: ", 0), 0u) << run.err;
  RunResult both = Run("--socket " + path_ + " --tcp 1234 help");
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err, "swemu-cli: --socket and --tcp exclude each other\n");
}

TEST_F(SwemuCliTest, PipedScriptRunsEveryLineWithoutPrompt) {
  StartServer();
  RunResult run = Run("--socket " + path_,
                      "# setup\n"
                      "table_add dmac forward 00:00:00:00:00:0b => 1\n"
                      "\n"
                      "table_add dmac forward 00:00:00:00:00:0c => 2\n");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "Entry has been added with handle 0\nEntry has been added with handle 1\n");
  EXPECT_EQ(run.err, "");
}

TEST_F(SwemuCliTest, PipedScriptWithAFailureGoesOnAndExits1) {
  StartServer();
  RunResult run = Run("--socket " + path_,
                      "table_add dmac fwd 00:00:00:00:00:0b => 1\n"
                      "table_add dmac forward 00:00:00:00:00:0c => 2\n"
                      "quit\n"
                      "table_add dmac forward 00:00:00:00:00:0d => 3\n");
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.out, "Entry has been added with handle 0\n");
  EXPECT_EQ(run.err.rfind("swemu-cli: line 1: table_add: ", 0), 0u) << run.err;
  const std::string dump = Must("table_dump dmac");
  EXPECT_NE(dump.find("00:00:00:00:00:0c"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("00:00:00:00:00:0d"), std::string::npos) << dump;  // after quit
}

TEST_F(SwemuCliTest, OneShotOverTcp) {
  StartServer(0600, "0");
  RunResult run = Run("--tcp " + server_->tcp_endpoint() + " 'table_dump dmac'");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("dmac"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace swemu::testing
