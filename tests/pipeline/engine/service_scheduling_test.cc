// The engine looks again only at the ports the TM marked (ScheduleAllServices): with
// SetCheckSkippedServices every port it skips is checked to have its service pending in time,
// under shaping, paced and weighted queues, multicast and a rate changed in the middle of a run.
#include <gtest/gtest.h>

#include <memory>

#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

constexpr uint64_t k1M = 1'000'000;
constexpr uint64_t k1G = 1'000'000'000;

// At 1 Mbit/s a 100-byte frame (124 bytes on the wire) takes 992 us. Port 1 is backlogged with
// its second frame under way when the run pauses and the control path speeds the port up; the
// next look at the switch (a frame arriving on port 2 at 1.6 ms) must find port 1 ready at once,
// not at the 1.985 ms its pending service was set for.
TEST(EngineServiceTest, ARateRaisedMidRunTakesEffectAtTheNextLook) {
  const std::string in0 = TempPath("svc_rate_in0.pcap"), in2 = TempPath("svc_rate_in2.pcap");
  const std::string out = TempPath("svc_rate_out.pcap");
  WritePcap(in0, {{1000, Frame(0, 0, 100, 1)}, {1000, Frame(0, 0, 100, 2)},
                  {1000, Frame(0, 0, 100, 3)}});
  WritePcap(in2, {{1'600'000, Frame(0, 0, 100, 4)}});
  Engine engine(1, 256);
  engine.SetCheckSkippedServices(true);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", k1M), "").ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 0, in0, "", 10, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 1, "", out, 0, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 2, in2, "", 0, 0}).ok());
  Status ran = engine.Run(1'500'000);
  ASSERT_TRUE(ran.ok()) << ran.message();
  ASSERT_TRUE(engine.FindSwitch("sw")->tm().SetPortRate(PortId{1}, k1G).ok());
  ran = engine.Run();
  ASSERT_TRUE(ran.ok()) << ran.message();
  // Frame 1 leaves at 1010 and arrives 992 us later; frame 2 was under way at the old rate;
  // frame 3 leaves at the look at 1.6 ms and takes 992 ns at 1 Gbit/s.
  EXPECT_EQ(Timestamps(ReadPcap(out)), (std::vector<TimeNs>{993'010, 1'600'992, 1'985'010}));
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
}

// Sends a frame to port 2 in `queue` every gap_ns until 1 ms, every fourth one to the
// multicast group instead.
class Sender final : public EngineHost {
 public:
  Sender(uint8_t queue, TimeNs gap_ns)
      : to_port2_(Frame(kToPort2, queue, 1000)), to_group_(Frame(kToMulticast, queue, 200)),
        gap_ns_(gap_ns) {}
  Status Start(HostContext& ctx) override {
    ctx_ = &ctx;
    ctx.ScheduleTimer(0, 0);
    return Status::Ok();
  }
  void OnFrame(TimeNs, Packet* pkt) override { ctx_->pool().Free(pkt); }
  void OnTimer(TimeNs now, uint64_t) override {
    const std::vector<uint8_t>& frame = ++sent_ % 4 == 0 ? to_group_ : to_port2_;
    ctx_->SendFrame(frame.data(), static_cast<uint32_t>(frame.size()));
    if (now + gap_ns_ < 1'000'000) ctx_->ScheduleTimer(now + gap_ns_, 0);
  }

 private:
  std::vector<uint8_t> to_port2_, to_group_;
  TimeNs gap_ns_;
  uint64_t sent_ = 0;
  HostContext* ctx_ = nullptr;
};

// Five senders into a port scheduled by weights, one of its queues paced, a multicast group on
// three ports, the group's ports shaped slower than the rest: every skipped port is in time.
TEST(EngineServiceTest, SkippedPortsAreInTimeUnderWeightsPacingAndMulticast) {
  SwitchConfig config = PatchSwitch("sw", 10 * k1G, 8);
  config.tm.scheduler = SchedulerKind::kWeighted;
  Engine engine(7, 4096);
  engine.SetCheckSkippedServices(true);
  ASSERT_TRUE(engine.AddSwitch(config, "").ok());
  Switch& sw = *engine.FindSwitch("sw");
  ASSERT_TRUE(sw.tm().SetQueueRate(PortId{2}, 3, 200'000).ok());
  ASSERT_TRUE(sw.tm().SetQueueWeight(2, 1, 4).ok());
  ASSERT_TRUE(sw.tm().McGroupCreate(1).ok());
  Result<uint32_t> node = sw.tm().McNodeCreate(0, {2, 5, 7});
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(sw.tm().McNodeAssociate(1, *node).ok());
  for (PortId p : {5, 7}) ASSERT_TRUE(sw.tm().SetPortRate(p, k1G).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 2, "", "", 100, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 5, "", "", 100, 0}).ok());
  ASSERT_TRUE(engine.AddHostPort({"sw", 7, "", "", 100, 0}).ok());
  for (PortId p : {0, 1, 3, 4, 6}) {
    auto sender = std::make_unique<Sender>(static_cast<uint8_t>(p % 4), 900 + 37 * p);
    ASSERT_TRUE(engine.AttachHost("sw", p, 50, 0, std::move(sender)).ok());
  }
  Status ran = engine.Run();
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_GT(engine.counters().delivered, 3000u);
  EXPECT_GT(sw.tm().drops(DropReason::kTmQueueFull), 0u);  // the ports were congested
  EXPECT_TRUE(engine.CheckConservation().ok()) << engine.CheckConservation().message();
}

}  // namespace
}  // namespace swemu::engine_test
