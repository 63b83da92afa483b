// swemu-plink publish: a topology's hosts become the nodes of plink.job, in the file's order,
// with their addresses, grouped by the switch they are on; bad input ends with one line, exit 2,
// before any output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kPlink = SWEMU_BINARY_DIR "/tools/swemu-plink";
const std::string kLeafSpine = SWEMU_SOURCE_DIR "/configs/leaf_spine.topo";

TEST(PlinkPublish, TheLeafSpinesHostsAreNodesGroupedByTheirLeaf) {
  const std::string dir = TestDirFor("plink_publish_");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunResult run = RunCommandIn(dir, kPlink + " publish --topology " + kLeafSpine +
                                        " --id 4 --port 9300 --floats 1000 --chunk 1KiB "
                                        "--out-dir " +
                                        dir + "job");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("job 4, 4 nodes in 2 groups (2LHA), 1000 floats in 4 chunks, port 9300"),
            std::string::npos)
      << run.out;
  const std::string job = ReadText(dir + "job/plink.job");
  EXPECT_NE(job.find("[job]\nid = 4\nport = 9300\nfloats = 1000\nchunk = 1024\nplan = 2lha\n"
                     "node = h0 00:00:00:00:01:01 10.0.1.1 leaf1 gw_mac=00:00:00:00:01:fe\n"
                     "node = h1 00:00:00:00:01:02 10.0.1.2 leaf1 gw_mac=00:00:00:00:01:fe\n"
                     "node = h2 00:00:00:00:02:01 10.0.2.1 leaf2 gw_mac=00:00:00:00:02:fe\n"
                     "node = h3 00:00:00:00:02:02 10.0.2.2 leaf2 gw_mac=00:00:00:00:02:fe\n"),
            std::string::npos)
      << job;
}

TEST(PlinkPublish, BadInputEndsWithOneLineBeforeAnyOutput) {
  const std::string dir = TestDirFor("plink_publish_");
  std::filesystem::create_directories(dir);
  const struct {
    std::string args, want;
  } cases[] = {
      {"", "--topology is required"},
      {"--topology " + dir + "none.topo", "--topology"},
      {"--topology " SWEMU_SOURCE_DIR "/configs/plink_datacenter.topo",
       "host h0 has no ip= (every node needs ip=A.B.C.D/LEN"},
      {"--topology " + kLeafSpine + " --chunk 6", "--chunk 6: whole floats"},
      {"--topology " + kLeafSpine + " --plan tree", "--plan tree: 2lha or flat"},
      {"--topology " + kLeafSpine + " --id 256", "--id"},
      {"--topology " + kLeafSpine + " --floats 0", "--floats"},
  };
  for (const auto& c : cases) {
    RunResult run = RunCommandIn(dir, kPlink + " publish " + c.args + " --out-dir " + dir + "o");
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.err;
    EXPECT_EQ(run.out, "") << c.args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << c.args << ": " << run.err;
    EXPECT_NE(run.err.find(c.want), std::string::npos) << c.args << ": " << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "o/plink.job")) << c.args;
  }
}

}  // namespace
}  // namespace swemu::testing
