// GOAT's motivating example (section III-B, Figure 2) in the virtual-time engine: 1 PS on s3, 4
// workers (w1, w2 on s1; w3, w4 on s2), links s1-s3, s2-s3 and the direct s1-s2 link the text
// needs, one aggregator slot per switch, each worker's gradient in 3 fragments A, B, C. The
// asynchronous arrival of Figure 2(b): w1 and w3 send all three fragments first, w2 and w4
// 10 us later. The PS's host link is slow (1 ms), so no result comes back (and frees a slot)
// while the gradients are on their way, as the paper's sequences assume.
//   - ATP-style sharing as the paper describes it (goat program, `share` entries: first come
//     first served, slots held until the result returns, s3 aggregating raw and partial
//     fragments with fan-in 4): 7 fragments reach the PS; 17 switch-to-switch and
//     switch-to-PS traversals (29 with the 12 worker links).
//   - GOAT (A on s1, B on s2, C on s3): 3 fragments, 13 traversals (25).
//   - swemu's atp program (ATP as built: a fragment that collides at its first switch is sent
//     on as a retransmission, which the next switch does not aggregate): 9 and 19 (31).
// Every worker's result is the exact sum in all three.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/common/engine_transport.h"
#include "hostlib/goat/fabric.h"
#include "hostlib/goat/ps.h"
#include "hostlib/goat/worker.h"
#include "pipeline/engine/engine.h"

