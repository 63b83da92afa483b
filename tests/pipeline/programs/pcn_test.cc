// The pcn program through one switch in virtual time: STARTs lower the ECN threshold of the port
// toward the PS for every queue, bursts restore it, several workers and jobs, the timeout, the
// scope, and the START forwarded intact. Port 3 leads to the PS, shaped so that a burst of
// frames sent at once queues up and frame i sees i frames ahead of it.
#include <gtest/gtest.h>

#include "pipeline/programs/pcn.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/pcn.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

const MacAddr kPsMac = *ParseMac("00:00:00:00:03:01");
const MacAddr kPs2Mac = *ParseMac("00:00:00:00:03:02");
const MacAddr kBgMac = *ParseMac("00:00:00:00:02:01");
const MacAddr kWorkerMac = *ParseMac("00:00:00:00:00:01");
const Ipv4Addr kPs = *ParseIpv4("10.0.3.1");
const Ipv4Addr kPs2 = *ParseIpv4("10.0.3.2");
const Ipv4Addr kW1 = *ParseIpv4("10.0.0.1");
const Ipv4Addr kW2 = *ParseIpv4("10.0.1.1");
const Ipv4Addr kBg = *ParseIpv4("10.0.2.9");
constexpr PortId kPsPort = 3;

SwitchConfig PcnConfig(std::map<std::string, std::string> options = {}) {
  SwitchConfig config;
  config.num_ports = 4;
  config.program = "pcn";
  for (auto& [k, v] : options) config.program_options.Set(k, v);
  return config;
}

std::vector<uint8_t> Start(Ipv4Addr worker, uint32_t threshold, Ipv4Addr ps = kPs,
                           uint8_t ecn = kEcnEct0) {
  return FrameBuilder()
      .Eth(ps == kPs ? kPsMac : kPs2Mac, kWorkerMac)
      .Ipv4(worker, ps)
      .Tos(PcnTos{true, false, threshold}.Encode(ecn))
      .Udp(40000, kPcnDefaultUdpPort)
      .Payload(16)
      .Build();
}

// A worker's data toward the PS: `payload` bytes of TCP.
std::vector<uint8_t> Data(Ipv4Addr worker, std::size_t payload = 1448, Ipv4Addr ps = kPs,
                          uint16_t sport = 50000) {
  return FrameBuilder()
      .Eth(ps == kPs ? kPsMac : kPs2Mac, kWorkerMac)
      .Ipv4(worker, ps)
      .Tos(kEcnEct0)
      .Tcp(sport, 5201)
      .Payload(payload)
      .Build();
}

// Background traffic sharing the PS-bound port: to a host behind port 3 that is no PS.
std::vector<uint8_t> Background(uint8_t tos = kEcnEct0, std::size_t payload = 1000) {
  return FrameBuilder()
      .Eth(kBgMac, kWorkerMac)
      .Ipv4(kBg, *ParseIpv4("10.0.3.77"))
      .Tos(tos)
      .Udp(7000, 7001)
      .Payload(payload)
      .Build();
}

int CeCount(const std::vector<SentFrame>& out) {
  int ce = 0;
  for (const SentFrame& f : out) ce += (f.bytes[15] & 0x3) == kEcnCe;
  return ce;
}

class PcnTest : public ::testing::Test {
 protected:
  explicit PcnTest(std::map<std::string, std::string> options = {}) : h_(PcnConfig(options)) {}
  void SetUp() override {
    ASSERT_TRUE(h_.ok()) << h_.error();
    h_.MustCmd("table_add dmac forward 00:00:00:00:03:01 => 3");
    h_.MustCmd("table_add dmac forward 00:00:00:00:03:02 => 3");
    h_.MustCmd("table_add dmac forward 00:00:00:00:02:01 => 3");
    h_.MustCmd("table_add dmac forward 00:00:00:00:00:01 => 0");
    h_.MustCmd("table_add pcn_job job 10.0.3.1 => 0");
    h_.MustCmd("set_port_rate 3 100M");
    h_.MustCmd("set_queue_depth 60 3");
  }
  PcnProgram& pcn() { return static_cast<PcnProgram&>(h_.sw().program()); }
  // `n` background frames sent at once toward port 3: how many left CE-marked.
  int BackgroundMarks(int n, uint8_t tos = kEcnEct0) {
    std::vector<std::vector<uint8_t>> frames(n, Background(tos));
    h_.SendBurst(1, frames);
    return CeCount(h_.Drain());
  }
  void SendNow(PortId port, const std::vector<uint8_t>& frame) {
    h_.Send(port, frame);
    h_.Drain();
  }
  SwitchHarness h_;
};

