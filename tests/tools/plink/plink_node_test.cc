// swemu-plink node as processes on one machine over loopback (no switch: each node's datagrams
// reach the others directly): four nodes in two groups give exact sums under 2LHA and under flat
// aggregation; a second node under a name already running is refused; a node whose peers are
// missing, or whose job file is not theirs, ends with one line within its timeout; bad input
// (with --port, a MAC the node's frames need given as learn) ends with one line, exit 2, before
// any output. The same command through switches in namespaces: plink_netns_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";

std::string Dir() {
  const std::string dir = TestDirFor("plink_node_");
  std::filesystem::create_directories(dir);
  return dir;
}

// A four-node job in two groups on loopback addresses; `port` keeps tests that run at once apart.
std::string WriteJob(const std::string& dir, const std::string& name, int port, int id = 1,
                     const std::string& plan = "2lha") {
  const std::string path = dir + name;
  std::ofstream(path) << "[job]\nid = " << id << "\nport = " << port
                      << "\nfloats = 50000\nchunk = 8KB\nplan = " << plan
                      << "\n"
                         "node = h0 02:00:00:00:03:00 127.0.4.1 rack0\n"
                         "node = h1 02:00:00:00:03:01 127.0.4.2 rack0\n"
                         "node = h2 02:00:00:00:03:02 127.0.4.3 rack1\n"
                         "node = h3 02:00:00:00:03:03 127.0.4.4 rack1\n";
  return path;
}

// A shell fragment running swemu-plink ARGS in the background, its output in DIR/TAG.out, .err
// and its exit status in DIR/TAG.rc.
std::string Background(const std::string& dir, const std::string& tag, const std::string& args) {
  return "(" + kPlink + " " + args + " >" + dir + tag + ".out 2>" + dir + tag + ".err; echo $? >" +
         dir + tag + ".rc) & ";
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void ExpectFourNodesExact(const std::string& plan, int port) {
  const std::string dir = Dir() + plan + "_";
  const std::string job = WriteJob(dir, "plink.job", port, 1, plan);
  std::string script = "{ ";
  for (const char* h : {"h0", "h1", "h2", "h3"}) {
    script += Background(dir, h, "node --job " + job + " --name " + h + " --iterations 3");
  }
  RunResult run = RunCommandIn(Dir(), script + "wait; }");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* h : {"h0", "h1", "h2", "h3"}) {
    const std::string out = ReadText(dir + h + ".out");
    EXPECT_EQ(ReadText(dir + h + ".rc"), "0\n") << h << ": " << ReadText(dir + h + ".err");
    EXPECT_NE(out.find(plan == "flat" ? "flat aggregation" : "2LHA over 2 groups"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("iteration 2: "), std::string::npos) << out;
    EXPECT_EQ(Count(out, "every sum exact"), 3) << out;
    EXPECT_EQ(out.find("WRONG"), std::string::npos) << out;
  }
}

TEST(PlinkNode, FourNodesInTwoGroupsGiveExactSums) { ExpectFourNodesExact("2lha", 19261); }

TEST(PlinkNode, FlatAggregationGivesExactSums) { ExpectFourNodesExact("flat", 19262); }

TEST(PlinkNode, ASecondNodeUnderATakenNameIsRefused) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "plink.job", 19263);
  RunResult run = RunCommandIn(
      dir, "{ " + Background(dir, "h0", "node --job " + job + " --name h0 --timeout 2s") +
               "sleep 0.5; " + kPlink + " node --job " + job + " --name h0; echo $?; wait; }");
  EXPECT_EQ(run.out, "2\n") << run.err;
  EXPECT_EQ(Count(run.err, "\n"), 1) << run.err;
  EXPECT_NE(run.err.find("127.0.4.1:19263 is taken"), std::string::npos) << run.err;
  // The first one ran on, alone, until its timeout.
  EXPECT_EQ(ReadText(dir + "h0.rc"), "1\n");
}

