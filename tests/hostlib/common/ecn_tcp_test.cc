// The model TCP flows (hostlib/common/ecn_tcp.h, tcp_host.h) through one switch in virtual time:
// every byte arrives exactly once over loss, ECN marks make Reno and DCTCP cut their windows and
// keep the queue near the threshold, and a Not-ECT flow fills the queue to loss instead.
#include "hostlib/common/ecn_tcp.h"

#include <gtest/gtest.h>

#include "hostlib/common/engine_transport.h"
#include "hostlib/common/tcp_host.h"
#include "tests/hostlib/common/tcp_bottleneck.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT: the shared hosts' addresses

struct FlowRun {
  uint64_t bytes_received = 0;
  TimeNs done_ns = kNever;
  EcnTcpSenderStats sender;
  uint64_t marked = 0;
  uint64_t tm_drops = 0;
  // After the first half second (slow start's overshoot is over): drops and bytes since.
  uint64_t steady_drops = 0;
  uint64_t steady_bytes = 0;
  uint32_t steady_max_depth = 0;
};

// A sends to B through port 1, shaped to 100 Mbit/s with a `depth`-packet queue; host links of
// 1 ms each way (RTT about 4 ms plus queueing). ecn_pkts > 0 marks at that many full frames.
FlowRun RunFlow(EcnTcpOptions options, uint64_t bytes, TimeNs stop_ns, double loss = 0,
            uint32_t ecn_pkts = 0, uint32_t depth = 1000) {
  Engine engine(7, 16384);
  Switch& sw = AddBottleneckSwitch(engine, "100M", depth, ecn_pkts);
  EngineTransport* ta = *EngineTransport::Attach(engine, "sw0", 0, 1'000'000, loss);
  EngineTransport* tb = *EngineTransport::Attach(engine, "sw0", 1, 1'000'000);
  TcpHost a(*ta, kMacA, kIpA, options);
  TcpHost b(*tb, kMacB, kIpB, options);
  ta->SetEndpoint(&a);
  tb->SetEndpoint(&b);
  EcnTcpSender& flow = a.AddFlow({{kMacB, kIpB, kSinkPort}, 40000, 0, stop_ns, bytes});
  b.Listen(kSinkPort);
  EngineLimits limits;
  limits.max_virtual_ns = 30'000'000'000;
  engine.SetLimits(limits);
  constexpr TimeNs kSettled = 500'000'000;
  EXPECT_TRUE(engine.Run(kSettled).ok());
  auto received = [&] {
    const EcnTcpFlowStats* st = b.sink(kSinkPort)->Find(kIpA, 40000);
    return st != nullptr ? st->bytes : 0;
  };
  const uint64_t settled_bytes = received();
  const uint64_t settled_drops = sw.tm().queue_counters(1, 0).dropped;
  sw.tm().ResetCounters();  // max depths restart from the current depth
  EXPECT_TRUE(engine.Run(stop_ns == kNever ? kNever : stop_ns).ok());
  FlowRun run;
  run.bytes_received = received();
  run.steady_bytes = run.bytes_received - settled_bytes;
  run.steady_drops = sw.tm().queue_counters(1, 0).dropped;
  run.steady_max_depth = sw.tm().queue_counters(1, 0).max_depth_pkts;
  run.tm_drops = settled_drops + run.steady_drops;
  run.sender = flow.stats();
  run.done_ns = flow.stats().done_ns;
  run.marked = sw.tm().queue_counters(1, 0).marked;
  return run;
}

TEST(EcnTcp, EveryByteArrivesOnceAndTheFlowEnds) {
  const FlowRun run = RunFlow({}, 2'000'000, kNever);
  EXPECT_EQ(run.bytes_received, 2'000'000u);
  ASSERT_NE(run.done_ns, kNever);
  EXPECT_EQ(run.sender.bytes_acked, 2'000'000u);
  // 2 MB at 100 Mbit/s is 0.165 s on the wire (1514-byte frames): slow start costs a few RTTs.
  EXPECT_LT(run.done_ns, 260'000'000);
  EXPECT_GT(run.done_ns, 165'000'000);
}

TEST(EcnTcp, LossIsRecoveredExactly) {
  const FlowRun run = RunFlow({}, 2'000'000, kNever, 0.02);
  EXPECT_EQ(run.bytes_received, 2'000'000u);
  EXPECT_NE(run.done_ns, kNever);
  EXPECT_GT(run.sender.retransmits, 0u);
  EXPECT_GT(run.sender.loss_reductions + run.sender.timeouts, 0u);
}

TEST(EcnTcp, RenoAndDctcpCutOnMarksAndHoldTheQueueNearTheThreshold) {
  for (CongestionControl cc : {CongestionControl::kReno, CongestionControl::kDctcp}) {
    EcnTcpOptions options;
    options.cc = cc;
    const FlowRun run = RunFlow(options, 0, 2'000'000'000, 0, 20, 60);
    SCOPED_TRACE(CongestionControlName(cc));
    EXPECT_GT(run.sender.ecn_reductions, 10u);
    EXPECT_GT(run.marked, 0u);
    // Once slow start is over, the marks alone hold the queue below its 60 packets.
    EXPECT_EQ(run.steady_drops, 0u);
    EXPECT_LT(run.steady_max_depth, 45u);
    // And keep the link busy: goodput over the last 1.5 s.
    const double mbps = static_cast<double>(run.steady_bytes) * 8 / 1.5e6;
    EXPECT_GT(mbps, cc == CongestionControl::kDctcp ? 90 : 80) << mbps;
  }
}

TEST(EcnTcp, NotEctFlowFillsTheQueueToLoss) {
  EcnTcpOptions options;
  options.ect = false;
  const FlowRun run = RunFlow(options, 0, 2'000'000'000, 0, 20, 60);
  EXPECT_EQ(run.marked, 0u);
  EXPECT_EQ(run.sender.ecn_reductions, 0u);
  EXPECT_GT(run.steady_drops, 0u);
  EXPECT_EQ(run.steady_max_depth, 60u);
  EXPECT_GT(run.sender.retransmits, 0u);
}

TEST(EcnTcp, ParsesOnlyCompleteTcpFrames) {
  std::vector<uint8_t> frame;
  BuildTcpFrame(frame, {kMacA, kIpA, 1}, {kMacB, kIpB, 2}, 10, 20, kTcpAck | kTcpEce, kEcnCe, 100,
                0);
  TcpSegmentView seg;
  ASSERT_TRUE(ParseTcpSegment(frame, &seg));
  EXPECT_EQ(seg.payload_len, 100u);
  EXPECT_TRUE(seg.ce);
  EXPECT_EQ(seg.seq, 10u);
  EXPECT_EQ(seg.ack, 20u);
  frame.resize(frame.size() - 1);  // cut inside the payload
  EXPECT_FALSE(ParseTcpSegment(frame, &seg));
  frame.resize(40);
  EXPECT_FALSE(ParseTcpSegment(frame, &seg));
  CongestionControl cc;
  EXPECT_TRUE(ParseCongestionControl("dctcp", &cc));
  EXPECT_FALSE(ParseCongestionControl("cubic", &cc));
}

}  // namespace
}  // namespace swemu
