// swemu-goat publish --hosts: real servers' IPs and MACs (hostlib/testbed/hosts_list.h) in the
// job file, goat.topo and every switch's dmac entries; unlisted hosts keep the made-up ones; a
// list that does not match the plan ends with one line, exit 2, nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/swemu/swemu_subprocess.h"

namespace swemu::testing {
namespace {

const std::string kGoat = SWEMU_BINARY_DIR "/tools/swemu-goat";

std::string Dir() {
  const std::string dir = TestDirFor("goat_hosts_");
  std::filesystem::create_directories(dir);
  return dir;
}

RunResult Publish(const std::string& dir, const std::string& hosts) {
  std::ofstream(dir + "hosts") << hosts;
  return RunCommandIn(dir, kGoat + " publish --hosts " + dir + "hosts --out-dir " + dir + "pub");
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(GoatPublishHosts, ListedHostsAddressesReachTheJobTopologyAndSwitches) {
  const std::string dir = Dir();
  const RunResult run = Publish(dir,
                                "# two real servers\n"
                                "w1 worker 192.168.1.11 3c:fd:fe:00:00:01 s1:0\n"
                                "ps ps 192.168.1.100 3c:fd:fe:00:00:64 0  # PORT alone\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string job = ReadText(dir + "pub/goat.job");
  EXPECT_TRUE(Has(job, "ps = ps 3c:fd:fe:00:00:64 192.168.1.100\n")) << job;
  EXPECT_TRUE(Has(job, "worker = w1 3c:fd:fe:00:00:01 192.168.1.11 ")) << job;
  EXPECT_TRUE(Has(job, "worker = w2 02:00:00:00:01:01 10.1.0.2 ")) << job;  // not listed
  const std::string topo = ReadText(dir + "pub/goat.topo");
  EXPECT_TRUE(Has(topo, "name=w1 ip=192.168.1.11/16 mac=3c:fd:fe:00:00:01 role=worker")) << topo;
  EXPECT_TRUE(Has(topo, "name=ps ip=192.168.1.100/16 mac=3c:fd:fe:00:00:64 role=ps")) << topo;
  EXPECT_TRUE(Has(topo, "name=w2 ip=10.1.0.2/16 mac=02:00:00:00:01:01 role=worker")) << topo;
  // Every switch reaches both: s1 has w1 on port 0; s3 has the PS on port 0.
  const std::string s1 = ReadText(dir + "pub/s1.cli"), s3 = ReadText(dir + "pub/s3.cli");
  EXPECT_TRUE(Has(s1, "table_add dmac forward 3c:fd:fe:00:00:01 => 0\n")) << s1;
  EXPECT_TRUE(Has(s1, "table_add dmac forward 3c:fd:fe:00:00:64 => ")) << s1;
  EXPECT_TRUE(Has(s3, "table_add dmac forward 3c:fd:fe:00:00:64 => 0\n")) << s3;
  EXPECT_TRUE(Has(s3, "table_add dmac forward 3c:fd:fe:00:00:01 => ")) << s3;
  EXPECT_FALSE(Has(s1 + s3, "02:00:00:00:01:00 ")) << "w1's made-up MAC is gone";
  EXPECT_FALSE(Has(s1 + s3, "02:00:00:00:01:08 ")) << "the PS's made-up MAC is gone";
}

TEST(GoatPublishHosts, ListsThatDoNotMatchThePlanAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"w9 worker 192.168.1.11 3c:fd:fe:00:00:01 s1:0\n", "w9: not a host of the plan"},
      {"ps worker 192.168.1.11 3c:fd:fe:00:00:01 s3:0\n", "ps: the plan's ps"},
      {"w1 ps 192.168.1.11 3c:fd:fe:00:00:01 s1:0\n", "w1: the plan's worker"},
      {"w1 worker 192.168.1.11 3c:fd:fe:00:00:01 s2:0\n", "the plan places it at s1:0"},
      {"w1 worker 192.168.1.11 3c:fd:fe:00:00:01 1\n", "the plan places it at s1:0"},
      {"w1 worker 192.168.1.11 learn s1:0\n", "learn"},
      {"w1 worker 192.168.1.11 3c:fd:fe:00:00:01 s1:\n", "port"},
      {"w1 worker 192.168.1.11 3c:fd:fe:00:00:01\n", "expected NAME ROLE IP MAC PORT"},
      {"w1 worker 10.1.0.2 3c:fd:fe:00:00:01 s1:0\n", "IP or MAC of another host"},
      {"w1 worker 192.168.1.11 3c:fd:fe:00:00:01 s1:0\nw1 worker 192.168.1.12 learn s1:0\n",
       "name w1 twice"},
  };
  for (const auto& [hosts, problem] : cases) {
    const std::string dir = Dir();
    const RunResult run = Publish(dir, hosts);
    EXPECT_EQ(run.status, 2) << hosts << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << hosts << run.err;
    EXPECT_NE(run.err.find(problem), std::string::npos) << hosts << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "pub")) << hosts;
  }
}

// A hosts "file" that is a directory or missing is a bad file: one line, exit 2, nothing written.
TEST(GoatPublishHosts, AHostsPathThatIsNoFileIsRefused) {
  for (const bool missing : {false, true}) {
    const std::string what = missing ? "missing" : "a directory";
    const std::string dir = Dir();
    const std::string hosts = missing ? dir + "none" : dir;
    const RunResult run =
        RunCommandIn(dir, kGoat + " publish --hosts " + hosts + " --out-dir " + dir + "pub");
    EXPECT_EQ(run.status, 2) << what << run.err;
    EXPECT_EQ(run.err.rfind("swemu-goat publish: --hosts " + hosts + ": ", 0), 0u) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "pub")) << what;
  }
}

}  // namespace
}  // namespace swemu::testing
