#include "pipeline/tm/tm_config.h"

#include <gtest/gtest.h>

#include "pipeline/core/packet_pool.h"
#include "pipeline/tm/traffic_manager.h"

namespace swemu {
namespace {

TEST(TmConfigTest, DefaultsAreValid) { EXPECT_TRUE(TmConfig().Validate().ok()); }

TEST(TmConfigTest, EachBadFieldIsNamed) {
  struct Case {
    void (*mutate)(TmConfig&);
    const char* field;
  };
  const Case cases[] = {
      {[](TmConfig& c) { c.num_ports = 0; }, "num_ports"},
      {[](TmConfig& c) { c.num_ports = kTmMaxPorts + 1; }, "num_ports"},
      {[](TmConfig& c) { c.shared_buffer_bytes = 0; }, "shared_buffer_bytes"},
      {[](TmConfig& c) { c.wire_overhead_bytes = kTmMaxWireOverheadBytes + 1; },
       "wire_overhead_bytes"},
      {[](TmConfig& c) { c.quantum_bytes = 0; }, "quantum_bytes"},
      {[](TmConfig& c) { c.port_rate_bps = kTmMaxPortRateBps + 1; }, "port_rate_bps"},
      {[](TmConfig& c) {
         c.port_rates = {{4, 1'000'000}};
       },
       "port_rates: port 4"},
      {[](TmConfig& c) {
         c.port_rates = {{0, kTmMaxPortRateBps + 1}};
       },
       "port_rate_bps"},
      {[](TmConfig& c) { c.queue.depth_pkts = 0; }, "depth_pkts"},
      {[](TmConfig& c) { c.port_queues[4].depth_pkts = 10; }, "port_queues: port 4"},
      {[](TmConfig& c) { c.port_queues[4].ecn_threshold_bytes = 1500; }, "port_queues: port 4"},
      {[](TmConfig& c) { c.port_queues[9].drop_threshold_bytes = 0; }, "port_queues: port 9"},
      {[](TmConfig& c) { c.port_queues[1].depth_pkts = 0; }, "depth_pkts"},
      {[](TmConfig& c) { c.port_queues[1].depth_pkts = kTmMaxQueueDepthPkts + 1; }, "depth_pkts"},
      {[](TmConfig& c) { c.queue.depth_pkts = kTmMaxQueueDepthPkts + 1; }, "depth_pkts"},
      {[](TmConfig& c) { c.queue.weight = 0; }, "weight"},
      {[](TmConfig& c) { c.queue.rate_pps = kTmMaxQueueRatePps + 1; }, "rate_pps"},
      {[](TmConfig& c) { c.scheduler = static_cast<SchedulerKind>(7); }, "scheduler"},
  };
  for (const Case& c : cases) {
    TmConfig config;
    c.mutate(config);
    Status status = config.Validate();
    ASSERT_FALSE(status.ok()) << c.field;
    EXPECT_NE(status.message().find(c.field), std::string::npos) << status.message();
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
  }
}

TEST(TmConfigTest, EachPortStartsAtItsOwnRateOrTheDefault) {
  HeapPacketPool pool(4);
  TmConfig config;
  config.port_rate_bps = kDefaultPortRateBps;
  config.port_rates = {{1, 1'000'000'000}, {3, 0}, {1, 2'000'000'000}};  // the later 1 wins
  EXPECT_EQ(config.PortRateBps(1), 2'000'000'000u);
  auto tm = TrafficManager::Create(config, pool);
  ASSERT_TRUE(tm.ok()) << tm.message();
  EXPECT_EQ((*tm)->PortRate(0), kDefaultPortRateBps);
  EXPECT_EQ((*tm)->PortRate(1), 2'000'000'000u);
  EXPECT_EQ((*tm)->PortRate(2), kDefaultPortRateBps);
  EXPECT_EQ((*tm)->PortRate(3), 0u);
}

// A port_queues entry's fields are every queue's settings on that port from creation; the fields
// it leaves empty, and the other ports, keep queue's; set_queue_depth and set_ecn_threshold still
// change them afterwards.
TEST(TmConfigTest, PerPortQueueSettingsApplyAtCreation) {
  HeapPacketPool pool(4);
  TmConfig config;
  config.queue.depth_pkts = 100;
  config.queue.ecn_threshold_bytes = 30'000;
  config.queue.drop_threshold_bytes = 90'000;
  config.port_queues[2] = {.depth_pkts = 60, .ecn_threshold_bytes = 3'000};
  config.port_queues[3] = {.ecn_threshold_bytes = 0, .drop_threshold_bytes = 5'000};
  const QueueConfig two = config.QueueFor(2);
  EXPECT_EQ(two.depth_pkts, 60u);
  EXPECT_EQ(two.ecn_threshold_bytes, 3'000u);
  EXPECT_EQ(two.drop_threshold_bytes, 90'000u);
  EXPECT_EQ(config.QueueFor(1).depth_pkts, 100u);
  auto tm = TrafficManager::Create(config, pool);
  ASSERT_TRUE(tm.ok()) << tm.message();
  for (int q = 0; q < kQueuesPerPort; ++q) {
    EXPECT_EQ((*tm)->QueueDepthLimit(2, q), 60u) << q;
    EXPECT_EQ((*tm)->EcnThreshold(2, q), 3'000u) << q;
    EXPECT_EQ((*tm)->DropThreshold(2, q), 90'000u) << q;
    EXPECT_EQ((*tm)->QueueDepthLimit(3, q), 100u) << q;
    EXPECT_EQ((*tm)->EcnThreshold(3, q), 0u) << q;  // an override of 0 turns marking off
    EXPECT_EQ((*tm)->DropThreshold(3, q), 5'000u) << q;
    for (PortId p : {0, 1}) {
      EXPECT_EQ((*tm)->QueueDepthLimit(p, q), 100u) << p << " " << q;
      EXPECT_EQ((*tm)->EcnThreshold(p, q), 30'000u) << p << " " << q;
      EXPECT_EQ((*tm)->DropThreshold(p, q), 90'000u) << p << " " << q;
    }
  }
  ASSERT_TRUE((*tm)->SetQueueDepth(2, 0, 7).ok());
  EXPECT_EQ((*tm)->QueueDepthLimit(2, 0), 7u);
  ASSERT_TRUE((*tm)->SetEcnThresholdChecked(2, 0, 1'000).ok());
  EXPECT_EQ((*tm)->EcnThreshold(2, 0), 1'000u);
}

// A port's queues set at creation behave as the same settings given by command at time 0: the
// same packets are kept, dropped (by the drop threshold, then by the depth) and marked.
TEST(TmConfigTest, SettingsAtCreationActAsTheCommandsAtTimeZero) {
  TmConfig declared;
  declared.num_ports = 2;
  declared.port_queues[1] = {
      .depth_pkts = 7, .ecn_threshold_bytes = 2'000, .drop_threshold_bytes = 5'500};
  TmConfig commanded;
  commanded.num_ports = 2;
  auto run = [](const TmConfig& config, bool by_command) {
    HeapPacketPool pool(64);
    auto tm = TrafficManager::Create(config, pool);
    EXPECT_TRUE(tm.ok()) << tm.message();
    if (by_command) {
      EXPECT_TRUE((*tm)->SetQueueDepth(PortId{1}, std::nullopt, 7).ok());
      for (int q = 0; q < kQueuesPerPort; ++q) {
        EXPECT_TRUE((*tm)->SetEcnThresholdChecked(1, q, 2'000).ok());
        EXPECT_TRUE((*tm)->SetDropThresholdChecked(1, q, 5'500).ok());
      }
    }
    std::string seen;
    for (uint32_t len : {1'000, 1'000, 1'000, 1'000, 1'000, 1'000, 100, 100, 100}) {
      Packet* pkt = pool.Alloc();
      pkt->len = len;
      pkt->meta.egress_spec = 1;
      seen += (*tm)->Enqueue(pkt, 0) ? "+" : "-";
    }
    while (Packet* pkt = (*tm)->Dequeue(1, 0)) {
      seen += pkt->meta.congested ? "m" : ".";
      pool.Free(pkt);
    }
    return seen;
  };
  const std::string declared_run = run(declared, false);
  EXPECT_EQ(declared_run, "+++++-++-..mmmmm");
  EXPECT_EQ(declared_run, run(commanded, true));
}

TEST(TmConfigTest, CreateRefusesAnInvalidConfig) {
  HeapPacketPool pool(4);
  TmConfig config;
  config.num_ports = 0;
  auto tm = TrafficManager::Create(config, pool);
  ASSERT_FALSE(tm.ok());
  EXPECT_NE(tm.message().find("num_ports"), std::string::npos);
}

}  // namespace
}  // namespace swemu
