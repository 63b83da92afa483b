// swemu-goat worker and ps as processes on one machine over loopback (no switch: the workers'
// fragments reach the PS directly, which aggregates them): every sum exact; a second worker
// under a name already running is refused; a worker whose PS is missing, or whose job file is not
// the PS's, ends with one line within its timeout; bad input ends with one line, exit 2, before
// any output. The same commands through switches in namespaces: goat_netns_test.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kGoat = SWEMU_BINARY_DIR "/tools/swemu-goat";

std::string Dir() {
  const std::string dir = TestDirFor("goat_server_");
  std::filesystem::create_directories(dir);
  return dir;
}

// A two-worker job on loopback addresses; `port` keeps tests that run at once apart.
std::string WriteJob(const std::string& dir, const std::string& name, int port, int id = 1) {
  const std::string path = dir + name;
  std::ofstream(path) << "[job]\nid = " << id << "\nelements = 64\nport = " << port
                      << "\nk = 0\nfragments = 20,20,10\n"
                         "ps = ps 02:00:00:00:01:08 127.0.1.9\n"
                         "worker = w1 02:00:00:00:01:00 127.0.1.1 0,0,0\n"
                         "worker = w2 02:00:00:00:01:01 127.0.1.2 0,0,0\n";
  return path;
}

// A shell fragment running swemu-goat ARGS in the background, its output in DIR/TAG.out, .err
// and its exit status in DIR/TAG.rc.
std::string Background(const std::string& dir, const std::string& tag, const std::string& args) {
  return "(" + kGoat + " " + args + " >" + dir + tag + ".out 2>" + dir + tag + ".err; echo $? >" +
         dir + tag + ".rc) & ";
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(GoatServer, TwoWorkersAndThePsGiveExactSums) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "goat.job", 19161);
  RunResult run = RunCommandIn(
      dir, "{ " + Background(dir, "ps", "ps --job " + job + " --idle-exit 1s") + "sleep 0.3; " +
               Background(dir, "w1", "worker --job " + job + " --name w1 --rounds 2") +
               Background(dir, "w2", "worker --job " + job + " --name w2 --rounds 2") + "wait; }");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* w : {"w1", "w2"}) {
    const std::string out = ReadText(dir + w + ".out");
    EXPECT_EQ(ReadText(dir + w + ".rc"), "0\n") << w << ": " << ReadText(dir + w + ".err");
    EXPECT_NE(out.find("round 1: "), std::string::npos) << out;
    EXPECT_NE(out.find("2 workers counted"), std::string::npos) << out;
    EXPECT_EQ(out.find("WRONG"), std::string::npos) << out;
    size_t exact = 0;
    for (size_t at = out.find("every sum exact"); at != std::string::npos;
         at = out.find("every sum exact", at + 1)) {
      ++exact;
    }
    EXPECT_EQ(exact, 2u) << out;
  }
  const std::string ps = ReadText(dir + "ps.out");
  EXPECT_EQ(ReadText(dir + "ps.rc"), "0\n") << ReadText(dir + "ps.err");
  EXPECT_NE(ps.find("100 fragment-rounds completed"), std::string::npos) << ps;
}

TEST(GoatServer, ASecondWorkerUnderATakenNameIsRefused) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "goat.job", 19162);
  RunResult run = RunCommandIn(
      dir, "{ " + Background(dir, "w1", "worker --job " + job + " --name w1 --timeout 2s") +
               "sleep 0.5; " + kGoat + " worker --job " + job + " --name w1; echo $?; wait; }");
  EXPECT_EQ(run.out, "2\n") << run.err;
  EXPECT_EQ(Lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("127.0.1.1:19162 is taken"), std::string::npos) << run.err;
  // The first one ran on, alone, until its timeout.
  EXPECT_EQ(ReadText(dir + "w1.rc"), "1\n");
}

TEST(GoatServer, AMissingPsEndsWithOneLineWithinTheTimeout) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "goat.job", 19163);
  const auto start = std::chrono::steady_clock::now();
  RunResult run = RunCommandIn(dir, kGoat + " worker --job " + job + " --name w2 --timeout 1s");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.status, 1);
  EXPECT_LT(seconds, 3.0);
  EXPECT_EQ(Lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("round 0: no result of job 1 in 1 s"), std::string::npos) << run.err;
}

TEST(GoatServer, AJobFileNotThePssEndsWithOneLine) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "goat.job", 19164);
  const std::string other = WriteJob(dir, "other.job", 19164, 2);
  RunResult run =
      RunCommandIn(dir, "{ " + kGoat + " ps --job " + job + " >" + dir +
                            "ps.out 2>&1 & ps=$!; sleep 0.3; " + kGoat + " worker --job " + other +
                            " --name w1 --timeout 1s >/dev/null; echo $?; " + "kill $ps; wait; }");
  EXPECT_EQ(run.out, "1\n") << run.err;
  EXPECT_EQ(Lines(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("no result of job 2"), std::string::npos) << run.err;
}

TEST(GoatServer, BadInputEndsWithOneLineBeforeAnyOutput) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "goat.job", 19165);
  std::ofstream(dir + "far.job") << "[job]\nid = 1\nfragments = 2\nps = ps 02:00:00:00:01:08 "
                                    "192.0.2.9\nworker = w1 02:00:00:00:01:00 192.0.2.1 0\n";
  std::ofstream(dir + "broken.job") << "[job]\nid = 1\nfragments = 2\nworker = w1 x 1.2.3.4 0\n";
  std::ofstream(dir + "nomac.job") << "[job]\nid = 1\nfragments = 2\nps = ps 00:00:00:00:00:00 "
                                      "127.0.1.9\nworker = w1 02:00:00:00:01:00 127.0.1.1 0\n";
  const struct {
    std::string args, want;
  } cases[] = {
      {"worker --job " + job + " --name w9", "--name w9: not a worker"},
      {"worker --job " + dir + "far.job --name w1", "192.0.2.1, not an address of this machine"},
      {"ps --job " + dir + "far.job", "192.0.2.9, not an address of this machine"},
      {"worker --job " + dir + "nothing.job --name w1", "--job"},
      {"worker --job " + dir + "broken.job --name w1", "goat job line 4"},
      {"worker --job " + job + " --name w1 --rto 0", "--rto"},
      {"worker --job " + job + " --name w1 --bind 1.2.3", "--bind"},
      {"worker --job " + job, "name"},
      {"ps --job " + job + " --idle-exit x", "--idle-exit"},
      {"worker --job " + job + " --name w1 --port net_bogus0", "--port net_bogus0: "},
      {"ps --job " + job + " --port net_af_packet0,iface=nosuch0", "--port net_af_packet0"},
      {"worker --job " + job + " --name w1 --port net_null0 --bind 0.0.0.0", "--bind: not with"},
      {"worker --job " + dir + "nomac.job --name w1 --port net_null0", "gives ps's MAC as learn"},
  };
  for (const auto& c : cases) {
    RunResult run = RunCommandIn(dir, kGoat + " " + c.args);
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.err;
    EXPECT_EQ(run.out, "") << c.args;
    EXPECT_EQ(Lines(run.err), 1) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.want), std::string::npos) << c.args << ": " << run.err;
  }
}

}  // namespace
}  // namespace swemu::testing
