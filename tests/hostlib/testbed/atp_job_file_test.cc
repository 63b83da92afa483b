#include "hostlib/testbed/atp_job_file.h"

#include <gtest/gtest.h>

#include <fstream>

namespace swemu {
namespace {

std::string WriteJob(const std::string& name, const std::string& hosts) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << "[job]\nid = 1\ngroup = 239.1.1.1\nelements = 64\nport = 9000\n" << hosts;
  return path;
}

// swemu-atp publish's file: two ranks and the PS on one switch. The switch is every host's
// rack, so each worker's fan-in is 2 (read with the port as the rack, it would be 1, and the
// switch would send each worker's packet on to the PS unaggregated).
TEST(LoadPublishedAtpJobTest, HostsOfOneSwitchShareItsRack) {
  auto job = LoadPublishedAtpJob(WriteJob("one_switch.job",
                                          "ps = ps learn 10.0.7.254 tor:2\n"
                                          "worker = w0 learn 10.0.7.1 tor:0\n"
                                          "worker = w1 learn 10.0.7.2 tor:1\n"));
  ASSERT_TRUE(job.ok()) << job.message();
  ASSERT_EQ(job->aggregate.num_workers(), 2u);
  EXPECT_EQ(job->aggregate.spec.ps.rack, "tor");
  for (uint32_t w = 0; w < 2; ++w) {
    EXPECT_EQ(job->aggregate.spec.workers[w].rack, "tor");
    EXPECT_EQ(job->aggregate.workers[w].fan_in0, 2);
    EXPECT_EQ(job->aggregate.workers[w].fan_in1, 0);
    EXPECT_EQ(job->workers[w].sw, "tor");
    EXPECT_EQ(job->workers[w].port, w);
  }
  EXPECT_EQ(job->plain.spec.job_id, 2);
}

// Two switches: the workers of each are counted together, then all three at the PS's.
TEST(LoadPublishedAtpJobTest, EachSwitchIsARack) {
  auto job = LoadPublishedAtpJob(WriteJob("two_switches.job",
                                          "ps = ps learn 10.0.7.254 b:5\n"
                                          "worker = w0 learn 10.0.7.1 a:0\n"
                                          "worker = w1 learn 10.0.7.2 a:1\n"
                                          "worker = w2 learn 10.0.7.3 b:0\n"));
  ASSERT_TRUE(job.ok()) << job.message();
  EXPECT_EQ(job->aggregate.workers[0].fan_in0, 2);
  EXPECT_EQ(job->aggregate.workers[1].fan_in0, 2);
  EXPECT_EQ(job->aggregate.workers[0].fan_in1, 3);
  EXPECT_EQ(job->aggregate.workers[2].fan_in0, 3);
}

TEST(LoadPublishedAtpJobTest, ErrorsNameTheFile) {
  const std::string bad = WriteJob("no_port.job",
                                   "ps = ps learn 10.0.7.254 tor\n"
                                   "worker = w0 learn 10.0.7.1 tor:0\n");
  auto job = LoadPublishedAtpJob(bad);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.message().rfind(bad + ": ", 0), 0u) << job.message();
  EXPECT_NE(job.message().find("expected SWITCH:PORT"), std::string::npos) << job.message();
  auto missing = LoadPublishedAtpJob(bad + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message().rfind(bad + ".missing: ", 0), 0u) << missing.message();
}

}  // namespace
}  // namespace swemu