TEST_F(PcnTest, InitialThresholdMarksFramesWithFortyOrMoreAhead) {
  EXPECT_EQ(BackgroundMarks(50), 10);  // frames 40..49
  EXPECT_EQ(pcn().counters().marked_initial, 10u);
  EXPECT_EQ(pcn().counters().marked_pcn, 0u);
}

TEST_F(PcnTest, StartLowersThePortsThresholdUntilTheBurstArrives) {
  SendNow(0, Start(kW1, 10));
  EXPECT_EQ(pcn().counters().starts, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
  EXPECT_EQ(BackgroundMarks(30), 20);  // frames 10..29
  EXPECT_EQ(pcn().counters().marked_pcn, 20u);
  SendNow(0, Data(kW1));  // the announced burst arrives: the initial threshold returns
  EXPECT_EQ(pcn().counters().bursts_arrived, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
  EXPECT_EQ(BackgroundMarks(30), 0);
}

TEST_F(PcnTest, EveryQueueOfThePortFollowsTheAnnouncedThreshold) {
  h_.MustCmd("table_add qos set_queue 46&&&0x3f => 5 1");  // DSCP 46 (EF) -> queue 5
  SendNow(0, Start(kW1, 10));
  // EF background: TOS 0xB8 | ECT(0); it is not to a PS, so not read as a START either.
  EXPECT_EQ(BackgroundMarks(30, 0xBA), 20);
  EXPECT_EQ(h_.sw().tm().queue_counters(kPsPort, 5).marked, 20u);
  EXPECT_EQ(pcn().counters().starts, 1u);
}

TEST_F(PcnTest, OtherPortsKeepTheirThreshold) {
  h_.MustCmd("table_add dmac forward 00:00:00:00:02:02 => 2");
  h_.MustCmd("set_port_rate 2 100M");
  SendNow(0, Start(kW1, 10));
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 30; ++i) {
    frames.push_back(FrameBuilder()
                         .Eth(*ParseMac("00:00:00:00:02:02"), kWorkerMac)
                         .Ipv4(kBg, *ParseIpv4("10.0.2.2"))
                         .Tos(kEcnEct0)
                         .Udp(1, 2)
                         .Payload(1000)
                         .Build());
  }
  h_.SendBurst(1, frames);
  EXPECT_EQ(CeCount(h_.Drain()), 0);  // state is per egress port, never the ingress port's
  EXPECT_EQ(pcn().ActiveThreshold(2, h_.clock().NowNs()), 40u);
}

TEST_F(PcnTest, NotEctPacketsAreNeverMarked) {
  SendNow(0, Start(kW1, 0));
  EXPECT_EQ(BackgroundMarks(30, kEcnNotEct), 0);
  EXPECT_EQ(BackgroundMarks(5, kEcnEct1), 5);  // threshold 0: every ECT frame
}

TEST_F(PcnTest, SmallPacketsOfTheWorkerAreNotTheBurst) {
  SendNow(0, Start(kW1, 10));
  // iperf3's control connection: SYN, the 37-byte cookie, the JSON parameters.
  SendNow(0, FrameBuilder().Eth(kPsMac, kWorkerMac).Ipv4(kW1, kPs).Tcp(50001, 5201, kTcpSyn).Build());
  SendNow(0, Data(kW1, 37, kPs, 50001));
  SendNow(0, Data(kW1, 300, kPs, 50001));
  EXPECT_EQ(pcn().counters().bursts_arrived, 0u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
  SendNow(0, Data(kW1, 1448, kPs, 50002));  // the data connection
  EXPECT_EQ(pcn().counters().bursts_arrived, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
}

TEST_F(PcnTest, ResentStartCountsOnce) {
  SendNow(0, Start(kW1, 10));
  SendNow(0, Start(kW1, 10));  // its ACK was lost
  EXPECT_EQ(pcn().counters().starts, 1u);
  EXPECT_EQ(pcn().counters().starts_repeated, 1u);
  SendNow(0, Data(kW1));
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
}

TEST_F(PcnTest, CounterHoldsUntilEveryAnnouncedBurstArrived) {
  SendNow(0, Start(kW1, 10));
  SendNow(0, Start(kW2, 10));
  SendNow(0, Data(kW1, 1448, kPs, 50000));
  SendNow(0, Data(kW1, 1448, kPs, 50001));  // the same burst on a second flow: no second arrival
  EXPECT_EQ(pcn().counters().bursts_arrived, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
  EXPECT_EQ(BackgroundMarks(30), 20);
  SendNow(0, Data(kW2));
  EXPECT_EQ(pcn().counters().bursts_arrived, 2u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
}

TEST_F(PcnTest, SeveralJobsOnOnePortKeepTheLowestAndNeverRestoreEachOther) {
  h_.MustCmd("table_add pcn_job job 10.0.3.2 => 1");
  SendNow(0, Start(kW1, 20, kPs));
  SendNow(0, Start(kW2, 10, kPs2));
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
  SendNow(0, Data(kW2, 1448, kPs2));  // job 2's burst: job 1's 20 remains
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 20u);
  SendNow(0, Data(kW1, 1448, kPs2));  // W1 sending to the other job's PS is not W1's burst
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 20u);
  SendNow(0, Data(kW1, 1448, kPs));
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
}

TEST_F(PcnTest, ABurstThatNeverComesTimesOut) {
  h_.MustCmd("pcn_timeout 50");
  SendNow(0, Start(kW1, 10));
  h_.clock().Advance(45'000'000);
  EXPECT_EQ(BackgroundMarks(30), 20);
  h_.clock().Advance(6'000'000);
  EXPECT_EQ(BackgroundMarks(30), 0);
  EXPECT_EQ(pcn().counters().timeouts, 1u);
  SendNow(0, Data(kW1));  // the late burst changes nothing
  EXPECT_EQ(pcn().counters().pending_expired, 1u);
  EXPECT_EQ(pcn().counters().bursts_arrived, 0u);
  SendNow(0, Start(kW2, 15));  // and a new announcement is honoured in full
  SendNow(0, Data(kW1));
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 15u);
}

TEST_F(PcnTest, StartAtOrAboveTheInitialThresholdIsIgnored) {
  SendNow(0, Start(kW1, 40));
  SendNow(0, Start(kW1, 75));
  EXPECT_EQ(pcn().counters().starts_ignored, 2u);
  EXPECT_EQ(pcn().counters().starts, 0u);
  EXPECT_EQ(BackgroundMarks(30), 0);
}

TEST_F(PcnTest, StartAboveTheQueuesCapacityIsHonouredAndNeverMarks) {
  h_.MustCmd("pcn_initial 3 100");  // above the 60-packet queue: no marks at all
  SendNow(0, Start(kW1, 70));
  EXPECT_EQ(pcn().counters().starts, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 70u);
  EXPECT_EQ(BackgroundMarks(70), 0);
}

TEST_F(PcnTest, OnlyStartsToAConfiguredPsOnThePcnPortAreRead) {
  // To a host that is no PS.
  SendNow(0, FrameBuilder()
                 .Eth(kBgMac, kWorkerMac)
                 .Ipv4(kW1, *ParseIpv4("10.0.3.77"))
                 .Tos(0x8A)
                 .Udp(40000, kPcnDefaultUdpPort)
                 .Build());
  // To the PS on another port: EF traffic, TOS 0xB8.
  SendNow(0, FrameBuilder().Eth(kPsMac, kWorkerMac).Ipv4(kW1, kPs).Tos(0xB8).Udp(1, 2).Build());
  EXPECT_EQ(pcn().counters().starts, 0u);
  EXPECT_EQ(BackgroundMarks(30), 0);
}

TEST_F(PcnTest, StartIsForwardedWithItsTosAndAckChangesNothing) {
  const std::vector<uint8_t> start = Start(kW1, 10);
  h_.Send(0, start);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPsPort);
  EXPECT_EQ(out[0].bytes, start);
  EXPECT_EQ(out[0].bytes[15], 0x8A);
  // The PS's ACK back to the worker.
  h_.Send(3, FrameBuilder()
                 .Eth(kWorkerMac, kPsMac)
                 .Ipv4(kPs, kW1)
                 .Tos(PcnTos{false, true, 10}.Encode(kEcnEct0))
                 .Udp(kPcnDefaultUdpPort, 40000)
                 .Build());
  ASSERT_EQ(h_.Drain().size(), 1u);
  EXPECT_EQ(pcn().counters().acks, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
}

TEST_F(PcnTest, CeMarkedStartStillReadsAsItsThreshold) {
  SendNow(0, Start(kW1, 10, kPs, kEcnCe));  // 0x8B: marked by an earlier hop
  EXPECT_EQ(pcn().counters().starts, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 10u);
}

TEST_F(PcnTest, StartWithAckBitIsNotAStart) {
  SendNow(0, FrameBuilder()
                 .Eth(kPsMac, kWorkerMac)
                 .Ipv4(kW1, kPs)
                 .Tos(0xCA)
                 .Udp(40000, kPcnDefaultUdpPort)
                 .Build());
  EXPECT_EQ(pcn().counters().starts_with_ack, 1u);
  EXPECT_EQ(pcn().ActiveThreshold(kPsPort, h_.clock().NowNs()), 40u);
}

TEST(PcnOptions, BadOptionsAndCommandsAreRefused) {
  SwitchHarness bad(PcnConfig({{"jobs", "0"}}));
  EXPECT_FALSE(bad.ok());
  SwitchHarness bad_timeout(PcnConfig({{"timeout_ms", "7200000"}}));
  EXPECT_FALSE(bad_timeout.ok());
  SwitchHarness h(PcnConfig());
  ASSERT_TRUE(h.ok()) << h.error();
  EXPECT_FALSE(h.Cmd("pcn_initial 9 10").ok());
  EXPECT_FALSE(h.Cmd("pcn_initial 3 0").ok());
  EXPECT_FALSE(h.Cmd("pcn_timeout 0").ok());
  EXPECT_FALSE(h.Cmd("pcn_stats zero").ok());
  EXPECT_TRUE(h.Cmd("pcn_initial all 30").ok());
  EXPECT_EQ(static_cast<PcnProgram&>(h.sw().program()).InitialThreshold(2), 30u);
  Result<std::string> show = h.Cmd("show pcn");
  ASSERT_TRUE(show.ok());
  EXPECT_NE(show->find("\"starts\": 0"), std::string::npos) << *show;
}

}  // namespace
}  // namespace swemu

namespace swemu {
namespace {

// On several lcores a packet's ingress runs on the lcore its shard key names, and hand-overs
// between two lcores keep their order. A worker's START and its burst (another flow: UDP to the
// PCN port, then TCP) must share the key, or a START handed across could reach the PS port's
// egress after a burst that stayed on its lcore, and the burst would not count as arrived.
TEST_F(PcnTest, AWorkersStartAndBurstShareAShardKeyOtherWorkersMayNot) {
  auto key = [&](const std::vector<uint8_t>& frame) {
    Packet* pkt = h_.pool().FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
    const uint32_t k = h_.sw().ShardKeyOf(*pkt, 0);
    h_.pool().Free(pkt);
    return k;
  };
  EXPECT_EQ(key(Start(kW1, 10)), key(Data(kW1)));
  EXPECT_EQ(key(Data(kW1, 1448, kPs, 50000)), key(Data(kW1, 1448, kPs2, 50001)));
  EXPECT_NE(key(Start(kW1, 10)), key(Start(kW2, 10)));
  EXPECT_NE(key(Data(kW1)), key(Data(kW2)));
}

}  // namespace
}  // namespace swemu
