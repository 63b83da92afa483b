// IPv6 neighbour discovery in virtual time: pcap hosts on an l2l3 switch with two IPv6 router
// interfaces and no MAC entry. Host A's packet to B's subnet waits while the control plane
// solicits B at its solicited-node group (a CPU-port latency after the packet), B's
// advertisement (in its pcap) resolves it, and the held packet and the next one reach B routed.
// Run twice, the outputs are byte-identical, and conservation holds with the control plane's
// packets counted.
#include <gtest/gtest.h>

#include "pipeline/engine/engine.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv6.h"
#include "pipeline/wire/ndp.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu {
namespace {

using engine_test::ReadPcap;
using engine_test::TempPath;
using engine_test::WritePcap;

constexpr uint64_t kGw1 = 0x02000000FE01;
constexpr uint64_t kGw2 = 0x02000000FE02;
constexpr uint64_t kA = 0x02000000000A;
constexpr uint64_t kB = 0x02000000000B;
const Ipv6Addr kIpA = *ParseIpv6("2001:db8:1::a");
const Ipv6Addr kIpB = *ParseIpv6("2001:db8:2::b");
const Ipv6Addr kGwIp2 = *ParseIpv6("2001:db8:2::1");

std::vector<uint8_t> ToB() {
  return FrameBuilder()
      .Eth(MacAddr::FromU64(kGw1), MacAddr::FromU64(kA))
      .Ipv6(kIpA, kIpB)
      .Udp(1000, 2000)
      .Payload(64)
      .Build();
}

// B's answer to the switch's solicitation: to the gateway's address and MAC.
std::vector<uint8_t> AdvertFromB() {
  std::vector<uint8_t> frame(kEthernetHeaderLen + kIpv6HeaderLen + kNdMaxLen);
  StoreBe48(frame.data(), kGw2);
  StoreBe48(frame.data() + 6, kB);
  StoreBe16(frame.data() + 12, kEtherTypeIpv6);
  WriteNdPacket(frame.data() + kEthernetHeaderLen, kIpB, kGwIp2,
                {kNdNeighborAdvert, kNaSolicited | kNaOverride, kIpB, kB});
  return frame;
}

// A on port 0, B on port 2, a silent host on port 3 (B's subnet).
std::vector<std::vector<PcapRecord>> RunOnce(const std::string& tag, std::string* counters) {
  SwitchConfig config;
  config.name = "tor";
  config.num_ports = 4;
  config.program = "l2l3";
  config.interfaces = {
      {1, kGw1, *ParseIpv4("10.1.1.1"), 24, {0, 1}, *ParseIpv6("2001:db8:1::1"), 64},
      {2, kGw2, *ParseIpv4("10.2.2.1"), 24, {2, 3}, kGwIp2, 64}};
  Engine engine(1);
  EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  WritePcap(TempPath(tag + "in0.pcap"), {{1'000, ToB()}, {200'000, ToB()}});
  WritePcap(TempPath(tag + "in2.pcap"), {{100'000, AdvertFromB()}});
  WritePcap(TempPath(tag + "in3.pcap"), engine_test::Records{});
  for (PortId p : {0, 2, 3}) {
    const std::string n = std::to_string(p);
    HostPortSpec spec{
        "tor", p, TempPath(tag + "in" + n + ".pcap"), TempPath(tag + "out" + n + ".pcap"),
        1'000, 0};
    EXPECT_TRUE(engine.AddHostPort(spec).ok());
  }
  Status ran = engine.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  *counters = engine.CountersJson();
  std::vector<std::vector<PcapRecord>> out;
  for (PortId p : {0, 2, 3}) {
    out.push_back(ReadPcap(TempPath(tag + "out" + std::to_string(p) + ".pcap")));
  }
  return out;
}

TEST(NdEngine, HoldsThePacketUntilTheNextHopAdvertisesThenRoutes) {
  std::string counters;
  std::vector<std::vector<PcapRecord>> out = RunOnce("nd_a_", &counters);
  ASSERT_EQ(out[0].size(), 0u);
  // Port 2: the solicitation (sent at 1 us, in at 2 us, to the CPU until 22 us, out at 23 us),
  // the held packet (the advertisement arrives at 101 us and is handled at 121 us; the packet
  // goes back through ingress), the second packet routed in the data plane alone. B never
  // answers again: 30 s after its advertisement three unicast solicitations a second apart,
  // then the entry fails (which ends the run).
  ASSERT_EQ(out[1].size(), 6u);
  EXPECT_EQ(out[1][0].ts_ns, 23'000u);
  EXPECT_EQ(LoadBe48(out[1][0].bytes.data()), 0x3333FF00000BULL);  // B's solicited-node group
  EXPECT_EQ(out[1][0].bytes[kEthernetHeaderLen + kIpv6HeaderLen], kNdNeighborSolicit);
  EXPECT_EQ(out[1][1].ts_ns, 122'000u);
  EXPECT_EQ(out[1][2].ts_ns, 202'000u);
  for (int i : {3, 4, 5}) {
    EXPECT_EQ(out[1][i].ts_ns, 30'000'122'000u + (i - 3) * 1'000'000'000u);
    EXPECT_EQ(LoadBe48(out[1][i].bytes.data()), kB);  // unicast to B
  }
  for (int i : {1, 2}) {
    EXPECT_EQ(LoadBe48(out[1][i].bytes.data()), kB);  // dmac is B's
    EXPECT_EQ(LoadBe48(out[1][i].bytes.data() + 6), kGw2);
    EXPECT_EQ(out[1][i].bytes[kEthernetHeaderLen + 7], 63);  // hop limit
  }
  ASSERT_EQ(out[2].size(), 1u);  // the multicast solicitation reached port 3 too
  // Two packets in (A's first packet, B's advertisement), five solicitations out, one packet
  // back to ingress.
  EXPECT_NE(counters.find("\"packet_in\": 2,\n    \"packet_out\": 5,\n    \"to_ingress\": 1,"),
            std::string::npos)
      << counters;
  std::string again_counters;
  std::vector<std::vector<PcapRecord>> again = RunOnce("nd_b_", &again_counters);
  engine_test::ExpectSameCaptures(out, again);
  EXPECT_EQ(counters, again_counters);
}

}  // namespace
}  // namespace swemu
