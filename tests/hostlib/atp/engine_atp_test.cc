// End to end in the virtual-time engine: worker and PS Contexts co-simulated with a switch.
// The switch runs l2l3 (no ATP: every packet is aggregated at the PS, the backward-compatible
// case) unless a test says otherwise.
#include <gtest/gtest.h>

#include <vector>

#include "tests/hostlib/atp/atp_cluster.h"

namespace swemu::atp_test {
namespace {

constexpr std::size_t kN = 5000;

struct RunResult {
  std::vector<std::vector<float>> out;  // per worker
  std::vector<AtpWorkerStats> workers;
  AtpPsStats ps;
  std::string engine_counters;
};

RunResult RunOnce(const ClusterOptions& options, std::size_t n = kN) {
  Cluster c(options);
  const uint32_t w = options.workers;
  std::vector<std::vector<float>> in(w);
  RunResult r;
  r.out.assign(w, std::vector<float>(n, 0));
  std::vector<AllReduceJob*> calls;
  for (uint32_t i = 0; i < w; ++i) {
    in[i] = Gradient(i, n);
    calls.push_back(c.worker(i).AllReduce(1, in[i].data(), r.out[i].data(), n));
    EXPECT_NE(calls.back(), nullptr);
  }
  Status ran = c.engine().Run(10'000'000'000ull);
  EXPECT_TRUE(ran.ok()) << ran.message();
  for (uint32_t i = 0; i < w; ++i) {
    EXPECT_TRUE(calls[i]->done()) << "worker " << i;
    r.workers.push_back(*c.worker(i).worker_stats(1));
  }
  r.ps = *c.ps().ps_stats(1);
  r.engine_counters = c.engine().CountersJson();
  EXPECT_TRUE(c.engine().CheckConservation().ok()) << c.engine().CheckConservation().message();
  ExpectSumWithinBound(in, r.out[0], c.job(0).spec.scale);
  for (uint32_t i = 1; i < w; ++i) EXPECT_EQ(r.out[i], r.out[0]) << "worker " << i;
  return r;
}

TEST(EngineAtpTest, AllReduceThroughAPlainSwitchIsAggregatedAtThePs) {
  RunResult r = RunOnce({});
  const uint32_t packets = (kN + 63) / 64;
  EXPECT_EQ(r.ps.completed, packets);
  EXPECT_EQ(r.ps.originals, 4u * packets);  // no switch aggregation
  EXPECT_EQ(r.ps.completed_by_switch, 0u);
  EXPECT_EQ(r.ps.elements_at_ps, 64u * packets);
  for (const AtpWorkerStats& s : r.workers) {
    EXPECT_EQ(s.elements_completed, kN);
    EXPECT_EQ(s.retransmissions, 0u);
    EXPECT_EQ(s.packets_sent, packets);
  }
}

TEST(EngineAtpTest, OnePercentHostLinkLossStillGivesTheExactSameResult) {
  RunResult clean = RunOnce({});
  ClusterOptions lossy;
  lossy.host_loss = 0.01;
  RunResult r = RunOnce(lossy);
  EXPECT_EQ(r.out, clean.out);
  uint64_t retransmissions = 0;
  for (const AtpWorkerStats& s : r.workers) retransmissions += s.retransmissions;
  EXPECT_GT(retransmissions, 0u);
  EXPECT_GT(r.ps.duplicates + r.ps.param_resends, 0u);
}

TEST(EngineAtpTest, ARunIsDeterministic) {
  ClusterOptions lossy;
  lossy.host_loss = 0.02;
  RunResult a = RunOnce(lossy), b = RunOnce(lossy);
  EXPECT_EQ(a.engine_counters, b.engine_counters);
  for (std::size_t i = 0; i < a.workers.size(); ++i) {
    EXPECT_EQ(a.workers[i].packets_sent, b.workers[i].packets_sent);
    EXPECT_EQ(a.workers[i].retransmissions, b.workers[i].retransmissions);
    EXPECT_EQ(a.workers[i].timeouts, b.workers[i].timeouts);
    EXPECT_EQ(a.workers[i].window_bytes, b.workers[i].window_bytes);
  }
  EXPECT_EQ(a.ps.duplicates, b.ps.duplicates);
  EXPECT_EQ(a.ps.param_resends, b.ps.param_resends);
}

TEST(EngineAtpTest, EcnMarksFromTheSwitchHalveWorkerWindows) {
  ClusterOptions o;
  o.extra_script = "set_ecn_threshold 4 0 20000\n";  // the PS's port
  RunResult r = RunOnce(o);
  uint64_t halvings = 0;
  for (const AtpWorkerStats& s : r.workers) halvings += s.ecn_halvings;
  EXPECT_GT(halvings, 0u);
}

TEST(EngineAtpTest, TwoConcurrentJobsPerHostAndTwoCallsEach) {
  ClusterOptions o;
  o.jobs = {1, 2};
  o.host_loss = 0.01;
  Cluster c(o);
  constexpr std::size_t kA = 3000, kB = 1000;
  // Job 1 reduces a then b; job 2 reduces c, all submitted up front.
  std::vector<std::vector<float>> a(4), b(4), in2(4);
  std::vector<std::vector<float>> out_a(4, std::vector<float>(kA)),
      out_b(4, std::vector<float>(kB)), out2(4, std::vector<float>(kA));
  std::vector<AllReduceJob*> calls;
  for (uint32_t w = 0; w < 4; ++w) {
    a[w] = Gradient(w, kA, 1);
    b[w] = Gradient(w, kB, 2);
    in2[w] = Gradient(w, kA, 3);
    calls.push_back(c.worker(w).AllReduce(1, a[w].data(), out_a[w].data(), kA));
    calls.push_back(c.worker(w).AllReduce(1, b[w].data(), out_b[w].data(), kB));
    calls.push_back(c.worker(w).AllReduce(2, in2[w].data(), out2[w].data(), kA));
  }
  ASSERT_TRUE(c.engine().Run(10'000'000'000ull).ok());
  for (AllReduceJob* call : calls) EXPECT_TRUE(call->done());
  EXPECT_EQ(calls[1]->first_seq(), calls[0]->packets());  // seqs run on across calls
  ExpectSumWithinBound(a, out_a[2], kAtpDefaultScale);
  ExpectSumWithinBound(b, out_b[3], kAtpDefaultScale);
  ExpectSumWithinBound(in2, out2[0], kAtpDefaultScale);
  EXPECT_EQ(c.ps().ps_stats(1)->completed, (kA + 63) / 64 + (kB + 63) / 64);
  EXPECT_EQ(c.ps().ps_stats(2)->completed, (kA + 63) / 64);
  EXPECT_EQ(c.ps().counters().unknown_job, 0u);
  EXPECT_TRUE(c.engine().CheckConservation().ok());
}

// The same rack with the ATP switch program: the switch completes every aggregate, the PS
// only turns complete aggregates into parameter packets.
TEST(EngineAtpTest, WithTheAtpSwitchTheSwitchAggregatesEverything) {
  ClusterOptions o;
  o.program = "atp";
  RunResult clean = RunOnce(o);
  const uint32_t packets = (kN + 63) / 64;
  EXPECT_EQ(clean.ps.completed, packets);
  EXPECT_EQ(clean.ps.completed_by_switch, packets);
  EXPECT_EQ(clean.ps.full, packets);
  EXPECT_EQ(clean.ps.originals, 0u);

  o.host_loss = 0.01;
  RunResult lossy = RunOnce(o);
  EXPECT_EQ(lossy.out, clean.out);
  EXPECT_EQ(lossy.out, RunOnce({}).out);  // and the same as aggregating at the PS
  EXPECT_GT(lossy.ps.completed_by_switch, 0u);
  EXPECT_LT(lossy.ps.completed_by_switch, packets);  // some completed from retransmissions
}

// AtpWorker and AtpPs are Endpoints of their own, as every system's hosts are: attached to their
// ports without a Context, they send and receive the same frames, so a lossy run through the ATP
// switch gives the same sums, engine counters and host counters.
TEST(EngineAtpTest, WorkersAndThePsAsEndpointsOfTheirOwnRunAsContextsDo) {
  ClusterOptions o;
  o.program = "atp";
  o.host_loss = 0.01;
  RunResult with_contexts = RunOnce(o);
  o.bare_endpoints = true;
  Cluster c(o);
  std::vector<std::vector<float>> in(o.workers), out(o.workers, std::vector<float>(kN, 0));
  std::vector<AllReduceJob*> calls;
  for (uint32_t i = 0; i < o.workers; ++i) {
    in[i] = Gradient(i, kN);
    calls.push_back(c.BareAllReduce(i, in[i].data(), out[i].data(), kN));
  }
  ASSERT_TRUE(c.engine().Run(10'000'000'000ull).ok());
  for (uint32_t i = 0; i < o.workers; ++i) {
    ASSERT_TRUE(calls[i]->done()) << "worker " << i;
    const AtpWorkerStats& s = c.bare_worker(i).stats();
    const AtpWorkerStats& expected = with_contexts.workers[i];
    EXPECT_EQ(s.packets_sent, expected.packets_sent) << "worker " << i;
    EXPECT_EQ(s.retransmissions, expected.retransmissions) << "worker " << i;
    EXPECT_EQ(s.timeouts, expected.timeouts) << "worker " << i;
  }
  EXPECT_GT(with_contexts.workers[0].retransmissions + with_contexts.workers[1].retransmissions,
            0u);
  EXPECT_EQ(out, with_contexts.out);
  EXPECT_EQ(c.engine().CountersJson(), with_contexts.engine_counters);
  EXPECT_EQ(c.bare_ps().stats().completed, with_contexts.ps.completed);
  EXPECT_EQ(c.bare_ps().stats().completed_by_switch, with_contexts.ps.completed_by_switch);
  EXPECT_EQ(c.bare_ps().stats().duplicates, with_contexts.ps.duplicates);
}

// As an Endpoint, a worker takes only its own job's parameter packets on its job's port, and the
// PS only its own job's gradients.
TEST(EngineAtpTest, AnEndpointIgnoresOtherJobsAndOtherFrames) {
  ClusterOptions o;
  o.bare_endpoints = true;
  Cluster c(o);
  AtpJobSpec spec = c.job(0).spec;
  spec.job_id = 7;
  Result<AtpJobConfig> other = MakeAtpJobConfig(spec);
  ASSERT_TRUE(other.ok()) << other.message();
  struct Capture final : Transport {
    std::vector<std::vector<uint8_t>> frames;
    bool Send(std::span<const uint8_t> f) noexcept override {
      frames.emplace_back(f.begin(), f.end());
      return true;
    }
  } sent;
  // A worker of job 7 sends its gradients; the PS of job 1 must not count them.
  AtpWorker stranger(*other, 0, &sent);
  std::vector<float> in(200, 1.0f), out(200);
  AllReduceJob call;
  stranger.Submit(&call, in.data(), out.data(), in.size());
  stranger.Pump(0);
  ASSERT_FALSE(sent.frames.empty());
  for (const auto& f : sent.frames) c.bare_ps().OnFrame(0, f);
  c.bare_ps().OnFrame(0, std::vector<uint8_t>(60, 0));  // not ATP at all
  EXPECT_EQ(c.bare_ps().stats().gradients, 0u);
  // The same gradients of job 1 are its.
  AtpWorker member(c.job(0), 0, &sent);
  sent.frames.clear();
  AllReduceJob call1;
  member.Submit(&call1, in.data(), out.data(), in.size());
  member.Pump(0);
  ASSERT_FALSE(sent.frames.empty());
  for (const auto& f : sent.frames) c.bare_ps().OnFrame(0, f);
  EXPECT_EQ(c.bare_ps().stats().gradients, sent.frames.size());
  // A gradient is no parameter packet: the worker ignores it.
  const uint64_t before = c.bare_worker(1).stats().params_received;
  for (const auto& f : sent.frames) c.bare_worker(1).OnFrame(0, f);
  EXPECT_EQ(c.bare_worker(1).stats().params_received, before);
}

}  // namespace
}  // namespace swemu::atp_test
