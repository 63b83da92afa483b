// DLCP's simulation scaled to CI: a 2-ToR, 2-spine fabric with 4 hosts pushing ResNet-50's
// layers (scaled 1/256) to their PSs and pulling them back. Every DLCP flow ends within its
// loss bound (the pull's stricter one for pulls), and DLCP's mean and p99 completion times are
// below the DCTCP baseline's on the same fabric and tensors, at RTOmin 10 ms and 1 ms; a layer
// goes to one PS, a pull starts once its layer's pushes have arrived; runs are deterministic.
#include "hostlib/dlcp/experiment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace swemu {
namespace {

DlcpExperimentOptions Small(TimeNs rto) {
  DlcpExperimentOptions o;
  o.tors = 2;
  o.hosts_per_tor = 2;
  o.scale = 256;
  o.min_rto_ns = rto;
  return o;
}

class DlcpExperiment : public ::testing::TestWithParam<TimeNs> {};

TEST_P(DlcpExperiment, DlcpCutsTheTailAgainstDctcp) {
  const DlcpExperimentOptions o = Small(GetParam());
  Result<DlcpRunResult> d = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, false);
  ASSERT_TRUE(d.ok()) << d.message();
  ASSERT_TRUE(b.ok()) << b.message();
  SCOPED_TRACE(FormatDlcpComparison(o, *d, *b, true));
  ASSERT_EQ(d->flows.size(), b->flows.size());
  for (const DlcpFlowResult& f : d->flows) {
    EXPECT_LE(f.loss, (f.pull ? o.pull_bound : o.loss_bound) + 1e-9) << f.layer << " " << f.pull;
  }
  EXPECT_LT(d->P99FctMs(), b->P99FctMs());
  EXPECT_LT(d->MeanFctMs(), b->MeanFctMs());
  EXPECT_GT(d->red_drops, 0u);  // the switches dropped unimportant packets
}

INSTANTIATE_TEST_SUITE_P(RtoMin, DlcpExperiment, ::testing::Values(10'000'000, 1'000'000),
                         [](const auto& info) {
                           return "rto" + std::to_string(info.param / 1'000'000) + "ms";
                         });

// Per layer and PS: the pushes' arrivals and the pulls' starts.
struct Group {
  std::vector<const DlcpFlowResult*> pushes, pulls;
};

TEST(DlcpExperimentRuns, PullsFollowTheirLayersPushesAndEachLayerHasOnePs) {
  DlcpExperimentOptions o = Small(10'000'000);
  o.scale = 1024;  // no layer is split: each goes to one PS
  for (bool dlcp : {true, false}) {
    Result<DlcpRunResult> r = RunDlcpExperiment(o, dlcp);
    ASSERT_TRUE(r.ok()) << r.message();
    std::map<std::pair<uint32_t, uint32_t>, Group> groups;  // (layer, PS)
    std::map<uint32_t, std::set<uint32_t>> ps_of_layer;
    std::size_t pushes = 0, pulls = 0;
    for (const DlcpFlowResult& f : r->flows) {
      if (f.pull) {
        ++pulls;
        groups[{f.layer, f.from}].pulls.push_back(&f);
      } else {
        ++pushes;
        groups[{f.layer, f.to}].pushes.push_back(&f);
        ps_of_layer[f.layer].insert(f.to);
      }
    }
    EXPECT_EQ(pushes, pulls);
    for (const auto& [layer, ps] : ps_of_layer) EXPECT_EQ(ps.size(), 1u) << layer;
    for (const auto& [key, g] : groups) {
      TimeNs arrived = 0;
      for (const DlcpFlowResult* p : g.pushes) arrived = std::max(arrived, p->arrived_ns);
      ASSERT_EQ(g.pulls.size(), g.pushes.size());
      for (std::size_t i = 0; i < g.pulls.size(); ++i) {
        const DlcpFlowResult* p = g.pulls[i];
        // Started at the first 10-us check after the last push arrived, not before.
        EXPECT_GE(p->start_ns, arrived) << dlcp << " layer " << key.first;
        EXPECT_LE(p->start_ns, arrived + 10'000) << dlcp << " layer " << key.first;
        EXPECT_EQ(p->to, g.pushes[i]->from);  // back to the worker that pushed
        EXPECT_LE(p->start_ns + p->fct_ns, r->iteration_ns);
      }
    }
  }
  o.pull = false;
  Result<DlcpRunResult> push_only = RunDlcpExperiment(o, true);
  ASSERT_TRUE(push_only.ok());
  for (const DlcpFlowResult& f : push_only->flows) EXPECT_FALSE(f.pull);
}

TEST(DlcpExperimentRuns, AreDeterministicAndRefuseBadSettings) {
  const DlcpExperimentOptions o = Small(10'000'000);
  Result<DlcpRunResult> a = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, true);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->flows.size(), b->flows.size());
  for (std::size_t i = 0; i < a->flows.size(); ++i) EXPECT_EQ(a->flows[i].fct_ns, b->flows[i].fct_ns);
  DlcpExperimentOptions bad = o;
  bad.tors = 1;
  EXPECT_FALSE(RunDlcpExperiment(bad, true).ok());
  bad = o;
  bad.pull_bound = 1;
  EXPECT_FALSE(RunDlcpExperiment(bad, true).ok());
  bad = o;
  bad.model = "gpt";
  EXPECT_FALSE(RunDlcpExperiment(bad, false).ok());
}

