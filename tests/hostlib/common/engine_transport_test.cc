// EngineTransport: an Endpoint in the virtual-time engine sends, receives and gets its timers.
#include "hostlib/common/engine_transport.h"

#include <gtest/gtest.h>

#include <vector>

#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

const MacAddr kA = MacAddr::FromU64(0x020000000001ull), kB = MacAddr::FromU64(0x020000000002ull);

// Sends `to_send` frames at start and at each timer; wants timers at the times in `timers`
// (consumed in order; a time may move earlier or later between calls).
class ScriptedEndpoint final : public Endpoint {
 public:
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override {
    received.push_back({now, std::vector<uint8_t>(frame.begin(), frame.end())});
  }
  void OnTimer(TimeNs now) noexcept override {
    fired.push_back(now);
    if (!timers.empty()) timers.erase(timers.begin());
    ++sends_due;
  }
  TimeNs NextTimer() const noexcept override { return timers.empty() ? kNever : timers.front(); }
  void Pump(TimeNs) noexcept override {
    ++pumps;
    for (; sends_due > 0; --sends_due) transport->Send(frame);
  }

  Transport* transport = nullptr;
  std::vector<uint8_t> frame;
  int sends_due = 0;
  int pumps = 0;
  std::vector<TimeNs> timers;
  std::vector<TimeNs> fired;
  std::vector<std::pair<TimeNs, std::vector<uint8_t>>> received;
};

struct TwoHosts {
  TwoHosts() : engine(1, 256) {
    SwitchConfig config;
    config.num_ports = 2;
    config.program = "l2l3";
    EXPECT_TRUE(engine.AddSwitch(config, "").ok());
    Switch& sw = *engine.FindSwitch("sw0");
    EXPECT_TRUE(sw.commands().Execute("table_add dmac forward " + FormatMac(kB) + " => 1").ok());
    a_transport = *EngineTransport::Attach(engine, "sw0", 0, 100);
    b_transport = *EngineTransport::Attach(engine, "sw0", 1, 50);
    a_transport->SetEndpoint(&a);
    b_transport->SetEndpoint(&b);
    a.transport = a_transport;
    b.transport = b_transport;
    a.frame = FrameBuilder().Eth(kB, kA).Ipv4(1, 2).Udp(1, 2).Payload(20).Build();
  }
  Engine engine;
  ScriptedEndpoint a, b;
  EngineTransport* a_transport;
  EngineTransport* b_transport;
};

TEST(EngineTransportTest, FramesGoThroughTheSwitchAndTimersFireAtTheirTimes) {
  TwoHosts t;
  t.a.sends_due = 1;          // sent by the Pump at start
  t.a.timers = {1000, 5000};  // one more frame at each
  ASSERT_TRUE(t.engine.Run().ok());
  EXPECT_EQ(t.a.fired, (std::vector<TimeNs>{1000, 5000}));
  ASSERT_EQ(t.b.received.size(), 3u);
  EXPECT_EQ(t.b.received[0].first, 150u);  // host delays 100 + 50, unshaped port
  EXPECT_EQ(t.b.received[1].first, 1150u);
  EXPECT_EQ(t.b.received[0].second, t.a.frame);
  EXPECT_EQ(t.a_transport->counters().frames_sent, 3u);
  EXPECT_EQ(t.b_transport->counters().frames_received, 3u);
  EXPECT_GE(t.b.pumps, 4);  // at start and after each frame
}

// The endpoint's next timer moves earlier after the engine timer was set: the earlier time
// fires, the replaced one is ignored; moving later only re-arms.
class MovingTimer final : public Endpoint {
 public:
  void OnFrame(TimeNs, std::span<const uint8_t>) noexcept override {}
  void OnTimer(TimeNs now) noexcept override {
    fired.push_back(now);
    next = now == 2000 ? 7000 : kNever;  // then later than the pending 3000 event
  }
  TimeNs NextTimer() const noexcept override { return next; }
  void Pump(TimeNs now) noexcept override {
    if (now == 0 && step++ == 1) next = 2000;  // the second pump at 0 (after Wake)
  }
  TimeNs next = 3000;
  int step = 0;
  std::vector<TimeNs> fired;
};

TEST(EngineTransportTest, AnEarlierNextTimerReplacesThePendingOne) {
  TwoHosts t;
  MovingTimer m;
  t.a_transport->SetEndpoint(&m);
  ASSERT_TRUE(t.engine.Run(0).ok());  // Start: timer at 3000
  t.a_transport->Wake();              // pump at 0 moves it to 2000
  ASSERT_TRUE(t.engine.Run().ok());
  EXPECT_EQ(m.fired, (std::vector<TimeNs>{2000, 7000}));
  EXPECT_EQ(t.a_transport->counters().timers_fired, 2u);
}

TEST(EngineTransportTest, StartWithoutAnEndpointFails) {
  Engine engine(1, 16);
  SwitchConfig config;
  config.num_ports = 1;
  ASSERT_TRUE(engine.AddSwitch(config, "").ok());
  ASSERT_TRUE(EngineTransport::Attach(engine, "sw0", 0).ok());
  EXPECT_FALSE(engine.Run().ok());
  EXPECT_FALSE(EngineTransport::Attach(engine, "nope", 0).ok());
}

}  // namespace
}  // namespace swemu
