// Cut-through (Switch::SetCutThroughSink): a run for an idle unshaped port leaves during ingress,
// through egress and the deparser, with the same bytes and counters as when it waits in the TM;
// anything that would have to wait (a busy, shaped or not-ready port) still waits, in order.
#include <gtest/gtest.h>

#include <vector>

#include "pipeline/wire/address.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using testing::SentFrame;
using testing::SwitchHarness;

// Takes what the switch sends during ingress, as the real-time datapath's TX would.
class RecordingSink final : public CutThroughSink {
 public:
  explicit RecordingSink(PacketPool& pool) : pool_(pool) {}
  bool Ready(PortId /*port*/) noexcept override { return ready; }
  void Send(PortId port, Packet** pkts, uint32_t n) noexcept override {
    for (uint32_t i = 0; i < n; ++i) {
      sent.push_back({port, 0, std::vector<uint8_t>(pkts[i]->data, pkts[i]->data + pkts[i]->len)});
      pool_.Free(pkts[i]);
    }
  }
  bool ready = true;
  std::vector<SentFrame> sent;  // time 0: the sink does not read the clock

 private:
  PacketPool& pool_;
};

std::vector<uint8_t> Frame(uint8_t tag) {
  return FrameBuilder()
      .Eth(*ParseMac("00:00:00:00:00:0b"), *ParseMac("00:00:00:00:00:0a"))
      .Ipv4(*ParseIpv4("10.0.0.1"), *ParseIpv4("10.0.0.2"))
      .Tos(0x02)  // ECT(0): the egress marks it when its queue was congested
      .Udp(1, 2)
      .Payload(std::vector<uint8_t>(20, tag))
      .Build();
}

std::vector<std::vector<uint8_t>> Frames(uint8_t first, int count) {
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < count; ++i) frames.push_back(Frame(static_cast<uint8_t>(first + i)));
  return frames;
}

class CutThroughTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (SwitchHarness* h : {&cut_, &queued_}) {
      ASSERT_TRUE(h->ok()) << h->error();
      h->MustCmd("table_add dmac forward 00:00:00:00:00:0b => 1");
      h->MustCmd("set_ecn_threshold 1 0 100");  // so that the run's later packets are marked
    }
    cut_.sw().SetCutThroughSink(&sink_);
  }
  static SwitchConfig Config() {
    SwitchConfig config;
    config.program = "l2l3";
    config.tm.port_rate_bps = 0;  // unshaped
    return config;
  }
  // Frames as the sink took them, without times.
  static std::vector<SentFrame> Untimed(std::vector<SentFrame> frames) {
    for (SentFrame& frame : frames) frame.time = 0;
    return frames;
  }

  SwitchHarness cut_{Config()};
  SwitchHarness queued_{Config()};
  RecordingSink sink_{cut_.pool()};
};

TEST_F(CutThroughTest, IdlePortSendsTheRunDuringIngressAsTheTmWouldHave) {
  cut_.SendBurst(0, Frames(0, 6));
  queued_.SendBurst(0, Frames(0, 6));
  ASSERT_EQ(sink_.sent.size(), 6u);  // before any Transmit call
  EXPECT_EQ(cut_.sw().tm().TotalQueued(), 0u);
  EXPECT_EQ(sink_.sent, Untimed(queued_.Drain()));
  // Every counter (ports, queues with their marks and depths, program) as if queued.
  EXPECT_EQ(cut_.sw().CountersJson(), queued_.sw().CountersJson());
  EXPECT_GT(cut_.sw().tm().queue_counters(1, 0).marked, 0u);
  EXPECT_TRUE(cut_.Drain().empty());
}

TEST_F(CutThroughTest, APortTheSinkCallsBusyQueuesAndKeepsOrder) {
  sink_.ready = false;
  cut_.SendBurst(0, Frames(0, 3));
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(cut_.sw().tm().TotalQueued(), 3u);
  // The port is free again but still holds packets: the next run waits behind them.
  sink_.ready = true;
  cut_.SendBurst(0, Frames(3, 3));
  EXPECT_TRUE(sink_.sent.empty());
  queued_.SendBurst(0, Frames(0, 3));
  queued_.SendBurst(0, Frames(3, 3));
  EXPECT_EQ(cut_.Drain(), queued_.Drain());
  // Drained, the port is idle: the next run cuts through.
  cut_.SendBurst(0, Frames(6, 2));
  EXPECT_EQ(sink_.sent.size(), 2u);
}

TEST_F(CutThroughTest, AShapedPortQueues) {
  cut_.MustCmd("set_port_rate 1 1G");
  cut_.SendBurst(0, Frames(0, 4));
  EXPECT_TRUE(sink_.sent.empty());
  EXPECT_EQ(cut_.Drain().size(), 4u);
}

TEST(CutThroughRecirculationTest, ARecirculatedPacketCutsThroughAgain) {
  // test_recirculate (switch_test.cc) sends every packet to port 1 and recirculates it once.
  SwitchConfig config;
  config.program = "test_recirculate";
  SwitchHarness h(config);
  ASSERT_TRUE(h.ok()) << h.error();
  RecordingSink sink(h.pool());
  h.sw().SetCutThroughSink(&sink);
  h.SendBurst(0, Frames(0, 4));
  ASSERT_EQ(sink.sent.size(), 4u);
  for (const SentFrame& frame : sink.sent) EXPECT_EQ(frame.port, 1);
  EXPECT_EQ(h.sw().counters().program.recirculated, 4u);
  EXPECT_EQ(h.sw().counters().program.egress_packets, 8u);
  EXPECT_EQ(h.sw().tm().TotalQueued(), 0u);
}

}  // namespace
}  // namespace swemu