// The bundled configs/dlcp_leaf_spine.topo is the default shape: every flow's completion and loss
// are those of the generated network's run (scaled down to run in CI).
TEST(DlcpExperimentRuns, OnTheBundledTopologyAsOnTheDefaultShape) {
  DlcpExperimentOptions o;
  o.scale = 1024;
  Result<TopologyConfig> file = LoadTopology(SWEMU_SOURCE_DIR "/configs/dlcp_leaf_spine.topo");
  ASSERT_TRUE(file.ok()) << file.message();
  for (bool dlcp : {true, false}) {
    Result<DlcpRunResult> made = RunDlcpExperiment(o, dlcp);
    Result<DlcpRunResult> loaded = RunDlcpExperiment(o, *file, dlcp);
    ASSERT_TRUE(made.ok() && loaded.ok()) << made.message() << loaded.message();
    ASSERT_EQ(made->flows.size(), loaded->flows.size());
    for (std::size_t f = 0; f < made->flows.size(); ++f) {
      EXPECT_EQ(made->flows[f].fct_ns, loaded->flows[f].fct_ns) << f;
      EXPECT_EQ(made->flows[f].loss, loaded->flows[f].loss) << f;
    }
    EXPECT_EQ(made->fabric, loaded->fabric);
  }
  TopologyConfig few = *file;
  few.hosts.resize(3);
  EXPECT_FALSE(RunDlcpExperiment(o, few, true).ok());
}

// Jobs keep the load per host fixed: with --job-hosts 4 on 8 hosts, two jobs (host h in job
// h % 2), every flow inside one job, each job's PS its first host, each host sending the flows
// it sends in one job of 4; one job of every host is the default run, flow for flow; the engine's
// work is counted.
TEST(DlcpExperimentRuns, JobsKeepEachHostsLoadAndOneJobIsTheDefault) {
  DlcpExperimentOptions o = Small(10'000'000);
  o.tors = 2;
  o.hosts_per_tor = 4;
  o.scale = 1024;  // no layer is split: each goes to one PS
  o.job_hosts = 4;
  Result<DlcpRunResult> jobs = RunDlcpExperiment(o, false);
  ASSERT_TRUE(jobs.ok()) << jobs.message();
  EXPECT_EQ(jobs->jobs, 2u);
  std::map<uint32_t, std::size_t> sent;
  for (const DlcpFlowResult& f : jobs->flows) {
    EXPECT_EQ(f.from % 2, f.to % 2) << f.from << " -> " << f.to;
    EXPECT_LT(f.pull ? f.from : f.to, 2u) << "the PS of job h % 2 is host h";
    ++sent[f.from];
  }
  DlcpExperimentOptions four = Small(10'000'000);
  four.scale = 1024;
  Result<DlcpRunResult> one = RunDlcpExperiment(four, false);  // 2 x 2: one job of 4
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ(jobs->flows.size(), 2 * one->flows.size());
  std::map<uint32_t, std::size_t> sent_alone;
  for (const DlcpFlowResult& f : one->flows) ++sent_alone[f.from];
  for (uint32_t h = 0; h < 8; ++h) EXPECT_EQ(sent[h], sent_alone[h / 2]) << h;  // h/2: its place in its job
  EXPECT_GT(jobs->engine.events, one->engine.events);
  EXPECT_EQ(jobs->engine.packet_hops(), jobs->engine.injected + jobs->engine.link_frames);
  o.job_hosts = 8;
  Result<DlcpRunResult> all = RunDlcpExperiment(o, true);
  o.job_hosts = 0;
  Result<DlcpRunResult> plain = RunDlcpExperiment(o, true);
  ASSERT_TRUE(all.ok() && plain.ok());
  ASSERT_EQ(all->flows.size(), plain->flows.size());
  for (std::size_t f = 0; f < all->flows.size(); ++f) {
    EXPECT_EQ(all->flows[f].fct_ns, plain->flows[f].fct_ns) << f;
  }
  o.job_hosts = 3;
  EXPECT_FALSE(RunDlcpExperiment(o, true).ok());
}

