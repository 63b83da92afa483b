// The partitioned engine: the same network in 1, 2 and 4 partitions (and switches spread in
// another order) writes the same pcaps, counters and samples; a link between partitions needs
// a delay; AssignPartitions balances by hosts and links and keeps 0-delay links inside.
#include <gtest/gtest.h>

#include "pipeline/engine/engine.h"
#include "pipeline/engine/partition.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t k1G = 1'000'000'000;
constexpr uint64_t k10G = 10'000'000'000;

struct Outputs {
  std::vector<std::string> pcaps;
  std::string counters;
  std::string samples;
  uint64_t events = 0;
  uint64_t windows = 0;
};

// s0:2 - s1:0, s1:1 - s2:0, s2:1 - s3:0 (10G, 1 us; 2% loss between s1 and s2). The patch
// program sends a port's frames out of its neighbour (0 and 1, 2 and 3) unless they name port
// 2. Host a (s0:0) sends to port 2 at every hop: over s0:2 to s1 and out of s1:2 to host c,
// where host d (s1:3) sends too, each of its frames reaching s1 at the same instant as one of
// a's: which enters the 1G queue first is the event key's to say, and the partitionings below
// put a and d on either side of a partition line or on one side. b (s3:1) sends back along the
// chain to e (s0:3), c to d.
Outputs RunChain(const std::string& tag, uint32_t partitions, std::vector<uint32_t> partition_of) {
  Records a, b, c, d;
  for (int i = 0; i < 300; ++i) {
    const TimeNs at = 1000 + 400 * TimeNs(i);
    a.push_back({at, Frame(kToPort2, 0, 200, uint16_t(i))});  // at s1 at + 100 + 180 + 1000
    b.push_back({at, Frame(0, uint8_t(i % 2), 64 + (i * 53) % 1400, uint16_t(1000 + i))});
    c.push_back({at, Frame(0, 0, 200, uint16_t(2000 + i))});
    d.push_back({at + 1180, Frame(kToPort2, 0, 300, uint16_t(3000 + i))});  // at s1 then too
  }
  const std::vector<std::pair<std::string, Records*>> hosts = {
      {"s0:0", &a}, {"s3:1", &b}, {"s1:2", &c}, {"s1:3", &d}, {"s0:3", nullptr}};
  Engine engine(7, 4096, partitions);
  const std::vector<LinkSpec> links = {{"s0", 2, "s1", 0, k10G, 1000, 0},
                                       {"s1", 1, "s2", 0, k10G, 1000, 0.02},
                                       {"s2", 1, "s3", 0, k10G, 1000, 0}};
  for (uint32_t i = 0; i < 4; ++i) {
    SwitchConfig config = PatchSwitch("s" + std::to_string(i), k1G);  // links: 10G
    ApplyLinkRates(links, config);
    EXPECT_TRUE(engine.AddSwitch(config, "", partition_of[i]).ok());
  }
  for (const LinkSpec& link : links) EXPECT_TRUE(engine.AddLink(link).ok());
  Outputs out;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const std::string name = tag + "_h" + std::to_string(h);
    std::string in;
    if (hosts[h].second != nullptr) WritePcap(in = TempPath(name + "_in.pcap"), *hosts[h].second);
    out.pcaps.push_back(TempPath(name + "_out.pcap"));
    const std::string sw = hosts[h].first.substr(0, 2);
    const PortId port = PortId(hosts[h].first[3] - '0');
    EXPECT_TRUE(engine.AddHostPort({sw, port, in, out.pcaps.back(), 100, 0.01}).ok());
  }
  engine.SetSampler(5000, [&](TimeNs now) {
    out.samples += std::to_string(now);
    for (std::size_t i = 0; i < engine.num_switches(); ++i) {
      out.samples += " " + std::to_string(engine.switch_at(i).tm().TotalQueued());
    }
    out.samples += "\n";
  });
  Status run = engine.Run();
  EXPECT_TRUE(run.ok()) << run.message();
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  out.counters = engine.CountersJson();
  out.events = engine.events_processed();
  out.windows = engine.windows();
  for (std::string& path : out.pcaps) path = FileBytes(path);
  return out;
}

