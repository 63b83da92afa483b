// The GOAT job file (hostlib/goat/job_file.h): a published plan as the hosts read it.
#include "hostlib/goat/job_file.h"

#include <gtest/gtest.h>

#include "hostlib/goat/fabric.h"

namespace swemu {
namespace {

GoatJob Sample() {
  Result<GoatFabric> fabric = GoatFabric::Create(GoatFabricSpec::ThreeSwitch(2, 8));
  EXPECT_TRUE(fabric.ok());
  GoatJob job = fabric->MakeJob(7, 16, {3, 2});
  job.node = {{1, 0}, {1, 3}, {2, kGoatNodeAny}, {0, 0}};
  job.k = 3;
  return job;
}

TEST(GoatJobFile, RoundTrips) {
  const GoatJob job = Sample();
  Result<GoatJob> back = ParseGoatJob(FormatGoatJob(job));
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->job_id, 7);
  EXPECT_EQ(back->elements, 16);
  EXPECT_EQ(back->k, 3u);
  EXPECT_EQ(back->fragments, job.fragments);
  EXPECT_EQ(back->node, job.node);
  ASSERT_EQ(back->workers.size(), 4u);
  EXPECT_EQ(back->workers[2].mac, job.workers[2].mac);
  EXPECT_EQ(back->workers[2].ip, job.workers[2].ip);
  EXPECT_EQ(back->ps.ip, job.ps.ip);
  EXPECT_EQ(FormatGoatJob(*back), FormatGoatJob(job));
}

TEST(GoatJobFile, ErrorsNameTheLine) {
  const std::string good = FormatGoatJob(Sample());
  const struct {
    std::string text;
    std::string expect;
  } cases[] = {
      {"id = 1\n", "line 1: expected [job] first"},
      {"[job]\nid 1\n", "line 2: expected KEY = VALUE"},
      {"[job]\nid = 1\nid = 2\n", "line 3: id given twice"},
      {"[job]\ncolour = red\n", "unknown key colour"},
      {"[job]\nid = 70000\n", "line 2: id"},
      {"[job]\nid = 1\nfragments = 3,x\n", "fragments"},
      {"[job]\nid = 1\nfragments = 3\nps = ps 02:00:00:00:00:01\n", "expected NAME MAC IP"},
      {"[job]\nid = 1\nfragments = 3\nps = ps 02:00:00:00:00:01 10.0.0.1\nworker = w "
       "02:00:00:00:00:02 10.0.0.2\n",
       "expected NAME MAC IP NODE"},
      {"[job]\nid = 1\nfragments = 3,2\nps = ps 02:00:00:00:00:01 10.0.0.1\nworker = w "
       "02:00:00:00:00:02 10.0.0.2 1\n",
       "nodes for 1 sub-models, the job has 2"},
      {"[job]\nid = 1\nfragments = 3\n", "no ps"},
      {"[job]\nid = 1\nk = 2\nfragments = 3\nps = ps 02:00:00:00:00:01 10.0.0.1\nworker = w "
       "02:00:00:00:00:02 10.0.0.2 1\n",
       "K = 2 exceeds the 1 workers"},
  };
  for (const auto& c : cases) {
    Result<GoatJob> job = ParseGoatJob(c.text);
    ASSERT_FALSE(job.ok()) << c.text;
    EXPECT_NE(job.message().find(c.expect), std::string::npos) << job.message();
  }
  EXPECT_TRUE(ParseGoatJob(good).ok());
}

}  // namespace
}  // namespace swemu