namespace swemu {
namespace {

constexpr uint16_t kJob = 1;
constexpr uint16_t kElements = 8;
constexpr TimeNs kLateStart = 10'000;  // w2 and w4
constexpr TimeNs kPsDelay = 1'000'000;
constexpr TimeNs kGradientsPassed = 500'000;  // every gradient has left s3 by now
constexpr uint64_t kRate = 10'000'000'000ull;

struct Counts {
  uint64_t to_ps = 0;       // gradient fragments the PS received
  uint64_t traversals = 0;  // switch-to-switch and switch-to-PS, gradients only
  bool exact = true;        // every worker got the exact sum
};

GoatFabricSpec Figure2Spec() {
  GoatFabricSpec spec = GoatFabricSpec::ThreeSwitch(2, 1);
  spec.hosts.back().delay_ns = kPsDelay;
  return spec;
}

// Worker w's fragment f: distinct values per worker, fragment and element.
int32_t Value(uint32_t w, uint64_t i) { return static_cast<int32_t>(1000 * (w + 1) + 7 * i); }

uint64_t SwitchTx(Engine& engine, const std::string& sw, PortId port) {
  return engine.FindSwitch(sw)->counters().ports[port].tx_packets;
}

Counts RunGoat(const GoatPublished& published) {
  Result<GoatFabric> fabric = GoatFabric::Create(Figure2Spec());
  EXPECT_TRUE(fabric.ok()) << fabric.message();
  GoatJob job = fabric->MakeJob(kJob, kElements, {1, 1, 1});
  job.node = published.node;
  EXPECT_TRUE(job.Validate().ok()) << job.Validate().message();
  Engine engine(1);
  Result<std::vector<EngineTransport*>> t =
      fabric->Build(engine, published, kJob, kElements, {kRate, 1000, 500, 0, 0, 0});
  EXPECT_TRUE(t.ok()) << t.message();
  if (!t.ok()) return {};
  const uint64_t n = job.total_elements();
  std::vector<std::vector<int32_t>> in(4, std::vector<int32_t>(n));
  std::vector<std::vector<int32_t>> out(4, std::vector<int32_t>(n, 0));
  std::vector<std::unique_ptr<GoatWorker>> workers;
  for (uint32_t w = 0; w < 4; ++w) {
    for (uint64_t i = 0; i < n; ++i) in[w][i] = Value(w, i);
    // The RTO above the 2 ms round trip through the slow PS link: no retransmission.
    workers.push_back(std::make_unique<GoatWorker>(job, w, (*t)[w],
                                                   GoatWorkerOptions{64, 20'000'000, 64'000'000}));
    const TimeNs start = (w == 1 || w == 3) ? kLateStart : (w == 2 ? 100 : 0);
    EXPECT_TRUE(workers[w]->StartRound(0, in[w], out[w], start).ok());
    (*t)[w]->SetEndpoint(workers[w].get());
  }
  GoatPs ps(job, (*t)[4]);
  (*t)[4]->SetEndpoint(&ps);
  EXPECT_TRUE(engine.Run(kGradientsPassed).ok());
  Counts c;
  c.traversals = engine.counters().link_frames + SwitchTx(engine, "s3", 0);
  EXPECT_TRUE(engine.Run(100'000'000).ok());
  c.to_ps = ps.stats().gradients;
  for (uint32_t w = 0; w < 4; ++w) {
    EXPECT_TRUE(workers[w]->done()) << "worker " << w;
    EXPECT_EQ(workers[w]->stats().retransmissions, 0u);
    for (uint64_t i = 0; i < n; ++i) {
      const int32_t exact = Value(0, i) + Value(1, i) + Value(2, i) + Value(3, i);
      c.exact = c.exact && out[w][i] == exact;
    }
  }
  return c;
}

TEST(GoatFigure2, AtpStyleSharingDeliversSevenFragmentsToThePs) {
  Result<GoatFabric> fabric = GoatFabric::Create(Figure2Spec());
  ASSERT_TRUE(fabric.ok()) << fabric.message();
  const GoatPublished sharing = fabric->PublishSharing({1, 1, 1});
  // The fan-ins the paper gives: s1 and s2 their two workers, s3 all four.
  EXPECT_EQ(sharing.entries.at("s1")[0].fan_in, 2u);
  EXPECT_EQ(sharing.entries.at("s3")[0].fan_in, 4u);
  const Counts c = RunGoat(sharing);
  EXPECT_EQ(c.to_ps, 7u);
  EXPECT_EQ(c.traversals, 17u);
  EXPECT_EQ(c.traversals + 12, 29u);
  EXPECT_TRUE(c.exact);
}

TEST(GoatFigure2, GoatDeliversThreeFragmentsToThePs) {
  GoatPublished goat;
  goat.node.assign(4, std::vector<uint16_t>{1, 2, 3});  // A on s1, B on s2, C on s3
  for (uint16_t g = 0; g < 3; ++g) {
    goat.entries["s" + std::to_string(g + 1)].push_back({g, false, 0, 1, 4});
  }
  const Counts c = RunGoat(goat);
  EXPECT_EQ(c.to_ps, 3u);
  EXPECT_EQ(c.traversals, 13u);
  EXPECT_EQ(c.traversals + 12, 25u);
  EXPECT_TRUE(c.exact);
}

TEST(GoatFigure2, AtpProgramAsBuiltDeliversNineFragmentsToThePs) {
  Result<GoatFabric> fabric = GoatFabric::Create(Figure2Spec());
  ASSERT_TRUE(fabric.ok()) << fabric.message();
  const GoatFabricSpec& spec = fabric->spec();
  AtpJobSpec atp;
  atp.job_id = kJob;
  atp.elements = kElements;
  atp.group_ip = MakeIpv4Addr(239, 1, 1, 1);
  for (uint32_t h = 0; h < 4; ++h) {
    atp.workers.push_back(
        {spec.hosts[h].name, GoatFabric::HostMac(h), GoatFabric::HostIp(h), spec.hosts[h].sw});
  }
  atp.ps = {"ps", GoatFabric::HostMac(4), GoatFabric::HostIp(4), "s3"};
  Result<AtpJobConfig> job = MakeAtpJobConfig(atp);
  ASSERT_TRUE(job.ok()) << job.message();
  Engine engine(1);
  // The fabric's dmac entries (its goat_route lines are not atp's), one aggregator per switch,
  // parameter packets multicast down the tree: s3 to s1 and s2, each of them to its workers.
  const std::vector<std::string> members = {"0 1", "0 1", "1 2"};
  for (uint32_t s = 0; s < 3; ++s) {
    SwitchConfig config;
    config.name = spec.switches[s].name;
    config.num_ports = spec.switches[s].ports;
    config.program = "atp";
    config.program_options.Set("elements", std::to_string(kElements));
    config.program_options.Set("aggregators", "1");
    config.tm.port_rate_bps = kRate;
    std::string script;
    const std::string all = fabric->StaticScript(s);
    for (std::size_t at = 0; at < all.size();) {
      const std::size_t nl = all.find('\n', at);
      const std::string line = all.substr(at, nl - at + 1);
      if (line.starts_with("table_add dmac")) script += line;
      at = nl + 1;
    }
    script += "mc_mgrp_create 1\nmc_node_create 0 " + members[s] +
              "\nmc_node_associate 1 0\ntable_add dmac multicast " + FormatMac(job->group_mac) +
              " => 1\ntable_add atp_job aggregate 1 => 1\n";
    ASSERT_TRUE(engine.AddSwitch(config, "").ok());
    const Status ran = engine.FindSwitch(config.name)->commands().RunText(script, config.name);
    ASSERT_TRUE(ran.ok()) << ran.message();
  }
  for (const auto& l : spec.links) {
    ASSERT_TRUE(engine.AddLink({l.a, l.a_port, l.b, l.b_port, kRate, 1000, 0}).ok());
  }
  std::vector<std::unique_ptr<Context>> hosts;
  std::vector<EngineTransport*> transports;
  for (uint32_t h = 0; h < 5; ++h) {
    Result<EngineTransport*> t = EngineTransport::Attach(
        engine, spec.hosts[h].sw, spec.hosts[h].port, h == 4 ? kPsDelay : 500, 0);
    ASSERT_TRUE(t.ok()) << t.message();
    hosts.push_back(std::make_unique<Context>(
        AtpHostConfig{GoatFabric::HostMac(h), GoatFabric::HostIp(h)}, *t));
    (*t)->SetEndpoint(hosts.back().get());
    transports.push_back(*t);
  }
  ASSERT_TRUE(hosts[4]->ServeJob(*job).ok());
  const std::size_t n = 3 * kElements;
  std::vector<std::vector<float>> in(4, std::vector<float>(n));
  std::vector<std::vector<float>> out(4, std::vector<float>(n, 0));
  std::vector<AllReduceJob*> calls(4, nullptr);
  for (uint32_t w = 0; w < 4; ++w) {
    ASSERT_TRUE(hosts[w]->JoinJob(*job).ok());
    for (std::size_t i = 0; i < n; ++i) in[w][i] = static_cast<float>(w + 1) + 0.25f * i;
  }
  auto start = [&](uint32_t w) {
    calls[w] = hosts[w]->AllReduce(kJob, in[w].data(), out[w].data(), n);
    transports[w]->Wake();
  };
  start(0);
  ASSERT_TRUE(engine.Run(100).ok());
  start(2);
  ASSERT_TRUE(engine.Run(kLateStart).ok());
  start(1);
  start(3);
  ASSERT_TRUE(engine.Run(kGradientsPassed).ok());
  const uint64_t traversals = engine.counters().link_frames + SwitchTx(engine, "s3", 0);
  ASSERT_TRUE(engine.Run(100'000'000).ok());
  EXPECT_EQ(hosts[4]->ps_stats(kJob)->gradients, 9u);
  EXPECT_EQ(traversals, 19u);
  for (uint32_t w = 0; w < 4; ++w) {
    ASSERT_NE(calls[w], nullptr);
    EXPECT_TRUE(calls[w]->done());
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_FLOAT_EQ(out[w][i], 10.0f + 4 * 0.25f * i) << "worker " << w << " element " << i;
    }
  }
}

}  // namespace
}  // namespace swemu
