// Several switches joined by links: timing along a chain, determinism, loss, and the one-line
// errors for a bad topology.
#include <gtest/gtest.h>

#include "pipeline/engine/engine.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t k1G = 1'000'000'000;
constexpr uint64_t k10G = 10'000'000'000;

// host -> a:0, a:1 -- b:0, b:1 -- c:0, c:1 -> host. Links are 10G with 1 us delay; c's ports
// are 1G. Returns the output pcap's path.
std::string RunChain(const std::string& tag, const Records& input, uint64_t seed, double loss,
                     std::string* counters_json = nullptr) {
  const std::string in = TempPath(tag + "_in.pcap"), out = TempPath(tag + "_out.pcap");
  WritePcap(in, input);
  Engine engine(seed, 1024);
  const std::vector<LinkSpec> links = {{"a", 1, "b", 0, k10G, 1000, loss},
                                       {"b", 1, "c", 0, k10G, 1000, 0}};
  for (SwitchConfig config : {PatchSwitch("a", 0), PatchSwitch("b", 0), PatchSwitch("c", k1G)}) {
    ApplyLinkRates(links, config);
    EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  }
  for (const LinkSpec& link : links) EXPECT_TRUE(engine.AddLink(link).ok());
  EXPECT_TRUE(engine.AddHostPort({"a", 0, in, "", 0, 0}).ok());
  EXPECT_TRUE(engine.AddHostPort({"c", 1, "", out, 0, 0}).ok());
  Status run = engine.Run();
  EXPECT_TRUE(run.ok()) << run.message();
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_EQ(engine.pool().InUse(), 0u);
  if (counters_json != nullptr) *counters_json = engine.CountersJson();
  return out;
}

Records ManyFrames(int n) {
  Records records;
  for (int i = 0; i < n; ++i) {
    records.push_back({1000 + 200 * TimeNs(i), Frame(0, 0, 64 + (i * 37) % 1400, uint16_t(i))});
  }
  return records;
}

// A 100-byte frame takes 99.2 ns at 10G (100 ns counted for arrival) and 992 ns at 1G.
TEST(EngineTopologyTest, ChainTimingAddsSerialisationAndDelayPerHop) {
  const std::string out =
      RunChain("chain", {{1000, Frame(0, 0, 100, 1)}, {1000, Frame(0, 0, 100, 2)}}, 1, 0);
  // Frame 1: a sends at 1000, b gets it at 2100, c at 3200, the host at 3200 + 992.
  // Frame 2: a's link is free at 1099.2, so it starts at 1100; c's 1G port is busy until 4192.
  EXPECT_EQ(Timestamps(ReadPcap(out)), (std::vector<TimeNs>{4192, 5184}));
}

// ApplyLinkRates gives both ends the link's rate from creation, over the switch's own per-port
// rate; ports the switch lacks are left for AddLink to name.
TEST(EngineTopologyTest, LinkRateShapesBothEndsFromCreation) {
  const std::vector<LinkSpec> links = {{"a", 3, "b", 2, k10G, 0, 0}, {"a", 9, "b", 1, k10G, 0, 0}};
  SwitchConfig a = PatchSwitch("a", k1G);
  a.tm.port_rates = {{3, 5 * k1G}};
  ApplyLinkRates(links, a);
  EXPECT_EQ(a.tm.port_rates, (std::vector<PortRate>{{3, 5 * k1G}, {3, k10G}}));
  SwitchConfig b = PatchSwitch("b", k1G);
  ApplyLinkRates(links, b);
  EXPECT_EQ(b.tm.port_rates, (std::vector<PortRate>{{2, k10G}, {1, k10G}}));
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(a, "").ok());
  ASSERT_TRUE(engine.AddSwitch(b, "").ok());
  EXPECT_EQ(engine.FindSwitch("a")->tm().PortRate(3), k10G);
  EXPECT_EQ(engine.FindSwitch("b")->tm().PortRate(2), k10G);
  EXPECT_EQ(engine.FindSwitch("a")->tm().PortRate(0), k1G);
  ASSERT_TRUE(engine.AddLink(links[0]).ok());
  EXPECT_EQ(engine.FindSwitch("a")->tm().PortRate(3), k10G);  // the link left the TM alone
}

// A link does not change a switch's TM: an end shaped to another rate (a script's set_port_rate
// on a linked port, a caller that skipped ApplyLinkRates) is refused, naming the port.
TEST(EngineTopologyTest, LinkRefusesAnEndShapedToAnotherRate) {
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("a", k10G), "").ok());
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("b", k1G), "").ok());
  Status linked = engine.AddLink({"a", 3, "b", 2, k10G, 0, 0});
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.message().find("link a:3 b:2: b:2 is shaped to 1000000000 bit/s, not the "
                                  "link's 10000000000"),
            std::string::npos)
      << linked.message();
  EXPECT_EQ(engine.FindSwitch("b")->tm().PortRate(2), k1G);
}

