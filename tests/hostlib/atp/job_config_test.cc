#include "hostlib/atp/job_config.h"

#include <gtest/gtest.h>

#include "tests/hostlib/atp/atp_test_util.h"

namespace swemu {
namespace {

using atp_test::Spec;

TEST(JobConfigTest, SingleRackGivesEveryWorkerFanInWAndNoSecondLevel) {
  Result<AtpJobConfig> job = MakeAtpJobConfig(Spec(3, 4));
  ASSERT_TRUE(job.ok()) << job.message();
  ASSERT_EQ(job->num_workers(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(job->workers[i].worker_id, i);
    EXPECT_EQ(job->workers[i].fan_in0, 4);
    EXPECT_EQ(job->workers[i].fan_in1, 0);
  }
  EXPECT_EQ(job->full_bitmap, 0xFu);
  EXPECT_EQ(job->group_mac, MacAddr::FromU64(0x01005E010103ull));
}

// Racks r1 (3 workers) and r2 (2 workers, the PS's rack): r1's workers aggregate 3 at their
// edge and W = 5 at the PS's edge; r2's workers aggregate all 5 at their (the PS's) edge.
TEST(JobConfigTest, TwoRacksFanInsFollowTheRackOfTheWorkerAndThePs) {
  Result<AtpJobConfig> job = MakeAtpJobConfig(Spec(3, 5, 64, {"r1", "r1", "r2", "r1", "r2"}, "r2"));
  ASSERT_TRUE(job.ok()) << job.message();
  const uint8_t f0[] = {3, 3, 5, 3, 5}, f1[] = {5, 5, 0, 5, 0};
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(job->workers[i].fan_in0, f0[i]) << i;
    EXPECT_EQ(job->workers[i].fan_in1, f1[i]) << i;
  }
  // PS on a third rack: every worker has two levels.
  job = MakeAtpJobConfig(Spec(3, 3, 64, {"r1", "r1", "r2"}, "spine"));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->workers[0].fan_in0, 2);
  EXPECT_EQ(job->workers[2].fan_in0, 1);
  EXPECT_EQ(job->workers[2].fan_in1, 3);
}

TEST(JobConfigTest, ParsesTheTextForm) {
  Result<AtpJobConfig> job = ParseAtpJobConfig(R"(
# two racks
[job]
id = 9
group = 239.0.0.9
elements = 32
port = 9100
ps = ps 02:00:00:00:00:64 10.0.0.100 tor1
worker = a 02:00:00:00:00:01 10.0.0.1 tor0   # id 0
worker = b 02:00:00:00:00:02 10.0.0.2 tor1
)");
  ASSERT_TRUE(job.ok()) << job.message();
  EXPECT_EQ(job->spec.job_id, 9);
  EXPECT_EQ(job->spec.elements, 32);
  EXPECT_EQ(job->spec.udp_port, 9100);
  EXPECT_EQ(job->spec.scale, kAtpDefaultScale);
  EXPECT_EQ(job->FindWorker(MakeIpv4Addr(10, 0, 0, 2)), 1);
  EXPECT_EQ(job->workers[0].fan_in0, 1);
  EXPECT_EQ(job->workers[0].fan_in1, 2);
  EXPECT_EQ(job->workers[1].fan_in0, 2);
  EXPECT_EQ(job->workers[1].fan_in1, 0);
}

// swemu-atp publish writes the text form; a host whose MAC it did not know says `learn`.
TEST(JobConfigTest, TheFormattedTextReadsBackAndKeepsLearn) {
  AtpJobSpec spec = Spec(4, 2);
  spec.workers[1].mac = MacAddr{};
  spec.scale = 1000.5;
  const std::string text = FormatAtpJobSpec(spec);
  EXPECT_NE(text.find("worker = " + spec.workers[1].name + " learn "), std::string::npos) << text;
  Result<AtpJobConfig> job = ParseAtpJobConfig(text);
  ASSERT_TRUE(job.ok()) << job.message();
  EXPECT_EQ(FormatAtpJobSpec(job->spec), text);
  EXPECT_EQ(job->spec.workers[1].mac, MacAddr{});
  EXPECT_EQ(job->spec.workers[0].mac, spec.workers[0].mac);
  EXPECT_EQ(job->spec.scale, 1000.5);
}

TEST(JobConfigTest, BadInputIsOneLineNamingTheProblem) {
  const std::string head =
      "[job]\nid = 1\ngroup = 239.0.0.1\nps = p 02:00:00:00:00:09 10.0.0.9 r\n";
  const std::string w = "worker = a 02:00:00:00:00:01 10.0.0.1 r\n";
  struct Case {
    std::string text;
    std::string expect;
  } cases[] = {
      {head, "0 workers"},
      {head + w + "elements = 400\n", "line 6: '400' is not a number in 1..364"},
      {head + w + "colour = red\n", "unknown key 'colour'"},
      {head + w + "id = 2\n", "duplicate key 'id'"},
      {head + w + w, "appears twice"},
      {"id = 1\n", "expected [job] first"},
      {"[jobs]\n", "unknown section"},
      {head + "worker = a 02:00:00:00:00:01 10.0.0.1\n", "expected '<name> <mac> <ip> <rack>'"},
      {head + "worker = a 02:00:00:00:00:01 10.0.0.300 r\n", "line 5"},
      {"[job]\nid = 1\ngroup = 10.0.0.1\nps = p 02:00:00:00:00:09 10.0.0.9 r\n" + w,
       "not a multicast address"},
      {"[job]\nid = 0\n", "'0' is not a number in 1..65535"},
      {"[job]\nid = 1\ngroup = 239.0.0.1\n" + w, "no ps given"},
  };
  for (const Case& c : cases) {
    Result<AtpJobConfig> job = ParseAtpJobConfig(c.text);
    ASSERT_FALSE(job.ok()) << c.text;
    EXPECT_NE(job.message().find(c.expect), std::string::npos) << job.message();
    EXPECT_EQ(job.message().find('\n'), std::string::npos) << job.message();
  }
  AtpJobSpec spec = Spec(1, 33);
  EXPECT_FALSE(MakeAtpJobConfig(spec).ok());
}

}  // namespace
}  // namespace swemu
