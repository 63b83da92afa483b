// Incast in virtual time on the shared buffer: N senders, each at line rate into its own queue
// of one output port (weighted round robin, so all N queues stay congested). With dynamic
// thresholds every queue settles at alpha x B / (1 + N x alpha) of the buffer B (Choudhury and
// Hahne); with the static buffer the queues fill the whole buffer between them (here the queue
// whose sender is first at each freed slot takes all of it). N is the number of congested
// queues, one per sender: one sender at line rate alone would not congest its queue.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t kRateBps = 10'000'000'000;
constexpr uint64_t kBufferBytes = 1'000'000;
constexpr uint32_t kFrameBytes = 1500;
constexpr TimeNs kFrameGapNs = 1220;  // (1500 + 24) x 8 bits at 10 Gbit/s: 1219.2 ns
constexpr PortId kReceiverPort = 2;
constexpr TimeNs kRunNs = 3'000'000;

struct Settled {
  std::vector<uint64_t> queue_bytes;  // each sender's queue at the end
  uint64_t dt_drops = 0;
  uint64_t shared_full_drops = 0;
};

// N senders on ports 0, 1, 3, ... into queues 0..N-1 of port 2.
Settled RunIncast(int n, double alpha) {
  SwitchConfig config = PatchSwitch("sw", kRateBps, static_cast<uint16_t>(n + 1));
  config.tm.shared_buffer_bytes = kBufferBytes;
  config.tm.scheduler = SchedulerKind::kWeighted;
  config.tm.queue.alpha = alpha;
  Engine engine(1);
  EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  EXPECT_TRUE(engine.AddHostPort({"sw", kReceiverPort, "", "", 0, 0}).ok());
  PortId port = 0;
  for (int i = 0; i < n; ++i, ++port) {
    if (port == kReceiverPort) ++port;
    auto sender =
        std::make_unique<LineRateSender>(static_cast<uint8_t>(i), kFrameBytes, kFrameGapNs, kRunNs);
    EXPECT_TRUE(engine.AttachHost("sw", port, 0, 0, std::move(sender)).ok());
  }
  EXPECT_TRUE(engine.Run(kRunNs - 1).ok());
  const TrafficManager& tm = engine.switch_at(0).tm();
  Settled out;
  for (int q = 0; q < n; ++q) out.queue_bytes.push_back(tm.DepthBytes(kReceiverPort, q));
  out.dt_drops = tm.drops(DropReason::kTmDynamicThreshold);
  out.shared_full_drops = tm.drops(DropReason::kTmSharedBufferFull);
  return out;
}

struct Case {
  int n;
  double alpha;
};

class IncastTest : public testing::TestWithParam<Case> {};

TEST_P(IncastTest, EveryCongestedQueueSettlesAtTheFormula) {
  const auto [n, alpha] = GetParam();
  const Settled dt = RunIncast(n, alpha);
  const double predicted = alpha * kBufferBytes / (1 + n * alpha);
  const Settled fixed = RunIncast(n, 0);
  uint64_t fixed_total = 0;
  for (int q = 0; q < n; ++q) {
    std::printf(
        "N %d alpha %s queue %d: %llu B (alpha B / (1 + N alpha) = %.0f B); static "
        "buffer: %llu B\n",
        n, FormatAlpha(alpha).c_str(), q, static_cast<unsigned long long>(dt.queue_bytes[q]),
        predicted, static_cast<unsigned long long>(fixed.queue_bytes[q]));
    // Each queue stops one packet short of its threshold and drains by one packet between
    // arrivals: within two frames of the fixed point.
    EXPECT_NEAR(static_cast<double>(dt.queue_bytes[q]), predicted, 2.0 * kFrameBytes) << q;
    fixed_total += fixed.queue_bytes[q];
  }
  EXPECT_GT(dt.dt_drops, 0u);
  EXPECT_EQ(dt.shared_full_drops, 0u);  // alpha <= 1: the threshold binds before the pool ends
  // The static buffer: the queues hold all of it between them, less than a frame left.
  // (Printed above: one queue holds it all.)
  EXPECT_GT(fixed_total + kFrameBytes, kBufferBytes);
  EXPECT_LE(fixed_total, kBufferBytes);
  EXPECT_GT(fixed.shared_full_drops, 0u);
  EXPECT_EQ(fixed.dt_drops, 0u);
}

INSTANTIATE_TEST_SUITE_P(Thresholds, IncastTest,
                         testing::Values(Case{2, 1.0}, Case{3, 1.0}, Case{4, 0.5}, Case{4, 0.125},
                                         Case{7, 1.0 / 16}));

}  // namespace
}  // namespace swemu::engine_test