TEST(EngineTopologyTest, SameInputsAndSeedGiveIdenticalBytes) {
  std::string json1, json2;
  const std::string out1 = RunChain("det1", ManyFrames(200), 7, 0.3, &json1);
  const std::string bytes1 = FileBytes(out1);
  const std::string out2 = RunChain("det2", ManyFrames(200), 7, 0.3, &json2);
  EXPECT_FALSE(bytes1.empty());
  EXPECT_EQ(bytes1, FileBytes(out2));
  EXPECT_EQ(json1, json2);
}

TEST(EngineTopologyTest, LossDependsOnTheSeed) {
  std::string json;
  const std::string bytes7 = FileBytes(RunChain("seed7", ManyFrames(200), 7, 0.3, &json));
  EXPECT_NE(json.find("\"loss_injected\""), std::string::npos);
  const std::string bytes8 = FileBytes(RunChain("seed8", ManyFrames(200), 8, 0.3));
  EXPECT_NE(bytes7, bytes8);
  // Without loss the seed changes nothing.
  EXPECT_EQ(FileBytes(RunChain("noloss7", ManyFrames(50), 7, 0)),
            FileBytes(RunChain("noloss8", ManyFrames(50), 8, 0)));
}

TEST(EngineTopologyTest, LossRateIsRoughlyTheConfiguredOne) {
  const size_t delivered = ReadPcap(RunChain("rate", ManyFrames(1000), 3, 0.25)).size();
  EXPECT_GT(delivered, 700u);
  EXPECT_LT(delivered, 800u);
}

class EngineErrorTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(engine_.AddSwitch(PatchSwitch("a", k10G), "").ok());  // the links' rate
    ASSERT_TRUE(engine_.AddSwitch(PatchSwitch("b", k10G), "").ok());
  }
  static void ExpectError(const Status& status, const std::string& needle) {
    ASSERT_FALSE(status.ok()) << "expected an error containing " << needle;
    EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
  }
  Engine engine_{1, 64};
};

TEST_F(EngineErrorTest, DuplicateSwitchName) {
  ExpectError(engine_.AddSwitch(PatchSwitch("a", 0), ""), "duplicate switch name a");
}

TEST_F(EngineErrorTest, UnknownSwitchInLinkAndHost) {
  ExpectError(engine_.AddLink({"a", 0, "nope", 0, k10G, 0, 0}), "unknown switch nope");
  ExpectError(engine_.AddHostPort({"ghost", 0, "", "", 0, 0}), "unknown switch ghost");
}

TEST_F(EngineErrorTest, PortOutOfRange) {
  ExpectError(engine_.AddLink({"a", 4, "b", 0, k10G, 0, 0}), "a:4: port out of range");
  ExpectError(engine_.AddHostPort({"b", 9, "", "", 0, 0}), "b:9: port out of range");
}

TEST_F(EngineErrorTest, PortUsedTwice) {
  ASSERT_TRUE(engine_.AddLink({"a", 1, "b", 0, k10G, 0, 0}).ok());
  ExpectError(engine_.AddHostPort({"a", 1, "", "", 0, 0}), "already used by link b:0");
  ExpectError(engine_.AddLink({"b", 0, "a", 2, k10G, 0, 0}), "already used");
  ASSERT_TRUE(engine_.AddHostPort({"a", 0, "", "", 0, 0}).ok());
  ExpectError(engine_.AddHostPort({"a", 0, "", "", 0, 0}), "already used by host");
  ExpectError(engine_.AddLink({"a", 3, "a", 3, k10G, 0, 0}), "two different ports");
}

TEST_F(EngineErrorTest, BadRateAndLoss) {
  ExpectError(engine_.AddLink({"a", 1, "b", 1, 0, 0, 0}), "rate must be > 0");
  ExpectError(engine_.AddLink({"a", 1, "b", 1, k10G, 0, 1.5}), "loss must be in [0, 1]");
  ExpectError(engine_.AddHostPort({"a", 0, "", "", 0, -0.1}), "loss must be in [0, 1]");
}

TEST_F(EngineErrorTest, MissingInputPcap) {
  ExpectError(engine_.AddHostPort({"a", 0, "/nonexistent/in.pcap", "", 0, 0}),
              "/nonexistent/in.pcap");
}

TEST_F(EngineErrorTest, FailingStartupScriptLine) {
  const std::string script = TempPath("bad.cli");
  std::ofstream(script) << "# comment\nno_such_command 1 2\n";
  ExpectError(engine_.AddSwitch(PatchSwitch("c", 0), script), "switch c: " + script + ":2: ");
  EXPECT_EQ(engine_.FindSwitch("c"), nullptr);
}

TEST_F(EngineErrorTest, PortRateForAMissingPort) {
  SwitchConfig config = PatchSwitch("c", 0);
  config.tm.port_rates = {{7, k1G}};
  ExpectError(engine_.AddSwitch(config, ""), "switch c: tm port_rates: port 7 out of range");
}

}  // namespace
}  // namespace swemu::engine_test
