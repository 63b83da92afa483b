// MAC learning with [dpdk] workers = 2, as real time runs it without DPDK: two replicas, the
// digest pump draining both channels and delivering every record to both, one table.
#include <gtest/gtest.h>

#include <set>

#include "pipeline/wire/frame_builder.h"
#include "swemu/digest_pump.h"
#include "swemu/replica_merge.h"
#include "tests/swemu/multicore_replicas.h"

namespace swemu {
namespace {

MacAddr Mac(uint64_t n) { return MacAddr::FromU64(0x020000000000ULL | n); }

std::vector<uint8_t> Udp(uint64_t dst, uint64_t src, uint16_t sport) {
  return FrameBuilder()
      .Eth(Mac(dst), Mac(src))
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2"))
      .Udp(sport, 2000)
      .Payload(32)
      .Build();
}

TEST(LearningReplicas, DigestsFromEitherLcoreFillOneTable) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "l2l3";
  config.program_options.Set("learning", "on");
  testing::Replicas r(config, 2);
  DigestPumpHooks hooks;
  hooks.replicas = 2;
  hooks.drain = [&r](uint32_t i, std::vector<DigestRecord>* out) {
    std::vector<DigestRecord> got = r.sw(i).digests()->DrainAll();
    out->insert(out->end(), got.begin(), got.end());
    return true;
  };
  hooks.execute = [&r](const std::string& line) -> Result<std::string> {
    for (uint32_t i = 0; i < r.size(); ++i) {
      Result<std::string> answer = r.sw(i).commands().Execute(line);
      if (!answer.ok()) return answer;
    }
    return std::string();
  };
  hooks.now = [] { return TimeNs{1'000'000'000}; };
  DigestPump pump(hooks, 1'000'000, 100'000'000);
  // Hosts 1..4 on ports 0..3, each sending flows until both lcores have run some ingress.
  std::set<uint32_t> lcores;
  for (uint16_t flow = 0; flow < 16; ++flow) {
    for (uint64_t h = 1; h <= 4; ++h) {
      lcores.insert(r.Receive(static_cast<PortId>(h - 1), Udp(9, h, 1000 + flow)));
    }
  }
  ASSERT_EQ(lcores.size(), 2u);
  EXPECT_EQ(r.Drain().size(), 16u * 4 * 3);  // all flooded: nothing learned yet
  EXPECT_GT(r.sw(0).digests()->counters().emitted, 0u);
  EXPECT_GT(r.sw(1).digests()->counters().emitted, 0u);
  ASSERT_TRUE(pump.RunOnce());
  const std::vector<std::string> shows = r.Answers("show mac");
  EXPECT_EQ(shows[0], shows[1]);
  EXPECT_NE(shows[0].find("learned 4,"), std::string::npos) << shows[0];
  // show counters over both: the digests summed, the control plane's counters one replica's.
  const std::string merged = MergeCountersJson(r.Answers("show counters"));
  const DigestCounters digests = r.sw(0).digests()->counters() + r.sw(1).digests()->counters();
  EXPECT_NE(merged.find("\"emitted\": " + std::to_string(digests.emitted) + ","),
            std::string::npos) << merged;
  EXPECT_NE(merged.find("\"learning\": {\n      \"entries\": 4,"), std::string::npos) << merged;
  EXPECT_NE(merged.find("\"learned\": 4,"), std::string::npos) << merged;
  // Now every flow to host 3 leaves by port 2 alone, whichever lcore runs its ingress.
  for (uint16_t flow = 0; flow < 16; ++flow) r.Receive(0, Udp(3, 1, 1000 + flow));
  std::vector<testing::Sent> out = r.Drain();
  ASSERT_EQ(out.size(), 16u);
  for (const testing::Sent& sent : out) EXPECT_EQ(sent.port, 2u);
}

TEST(DigestPumpLines, RecordsGoInLinesOfAtMostThirtyTwo) {
  std::vector<DigestRecord> records(40, DigestRecord{5, {7, 8}});
  std::vector<std::string> lines = DigestPump::DeliverLines(records, 9);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "digest_deliver 9 5 7 8 5 7 8 5 7 8 5 7 8 5 7 8 5 7 8 5 7 8 5 7 8");
}

}  // namespace
}  // namespace swemu
