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
      {[](TmConfig& c) { c.port_queue_depths = {{4, 10}}; }, "port_queue_depths: port 4"},
      {[](TmConfig& c) { c.port_queue_depths = {{1, 0}}; }, "depth_pkts"},
      {[](TmConfig& c) { c.port_queue_depths = {{1, kTmMaxQueueDepthPkts + 1}}; }, "depth_pkts"},
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

// A port_queue_depths entry is every queue's limit on that port from creation; other ports keep
// queue.depth_pkts, and set_queue_depth still changes it afterwards.
TEST(TmConfigTest, PerPortQueueDepthsApplyAtCreation) {
  HeapPacketPool pool(4);
  TmConfig config;
  config.queue.depth_pkts = 100;
  config.port_queue_depths = {{2, 60}};
  EXPECT_EQ(config.QueueDepthPkts(2), 60u);
  EXPECT_EQ(config.QueueDepthPkts(1), 100u);
  auto tm = TrafficManager::Create(config, pool);
  ASSERT_TRUE(tm.ok()) << tm.message();
  for (int q = 0; q < kQueuesPerPort; ++q) {
    EXPECT_EQ((*tm)->QueueDepthLimit(2, q), 60u) << q;
    EXPECT_EQ((*tm)->QueueDepthLimit(1, q), 100u) << q;
  }
  ASSERT_TRUE((*tm)->SetQueueDepth(2, 0, 7).ok());
  EXPECT_EQ((*tm)->QueueDepthLimit(2, 0), 7u);
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