TEST(PlinkNode, MissingPeersEndWithOneLineWithinTheTimeout) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "plink.job", 19264);
  const auto start = std::chrono::steady_clock::now();
  RunResult run = RunCommandIn(dir, kPlink + " node --job " + job + " --name h2 --timeout 1s");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(run.status, 1);
  EXPECT_LT(seconds, 3.0);
  EXPECT_EQ(Count(run.err, "\n"), 1) << run.err;
  EXPECT_NE(run.err.find("node h2: iteration 0: not done in 1 s"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("chunks from 0 of 3 other nodes"), std::string::npos) << run.err;
}

TEST(PlinkNode, AJobFileNotThePeersEndsWithOneLine) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "plink.job", 19265);
  const std::string other = WriteJob(dir, "other.job", 19265, 2);
  std::string script = "{ ";
  for (const char* h : {"h0", "h1", "h2"}) {
    script += Background(dir, h, "node --job " + job + " --name " + h + " --timeout 2s");
  }
  script +=
      kPlink + " node --job " + other + " --name h3 --timeout 2s >/dev/null; echo $?; wait; }";
  RunResult run = RunCommandIn(dir, script);
  EXPECT_EQ(run.out, "1\n") << run.err;
  EXPECT_EQ(Count(run.err, "\n"), 1) << run.err;
  EXPECT_NE(run.err.find("node h3: iteration 0: not done in 2 s"), std::string::npos) << run.err;
  for (const char* h : {"h0", "h1", "h2"}) EXPECT_EQ(ReadText(dir + h + ".rc"), "1\n") << h;
}

TEST(PlinkNode, BadInputEndsWithOneLineBeforeAnyOutput) {
  const std::string dir = Dir();
  const std::string job = WriteJob(dir, "plink.job", 19266);
  std::ofstream(dir + "far.job") << "[job]\nid = 1\nfloats = 64\n"
                                    "node = a 02:00:00:00:00:01 192.0.2.1 r0\n"
                                    "node = b 02:00:00:00:00:02 192.0.2.2 r0\n";
  std::ofstream(dir + "broken.job") << "[job]\nid = 1\nfloats = 64\nnode = a x 1.2.3.4 r0\n";
  // A DPDK node writes whole frames: b's MAC unknown is refused unless a sends through a router.
  std::ofstream(dir + "learn.job") << "[job]\nid = 1\nfloats = 64\n"
                                      "node = a 02:00:00:00:00:01 192.0.2.1 r0\n"
                                      "node = b learn 192.0.2.2 r0\n"
                                      "node = c learn 192.0.2.3 r1 gw_mac=02:00:00:00:00:fe\n";
  const struct {
    std::string args, want;
  } cases[] = {
      {"node --job " + job + " --name h9", "--name h9: not a node of"},
      {"node --job " + dir + "far.job --name a", "192.0.2.1, not an address of this machine"},
      {"node --job " + dir + "nothing.job --name a", "--job"},
      {"node --job " + dir + "broken.job --name a", "plink job line 4"},
      {"node --job " + job + " --name h0 --rto 0", "--rto"},
      {"node --job " + job + " --name h0 --iterations 256", "--iterations"},
      {"node --job " + job + " --name h0 --timeout x", "--timeout"},
      {"node --job " + job + " --name h0 --rate fast", "--rate"},
      {"node --job " + job, "--name is required"},
      {"node --job " + dir + "learn.job --name a --port net_null0",
       "--port: the job file gives b's MAC as learn"},
      {"node --job " + dir + "learn.job --name c --port net_null0",
       "--port: the job file gives c's MAC as learn"},
  };
  for (const auto& c : cases) {
    RunResult run = RunCommandIn(dir, kPlink + " " + c.args);
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.err;
    EXPECT_EQ(run.out, "") << c.args;
    EXPECT_EQ(Count(run.err, "\n"), 1) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.want), std::string::npos) << c.args << ": " << run.err;
  }
}

}  // namespace
}  // namespace swemu::testing