TEST(PartitionTest, EveryPartitioningWritesTheSameBytes) {
  const Outputs one = RunChain("one", 1, {0, 0, 0, 0});
  EXPECT_EQ(one.windows, 0u);
  EXPECT_GT(one.events, 2000u);
  EXPECT_GT(one.samples.size(), 100u);
  for (std::size_t h : {2u, 3u, 4u}) EXPECT_GT(one.pcaps[h].size(), 10'000u) << h;
  struct Case {
    uint32_t partitions;
    std::vector<uint32_t> partition_of;
  };
  for (const Case& c : {Case{2, {0, 0, 1, 1}}, Case{2, {1, 0, 0, 1}}, Case{4, {0, 1, 2, 3}},
                        Case{4, {3, 2, 1, 0}}}) {
    const std::string tag = "p" + std::to_string(c.partitions) + "_" +
                            std::to_string(c.partition_of[0]);
    const Outputs many = RunChain(tag, c.partitions, c.partition_of);
    EXPECT_GT(many.windows, 10u) << tag;
    EXPECT_EQ(many.events, one.events) << tag;
    EXPECT_EQ(many.counters, one.counters) << tag;
    EXPECT_EQ(many.samples, one.samples) << tag;
    for (std::size_t h = 0; h < one.pcaps.size(); ++h) {
      EXPECT_TRUE(many.pcaps[h] == one.pcaps[h]) << tag << ": host " << h << "'s pcap differs";
    }
  }
}

TEST(PartitionTest, ALinkBetweenPartitionsWithoutDelayIsRefusedByName) {
  Engine engine(1, 64, 2);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("a", k10G), "", 0).ok());
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("b", k10G), "", 1).ok());
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("c", k10G), "", 1).ok());
  EXPECT_TRUE(engine.AddLink({"b", 1, "c", 0, k10G, 0, 0}).ok());  // one partition: no delay needed
  Status refused = engine.AddLink({"a", 1, "b", 0, k10G, 0, 0});
  EXPECT_EQ(refused.message(),
            "link a:1 b:0: 0 ns of delay between partitions 0 and 1 leaves no lookahead: give the "
            "link a delay, or both switches one partition");
  EXPECT_TRUE(engine.AddLink({"a", 1, "b", 2, k10G, 3000, 0}).ok());
  EXPECT_EQ(engine.lookahead_ns(), 3000);
  EXPECT_FALSE(engine.AddSwitch(PatchSwitch("d", k10G), "", 2).ok());  // no partition 2
  EXPECT_FALSE(engine.Run(kNever, [] { return false; }).ok());  // a stop needs one partition
}

TEST(PartitionTest, AssignPartitionsBalancesAndKeepsZeroDelayLinksInside) {
  const std::vector<std::string> switches = {"spine", "leaf1", "leaf2", "leaf3"};
  std::vector<LinkSpec> links;
  for (const char* leaf : {"leaf1", "leaf2", "leaf3"}) links.push_back({leaf, 0, "spine", 0, k10G, 1000, 0});
  const std::vector<std::string> hosts = {"leaf1", "leaf1", "leaf2", "leaf2", "leaf3", "leaf3"};
  // Weights: spine 1 + 3 links = 4, each leaf 1 + 2 hosts + 1 link = 4.
  Result<std::vector<uint32_t>> two = AssignPartitions(switches, links, hosts, 2);
  ASSERT_TRUE(two.ok()) << two.message();
  EXPECT_EQ(*two, (std::vector<uint32_t>{0, 1, 0, 1}));
  Result<std::vector<uint32_t>> four = AssignPartitions(switches, links, hosts, 4);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(*four, (std::vector<uint32_t>{0, 1, 2, 3}));
  links[0].delay_ns = 0;  // leaf1 - spine: one group, weight 8
  Result<std::vector<uint32_t>> joined = AssignPartitions(switches, links, hosts, 2);
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(*joined, (std::vector<uint32_t>{0, 0, 1, 1}));
  Result<std::vector<uint32_t>> too_many = AssignPartitions(switches, links, hosts, 4);
  EXPECT_EQ(too_many.message(),
            "4 partitions: links without delay (leaf1:0 - spine:0) leave 3 groups of switches "
            "that may run apart (a link between partitions needs a delay)");
  EXPECT_EQ(AssignPartitions(switches, links, hosts, 5).message(),
            "5 partitions for 4 switches: at most one partition per switch");
  EXPECT_FALSE(AssignPartitions(switches, links, hosts, 0).ok());
}

}  // namespace
}  // namespace swemu::engine_test