TEST(DlcpExperimentRuns, CountWhatTheHostsSentAndResent) {
  const DlcpExperimentOptions o = Small(1'000'000);
  Result<DlcpRunResult> d = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, false);
  ASSERT_TRUE(d.ok() && b.ok());
  for (const DlcpRunResult* r : {&*d, &*b}) {
    EXPECT_GT(r->engine.data_packets, 0u) << r->transport;
    EXPECT_LT(r->engine.data_packets, r->engine.injected) << "control packets or ACKs too";
    EXPECT_LE(r->engine.resent, r->engine.data_packets);
  }
  EXPECT_EQ(d->engine.timeouts, 0u);
  EXPECT_EQ(b->engine.retransmit_requests, 0u);
  const std::string text = FormatDlcpEngineStats(*d, 1.0, *b, 1.0);
  EXPECT_NE(text.find("hosts dlcp: " + std::to_string(d->engine.data_packets) + " data packets ("),
            std::string::npos) << text;
  EXPECT_NE(text.find("hosts dctcp: " + std::to_string(b->engine.data_packets) + " segments ("),
            std::string::npos) << text;
}

TEST(DlcpExperimentRuns, TheReportQuotesThePapersFiguresForItsModel) {
  DlcpExperimentOptions o = Small(10'000'000);
  o.scale = 1024;
  Result<DlcpRunResult> d = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, false);
  ASSERT_TRUE(d.ok() && b.ok());
  const std::string resnet = FormatDlcpComparison(o, *d, *b, false);
  EXPECT_NE(resnet.find("paper (ResNet50, RTOmin 10 ms)"), std::string::npos) << resnet;
  EXPECT_NE(resnet.find("up to -43.1%"), std::string::npos);
  o.model = "inception-v3";
  Result<DlcpRunResult> di = RunDlcpExperiment(o, true);
  Result<DlcpRunResult> bi = RunDlcpExperiment(o, false);
  ASSERT_TRUE(di.ok() && bi.ok());
  const std::string inception = FormatDlcpComparison(o, *di, *bi, false);
  EXPECT_NE(inception.find("paper (InceptionV3, RTOmin 10 ms)"), std::string::npos) << inception;
  EXPECT_NE(inception.find("up to -30.3%"), std::string::npos);
  EXPECT_NE(inception.find("up to -89.7% (5 ms: -72.7%, 1 ms: -71.8%)"), std::string::npos);
  EXPECT_EQ(inception.find("-43.1%"), std::string::npos);
}

TEST(DlcpExperimentRuns, WorkersSpreadEvenlyOverTheRacksAndTheRestIdle) {
  DlcpExperimentOptions o = Small(10'000'000);
  o.tors = 3;
  o.hosts_per_tor = 4;  // hosts 0-3 on tor0, 4-7 on tor1, 8-11 on tor2
  const TopologyConfig topo = DlcpExperimentTopology(o);
  EXPECT_EQ(*DlcpWorkerHosts(topo, 6), (std::vector<uint32_t>{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(*DlcpWorkerHosts(topo, 4), (std::vector<uint32_t>{0, 1, 4, 8}));
  EXPECT_EQ(DlcpWorkerHosts(topo, 0)->size(), 12u);  // every host
  EXPECT_EQ(DlcpWorkerHosts(topo, 12)->size(), 12u);
  EXPECT_FALSE(DlcpWorkerHosts(topo, 13).ok());
  EXPECT_FALSE(DlcpWorkerHosts(topo, 3).ok());
  o.scale = 1024;  // no layer is split: each goes to one PS
  o.workers = 8;   // hosts 0, 1, 2, 4, 5, 6, 8, 9; PSs 0 and 5 (every 4th worker)
  Result<DlcpRunResult> some = RunDlcpExperiment(o, true);
  ASSERT_TRUE(some.ok()) << some.message();
  EXPECT_EQ(some->hosts, 8u);
  EXPECT_NE(some->fabric.find("8 of them workers"), std::string::npos) << some->fabric;
  const std::set<uint32_t> workers = {0, 1, 2, 4, 5, 6, 8, 9};
  std::set<uint32_t> seen, pss;
  for (const DlcpFlowResult& f : some->flows) {
    seen.insert(f.from);
    seen.insert(f.to);
    pss.insert(f.pull ? f.from : f.to);
  }
  EXPECT_EQ(seen, workers);
  EXPECT_EQ(pss, (std::set<uint32_t>{0, 5}));
  o.workers = 12;  // all of them: the default run
  Result<DlcpRunResult> all = RunDlcpExperiment(o, false);
  o.workers = 0;
  Result<DlcpRunResult> plain = RunDlcpExperiment(o, false);
  ASSERT_TRUE(all.ok() && plain.ok());
  ASSERT_EQ(all->flows.size(), plain->flows.size());
  for (std::size_t f = 0; f < all->flows.size(); ++f) {
    EXPECT_EQ(all->flows[f].fct_ns, plain->flows[f].fct_ns) << f;
  }
  EXPECT_EQ(all->fabric, plain->fabric);
}

}  // namespace
}  // namespace swemu
