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
  for (int h = 0; h < 3; ++h) {
    ASSERT_EQ(again[h].size(), out[h].size());
    for (std::size_t i = 0; i < out[h].size(); ++i) {
      EXPECT_EQ(again[h][i].ts_ns, out[h][i].ts_ns);
      EXPECT_EQ(again[h][i].bytes, out[h][i].bytes);
    }
  }
}

}  // namespace
}  // namespace swemu
