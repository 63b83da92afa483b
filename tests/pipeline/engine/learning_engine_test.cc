// MAC learning in virtual time: pcap hosts on an l2l3 switch with `learning = on` and no dmac
// entry. The first frame to an unknown host is flooded; once the control plane has taken the
// digests (10 us after each packet), the answer and what follows are unicast. Run twice, the
// outputs are byte-identical.
#include <gtest/gtest.h>

#include "pipeline/engine/engine.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu {
namespace {

using engine_test::ReadPcap;
using engine_test::TempPath;
using engine_test::WritePcap;

MacAddr Mac(uint64_t n) { return MacAddr::FromU64(0x020000000000ULL | n); }

std::vector<uint8_t> Udp(uint64_t dst, uint64_t src) {
  return FrameBuilder()
      .Eth(Mac(dst), Mac(src))
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2"))
      .Udp(1000, 2000)
      .Payload(64)
      .Build();
}

// Host h (1..3) on port h-1; host 1 talks to host 2, host 3 only listens.
std::vector<std::vector<PcapRecord>> RunOnce(const std::string& tag) {
  SwitchConfig config;
  config.name = "sw0";
  config.num_ports = 3;
  config.program = "l2l3";
  config.program_options.Set("learning", "on");
  Engine engine(1);
  EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  WritePcap(TempPath(tag + "in1.pcap"), {{1'000, Udp(2, 1)}, {200'000, Udp(2, 1)}});
  WritePcap(TempPath(tag + "in2.pcap"), {{100'000, Udp(1, 2)}});
  WritePcap(TempPath(tag + "in3.pcap"), engine_test::Records{});
  for (int h = 1; h <= 3; ++h) {
    const std::string n = std::to_string(h);
    HostPortSpec spec{"sw0", static_cast<PortId>(h - 1), TempPath(tag + "in" + n + ".pcap"),
                      TempPath(tag + "out" + n + ".pcap"), 1'000, 0};
    EXPECT_TRUE(engine.AddHostPort(spec).ok());
  }
  Status ran = engine.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  Result<std::string> mac = engine.FindSwitch("sw0")->commands().Execute("show mac");
  EXPECT_NE(mac->find("learned 2,"), std::string::npos) << *mac;
  std::vector<std::vector<PcapRecord>> out;
  for (int h = 1; h <= 3; ++h) {
    out.push_back(ReadPcap(TempPath(tag + "out" + std::to_string(h) + ".pcap")));
  }
  return out;
}

TEST(LearningEngine, FloodsTheUnknownThenUnicastsOnceLearned) {
  std::vector<std::vector<PcapRecord>> out = RunOnce("learn_a_");
  ASSERT_EQ(out[0].size(), 1u);  // host 1 gets host 2's answer only
  EXPECT_EQ(out[0][0].bytes, Udp(1, 2));
  ASSERT_EQ(out[1].size(), 2u);  // host 2: the flooded first frame, then the unicast one
  ASSERT_EQ(out[2].size(), 1u);  // host 3: the flooded first frame only
  EXPECT_LT(out[2][0].ts_ns, 100'000u);
  std::vector<std::vector<PcapRecord>> again = RunOnce("learn_b_");
  engine_test::ExpectSameCaptures(out, again);
}

// 10,000 random source MACs from port 1 toward host 2 while hosts 1 (port 0) and 2 (port 2)
// talk: the table fills to mac_limit, the rest is refused and counted, the hosts keep their
// entries and their frames stay unicast.
TEST(LearningEngine, AMacFloodFillsTheTableOnlyToItsLimit) {
  SwitchConfig config;
  config.name = "sw0";
  config.num_ports = 3;
  config.program = "l2l3";
  config.program_options.Set("learning", "on");
  config.program_options.Set("mac_limit", "100");
  config.program_options.Set("mac_age", "0");
  Engine engine(1);
  ASSERT_TRUE(engine.AddSwitch(config, "").ok());
  engine_test::Records flood;
  uint64_t x = 12345;
  for (int i = 0; i < 10'000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t mac = ((x >> 16) & 0xFEFF'FFFF'FFFFULL) | 0x0200'0000'0000ULL;  // unicast
    flood.push_back({1'000'000 + uint64_t(i) * 200'000,
                     FrameBuilder()
                         .Eth(Mac(2), MacAddr::FromU64(mac))
                         .Ipv4(*ParseIpv4("10.0.0.9"), *ParseIpv4("10.0.0.2"))
                         .Udp(1, 2)
                         .Payload(18)
                         .Build()});
  }
  WritePcap(TempPath("flood_in0.pcap"), {{1'000, Udp(2, 1)}, {1'000'000'000, Udp(2, 1)},
                                         {2'500'000'000, Udp(2, 1)}});
  WritePcap(TempPath("flood_in1.pcap"), flood);
  WritePcap(TempPath("flood_in2.pcap"), {{100'000, Udp(1, 2)}, {1'500'000'000, Udp(1, 2)},
                                         {2'600'000'000, Udp(1, 2)}});
  for (PortId p = 0; p < 3; ++p) {
    const std::string n = std::to_string(p);
    HostPortSpec spec{"sw0", p, TempPath("flood_in" + n + ".pcap"),
                      TempPath("flood_out" + n + ".pcap"), 1'000, 0};
    ASSERT_TRUE(engine.AddHostPort(spec).ok());
  }
  ASSERT_TRUE(engine.Run().ok());
  const std::string mac = *engine.FindSwitch("sw0")->commands().Execute("show mac");
  EXPECT_NE(mac.find("entries 100 of mac_limit 100"), std::string::npos) << mac;
  EXPECT_NE(mac.find("learned 100,"), std::string::npos) << mac;
  EXPECT_NE(mac.find("refused (table full) 9902"), std::string::npos) << mac;
  EXPECT_EQ(ReadPcap(TempPath("flood_out0.pcap")).size(), 3u);  // host 2's frames, unicast
  EXPECT_EQ(ReadPcap(TempPath("flood_out1.pcap")).size(), 1u);  // only the first, flooded
  EXPECT_EQ(ReadPcap(TempPath("flood_out2.pcap")).size(), 3u + 10'000u);
}

}  // namespace
}  // namespace swemu
