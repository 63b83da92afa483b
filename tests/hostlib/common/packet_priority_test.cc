// PIAS's and pFabric's per-packet priorities (hostlib/common/packet_priority.h): the levels from
// bytes sent and bytes remaining, the thresholds from the workload, the DSCP a model TCP segment
// carries, the queue an l2l3 switch serves it from, and pFabric's minimal transport (no window
// cut on duplicate ACKs, a fixed RTO).
#include "hostlib/common/packet_priority.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "pipeline/engine/engine.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"

namespace swemu {
namespace {

constexpr uint32_t kMss = 1448;

TEST(PacketPriority, PiasDemotesAFlowAsItsBytesSentReachEachThreshold) {
  std::vector<uint64_t> sizes;
  for (uint64_t k = 8; k >= 1; --k) sizes.push_back(k * 1000);  // any order
  const PacketPriority p = PiasPriority(sizes);
  // The k/8 quantiles of 1000..8000.
  for (uint32_t k = 1; k < kPriorityLevels; ++k) EXPECT_EQ(p.thresholds[k - 1], (k + 1) * 1000);
  EXPECT_EQ(p.Level(0, 0), 0u);
  EXPECT_EQ(p.Level(1999, 0), 0u);
  EXPECT_EQ(p.Level(2000, 0), 1u);
  EXPECT_EQ(p.Level(7999, 0), 6u);
  EXPECT_EQ(p.Level(8000, 0), 7u);
  EXPECT_EQ(p.Level(1u << 30, 0), 7u);
  EXPECT_EQ(p.Level(2000, 1u << 30), 1u);  // what remains does not matter
  EXPECT_EQ(p.Dscp(2000, 0), kPriorityDscpBase + 1);
}

TEST(PacketPriority, PfabricLevelsByRemainingBytesOnALogScale) {
  const PacketPriority p = PfabricPriority(uint64_t{kMss} * 128, kMss);
  EXPECT_EQ(p.thresholds[0], kMss);
  for (uint32_t k = 1; k < kPriorityLevels - 1; ++k) {
    EXPECT_NEAR(static_cast<double>(p.thresholds[k]) / p.thresholds[k - 1], std::pow(128, 1.0 / 7),
                0.01);
  }
  EXPECT_EQ(p.Level(0, 1), 0u);
  EXPECT_EQ(p.Level(0, kMss), 0u);  // one segment or less left: the highest
  EXPECT_EQ(p.Level(0, kMss + 1), 1u);
  EXPECT_EQ(p.Level(1u << 20, kMss), 0u);  // what was sent does not matter
  EXPECT_EQ(p.Level(0, uint64_t{kMss} * 128), 7u);
  // A workload of one-segment flows: every threshold one segment.
  EXPECT_EQ(PfabricPriority(100, kMss).thresholds[6], kMss);
}

TEST(PacketPriority, WithoutTaggingEverySegmentIsDscpZero) {
  PacketPriority none;
  none.thresholds = {1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(none.Dscp(100, 100), 0);
  EXPECT_EQ(none.Level(100, 100), 0u);
  EXPECT_EQ(PiasPriority({}).Level(0, 0), 7u);  // no workload: every threshold 0
}

const MacAddr kMacA = MacAddr::FromU64(0x020000000001ull);
const MacAddr kMacB = MacAddr::FromU64(0x020000000002ull);
constexpr Ipv4Addr kIpA = 0x0A000001, kIpB = 0x0A000002;

// A through one l2l3 switch (qos from PriorityQueueCommands) to B: one flow of `bytes`.
struct PriorityRun {
  Engine engine{3, 4096};
  Switch* sw = nullptr;
  uint64_t received = 0;
};

void RunThroughSwitch(PriorityRun& run, const EcnTcpOptions& options, uint64_t bytes) {
  SwitchConfig config;
  config.num_ports = 2;
  config.program = "l2l3";
  ASSERT_TRUE(run.engine.AddSwitch(config, "").ok());
  run.sw = run.engine.FindSwitch("sw0");
  std::vector<std::string> commands = PriorityQueueCommands();
  commands.push_back("table_add dmac forward " + FormatMac(kMacB) + " => 1");
  commands.push_back("table_add dmac forward " + FormatMac(kMacA) + " => 0");
  for (const std::string& cmd : commands) {
    Result<std::string> r = run.sw->commands().Execute(cmd);
    ASSERT_TRUE(r.ok()) << cmd << ": " << r.message();
  }
  EngineTransport* ta = *EngineTransport::Attach(run.engine, "sw0", 0, 1'000);
  EngineTransport* tb = *EngineTransport::Attach(run.engine, "sw0", 1, 1'000);
  TcpHost a(*ta, kMacA, kIpA, options);
  TcpHost b(*tb, kMacB, kIpB, options);
  ta->SetEndpoint(&a);
  tb->SetEndpoint(&b);
  a.AddFlow({{kMacB, kIpB, 5001}, 40000, 0, kNever, bytes});
  b.Listen(5001);
  ASSERT_TRUE(run.engine.Run().ok());
  run.received = b.sink(5001)->Find(kIpA, 40000)->bytes;
}

TEST(PacketPriority, PiasSegmentsLeaveFromTheQueueOfTheirLevelAndAcksFromTheTop) {
  EcnTcpOptions options;
  options.cc = CongestionControl::kDctcp;
  options.initial_cwnd = 20;
  options.priority.tagging = PriorityTagging::kPias;
  options.priority.thresholds = {1 * kMss, 2 * kMss, 3 * kMss, 4 * kMss,
                                 5 * kMss, 6 * kMss, 7 * kMss};
  PriorityRun run;
  RunThroughSwitch(run, options, 10 * kMss);
  EXPECT_EQ(run.received, 10 * kMss);
  const TrafficManager& tm = run.sw->tm();
  // Segment i left after i segments: level min(i, 7), queue 7 - level.
  for (int q = 1; q <= 7; ++q) EXPECT_EQ(tm.queue_counters(1, q).dequeued, 1u) << q;
  EXPECT_EQ(tm.queue_counters(1, 0).dequeued, 3u);
  EXPECT_EQ(tm.queue_counters(0, 7).dequeued, 10u);  // B's ACKs, DSCP 0
}

TEST(PacketPriority, PfabricSegmentsRiseAsTheFlowNearsItsEnd) {
  EcnTcpOptions options;
  options.cc = CongestionControl::kPfabric;
  options.ect = false;
  options.initial_cwnd = 1;  // one segment per round trip: each sees the bytes acknowledged
  options.priority = PfabricPriority(uint64_t{kMss} * 64, kMss);
  PriorityRun run;
  RunThroughSwitch(run, options, 4 * kMss);
  EXPECT_EQ(run.received, 4 * kMss);
  const TrafficManager& tm = run.sw->tm();
  // Slow start from 1: the first segment with 4 segments unacknowledged (level 3, queue 4), the
  // others once one or two are acknowledged, in higher queues.
  ASSERT_EQ(options.priority.Level(0, 4 * kMss), 3u);
  EXPECT_EQ(tm.queue_counters(1, 4).dequeued, 1u);
  uint64_t lower = 0, higher = 0;
  for (int q = 0; q < 4; ++q) lower += tm.queue_counters(1, q).dequeued;
  for (int q = 5; q < 8; ++q) higher += tm.queue_counters(1, q).dequeued;
  EXPECT_EQ(lower, 0u);
  EXPECT_EQ(higher, 3u);
}

// Records the frames a sender sends.
class Capture final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    frames.emplace_back(frame.begin(), frame.end());
    return true;
  }
  std::vector<std::vector<uint8_t>> frames;
};

TEST(PacketPriority, PfabricsRtoIsFixedAndDctcpsBacksOff) {
  for (CongestionControl cc : {CongestionControl::kPfabric, CongestionControl::kDctcp}) {
    Capture capture;
    EcnTcpOptions options;
    options.cc = cc;
    options.link_bps = 0;  // unpaced: the window goes at once
    options.initial_cwnd = 2;
    options.min_rto_ns = options.initial_rto_ns = 100'000;
    EcnTcpSender sender(capture, {kMacA, kIpA, 40000}, {kMacB, kIpB, 5001}, options);
    sender.Start(0, 100 * kMss);
    ASSERT_EQ(capture.frames.size(), 2u);
    EXPECT_EQ(sender.NextTimer(), 100'000);
    sender.OnTimer(100'000);
    EXPECT_EQ(capture.frames.size(), 3u);  // the first segment again
    EXPECT_EQ(sender.stats().timeouts, 1u);
    EXPECT_EQ(sender.NextTimer(), cc == CongestionControl::kPfabric ? 200'000 : 300'000)
        << CongestionControlName(cc);
  }
}

TEST(PacketPriority, PfabricRetransmitsOnDuplicateAcksWithoutCuttingItsWindow) {
  for (CongestionControl cc : {CongestionControl::kPfabric, CongestionControl::kDctcp}) {
    Capture capture;
    EcnTcpOptions options;
    options.cc = cc;
    options.link_bps = 0;
    options.initial_cwnd = 10;
    EcnTcpSender sender(capture, {kMacA, kIpA, 40000}, {kMacB, kIpB, 5001}, options);
    sender.Start(0, 100 * kMss);
    ASSERT_EQ(capture.frames.size(), 10u);
    TcpSegmentView dup;  // the first segment lost: every ACK asks for it
    dup.src_ip = kIpB;
    dup.dst_ip = kIpA;
    dup.src_port = 5001;
    dup.dst_port = 40000;
    dup.ack = 1;
    dup.flags = kTcpAck;
    for (int k = 0; k < 3; ++k) sender.OnAck(1'000, dup);
    EXPECT_EQ(sender.stats().retransmits, 1u);
    EXPECT_EQ(sender.cwnd(), cc == CongestionControl::kPfabric ? 10.0 : 5.0)
        << CongestionControlName(cc);
  }
}

}  // namespace
}  // namespace swemu
