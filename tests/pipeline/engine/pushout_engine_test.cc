// Push-out (TmConfig::pushout) in virtual time: two senders at line rate into one port, one on
// the lowest queue and one on the highest. The low queue fills the port's buffer; with push-out
// the high queue's arrivals take its tail and none of them is lost, and the engine's
// conservation check holds with the pushed-out packets counted as drops.
#include <gtest/gtest.h>

#include <memory>

#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t kRateBps = 10'000'000'000;
constexpr uint64_t kPortBufferBytes = 30'000;
constexpr uint32_t kFrameBytes = 1500;
constexpr TimeNs kFrameGapNs = 1220;  // (1500 + 24) x 8 bits at 10 Gbit/s: 1219.2 ns
constexpr PortId kReceiverPort = 2;
constexpr TimeNs kRunNs = 1'000'000;

struct Outcome {
  uint64_t high_dropped = 0;  // queue 7's drops
  uint64_t low_dropped = 0;   // queue 0's: refused arrivals and pushed-out tails
  uint64_t pushed_out = 0;
  uint64_t port_full = 0;
};

Outcome RunTwoSenders(bool pushout) {
  SwitchConfig config = PatchSwitch("sw", kRateBps);
  config.tm.port_buffer_bytes = kPortBufferBytes;
  config.tm.pushout = pushout;
  Engine engine(1);
  EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  EXPECT_TRUE(engine.AddHostPort({"sw", kReceiverPort, "", "", 0, 0}).ok());
  EXPECT_TRUE(engine
                  .AttachHost("sw", 0, 0, 0,
                              std::make_unique<LineRateSender>(0, kFrameBytes, kFrameGapNs, kRunNs))
                  .ok());
  EXPECT_TRUE(engine
                  .AttachHost("sw", 1, 0, 0,
                              std::make_unique<LineRateSender>(7, kFrameBytes, kFrameGapNs, kRunNs))
                  .ok());
  EXPECT_TRUE(engine.Run(kRunNs / 2).ok());  // mid-run: packets queued and in flight
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_TRUE(engine.Run().ok());
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
  EXPECT_EQ(engine.pool().InUse(), 0u);
  const TrafficManager& tm = engine.switch_at(0).tm();
  return {tm.queue_counters(kReceiverPort, 7).dropped, tm.queue_counters(kReceiverPort, 0).dropped,
          tm.drops(DropReason::kTmPushout), tm.drops(DropReason::kTmPortBufferFull)};
}

TEST(PushoutEngineTest, HighQueueLosesNothingAndConservationHolds) {
  const Outcome on = RunTwoSenders(true);
  const Outcome off = RunTwoSenders(false);
  EXPECT_EQ(on.high_dropped, 0u);
  EXPECT_GT(on.pushed_out, 0u);
  // Every drop is the low queue's: its tail pushed out, or its own arrival refused (here its
  // arrivals come first at each tick and take the room a departure left).
  EXPECT_EQ(on.low_dropped, on.pushed_out + on.port_full);
  EXPECT_GT(off.high_dropped, 0u);  // without push-out the high queue's arrivals are dropped
  EXPECT_EQ(off.pushed_out, 0u);
}

}  // namespace
}  // namespace swemu::engine_test
