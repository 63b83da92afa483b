// The DLCP experiment's baselines beside DCTCP (hostlib/dlcp/experiment.h): PIAS and pFabric
// complete every flow of the iteration; PIAS's short flows finish sooner than DCTCP's in the
// same incast; pFabric's switches spray one flow's packets over every spine where DCTCP's and
// PIAS's keep it on one; --schemes' list; the report compares DLCP with each baseline.
#include <gtest/gtest.h>

#include <map>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "hostlib/dlcp/experiment.h"
#include "hostlib/dlcp/fabric.h"

namespace swemu {
namespace {

DlcpExperimentOptions Small() {
  DlcpExperimentOptions o;
  o.tors = 2;
  o.hosts_per_tor = 2;
  o.scale = 256;
  return o;
}

TEST(DlcpBaselines, SchemesAreNamedOnceWithDlcpAndABaseline) {
  Result<std::vector<DlcpScheme>> all = ParseDlcpSchemes("dlcp,dctcp,pias,pfabric");
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ(*all, (std::vector<DlcpScheme>{DlcpScheme::kDlcp, DlcpScheme::kDctcp,
                                           DlcpScheme::kPias, DlcpScheme::kPfabric}));
  Result<std::vector<DlcpScheme>> two = ParseDlcpSchemes("pfabric,dlcp");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, (std::vector<DlcpScheme>{DlcpScheme::kPfabric, DlcpScheme::kDlcp}));
  for (const char* bad : {"", "dlcp", "dctcp,pias", "dlcp,dctcp,dctcp", "dlcp,tcp", "dlcp,,pias",
                          "DLCP,dctcp"}) {
    EXPECT_FALSE(ParseDlcpSchemes(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseDlcpSchemes("dlcp,reno").message(),
            "\"reno\": not a scheme (dlcp, dctcp, pias, pfabric)");
}

// Mean completion time of the flows of at most `bytes`.
double ShortFlowsMeanMs(const DlcpRunResult& run, uint64_t bytes) {
  double sum = 0;
  int n = 0;
  for (const DlcpFlowResult& f : run.flows) {
    if (f.bytes > bytes) continue;
    sum += static_cast<double>(f.fct_ns);
    ++n;
  }
  return n == 0 ? 0 : sum / n / 1e6;
}

TEST(DlcpBaselines, EveryBaselineCompletesEveryFlowAndPiasSpeedsTheShortOnes) {
  const DlcpExperimentOptions o = Small();
  std::map<DlcpScheme, DlcpRunResult> runs;
  for (DlcpScheme s : {DlcpScheme::kDlcp, DlcpScheme::kDctcp, DlcpScheme::kPias,
                       DlcpScheme::kPfabric}) {
    // A run fails when a flow does not finish or a pull never starts.
    Result<DlcpRunResult> r = RunDlcpExperiment(o, s);
    ASSERT_TRUE(r.ok()) << DlcpSchemeName(s) << ": " << r.message();
    EXPECT_EQ(r->transport, DlcpSchemeName(s));
    runs[s] = std::move(*r);
  }
  const DlcpRunResult& dctcp = runs[DlcpScheme::kDctcp];
  const DlcpRunResult& pias = runs[DlcpScheme::kPias];
  const DlcpRunResult& pfabric = runs[DlcpScheme::kPfabric];
  SCOPED_TRACE(FormatDlcpComparison(o, runs[DlcpScheme::kDlcp], {&dctcp, &pias, &pfabric}, false));
  for (const DlcpRunResult* b : {&pias, &pfabric}) {
    ASSERT_EQ(b->flows.size(), dctcp.flows.size());
    for (std::size_t f = 0; f < b->flows.size(); ++f) {
      EXPECT_EQ(b->flows[f].bytes, dctcp.flows[f].bytes);
      EXPECT_GT(b->flows[f].fct_ns, 0);
    }
  }
  EXPECT_TRUE(dctcp.settings.empty());
  EXPECT_NE(pias.settings.find("PIAS: 8 levels"), std::string::npos);
  EXPECT_NE(pfabric.settings.find("fixed RTO"), std::string::npos);
  // The flows up to PIAS's first threshold (an eighth of them) leave in its top queue.
  const std::size_t at = pias.settings.find("reach ") + 6;
  const uint64_t first = std::stoull(pias.settings.substr(at));
  EXPECT_LT(ShortFlowsMeanMs(pias, first), ShortFlowsMeanMs(dctcp, first));
  EXPECT_LT(pfabric.MeanFctMs(), dctcp.MeanFctMs());
}

// One TCP flow from tor0's host to tor1's across 2 spines: how many of its packets each spine
// carried toward tor1.
std::vector<uint64_t> SpinePackets(DlcpScheme scheme) {
  const TopologyConfig topo = DlcpLeafSpine({2, 1, 2, 10'000'000'000, 5'000, 1});
  Engine engine(1, 1 << 12);
  DlcpFabricScheme fabric;
  fabric.spray = scheme == DlcpScheme::kPfabric;
  Result<std::vector<DlcpHostAddress>> hosts = AddDlcpFabric(engine, topo, fabric, 1);
  EXPECT_TRUE(hosts.ok()) << hosts.message();
  if (!hosts.ok()) return {};
  const DlcpHostAddress& a = (*hosts)[0];
  const DlcpHostAddress& b = (*hosts)[1];
  EngineTransport* ta = *EngineTransport::Attach(engine, "tor0", 0, 5'000);
  EngineTransport* tb = *EngineTransport::Attach(engine, "tor1", 0, 5'000);
  EcnTcpOptions options;
  options.link_bps = a.link_bps;
  TcpHost sender(*ta, a.mac, a.ip, options);
  TcpHost receiver(*tb, b.mac, b.ip, options);
  ta->SetEndpoint(&sender);
  tb->SetEndpoint(&receiver);
  sender.AddFlow({{a.gateway, b.ip, 5000}, 10000, 0, kNever, 100 * 1448});
  receiver.Listen(5000);
  EXPECT_TRUE(engine.Run().ok());
  EXPECT_EQ(receiver.sink(5000)->Find(a.ip, 10000)->bytes, 100u * 1448);
  std::vector<uint64_t> per_spine;
  for (const char* spine : {"spine0", "spine1"}) {
    const TrafficManager& tm = engine.FindSwitch(spine)->tm();
    uint64_t n = 0;
    for (int q = 0; q < 8; ++q) n += tm.queue_counters(1, q).dequeued;  // port 1: tor1
    per_spine.push_back(n);
  }
  return per_spine;
}

TEST(DlcpBaselines, PfabricSpraysAFlowOverEverySpineAndPiasKeepsItOnOne) {
  const std::vector<uint64_t> sprayed = SpinePackets(DlcpScheme::kPfabric);
  ASSERT_EQ(sprayed.size(), 2u);
  EXPECT_EQ(sprayed[0], 50u);  // round robin: every other packet
  EXPECT_EQ(sprayed[1], 50u);
  const std::vector<uint64_t> hashed = SpinePackets(DlcpScheme::kPias);
  ASSERT_EQ(hashed.size(), 2u);
  EXPECT_EQ(hashed[0] + hashed[1], 100u);
  EXPECT_TRUE(hashed[0] == 0 || hashed[1] == 0);
}

TEST(DlcpBaselines, TheReportComparesDlcpWithEachBaseline) {
  const DlcpExperimentOptions o = Small();
  Result<DlcpRunResult> d = RunDlcpExperiment(o, DlcpScheme::kDlcp);
  Result<DlcpRunResult> b = RunDlcpExperiment(o, DlcpScheme::kDctcp);
  Result<DlcpRunResult> p = RunDlcpExperiment(o, DlcpScheme::kPfabric);
  ASSERT_TRUE(d.ok() && b.ok() && p.ok());
  const std::string one = FormatDlcpComparison(o, *d, *b, false);
  EXPECT_EQ(FormatDlcpComparison(o, *d, {&*b}, false), one);
  EXPECT_NE(one.find("; DCTCP RTOmin 10 ms\n"), std::string::npos) << one;
  const std::string two = FormatDlcpComparison(o, *d, {&*b, &*p}, true);
  EXPECT_NE(two.find("FCT (ms)                    DCTCP       DLCP"), std::string::npos) << two;
  EXPECT_NE(two.find("FCT (ms)                  pFabric       DLCP"), std::string::npos) << two;
  EXPECT_NE(two.find("up to -88.6%"), std::string::npos);  // the paper's tail against pFabric
  EXPECT_NE(two.find("\npFabric: 8 levels"), std::string::npos);
  EXPECT_NE(two.find("; DCTCP RTOmin 10 ms\n"), std::string::npos);  // pFabric's RTO is its own
  EXPECT_NE(two.find("  pFabric "), std::string::npos);              // in every layer's line
  const std::string csv = DlcpFlowsCsv({&*d, &*b, &*p});
  EXPECT_NE(csv.find("\npfabric,push,"), std::string::npos);
  EXPECT_EQ(DlcpFlowsCsv(*d, *b), DlcpFlowsCsv({&*d, &*b}));
}

}  // namespace
}  // namespace swemu
