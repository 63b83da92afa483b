#pragma once
// Shared fixture for the TM tests: a heap pool, a TM built from a config, packet helpers.
#include <gtest/gtest.h>

#include <memory>

#include "pipeline/core/packet_pool.h"
#include "pipeline/tm/traffic_manager.h"

namespace swemu::tm_test {

class TmTest : public ::testing::Test {
 public:
  void Build(const TmConfig& config, std::size_t pool_size = 1024) {
    tm_.reset();
    pool_ = std::make_unique<HeapPacketPool>(pool_size);
    auto tm = TrafficManager::Create(config, *pool_);
    ASSERT_TRUE(tm.ok()) << tm.message();
    tm_ = std::move(tm).value();
  }

  // A packet of `len` bytes for (port, queue); the frame's first byte carries `tag`.
  Packet* Make(uint32_t len, PortId port, uint8_t queue = 0, uint8_t tag = 0) {
    Packet* pkt = pool_->Alloc();
    EXPECT_NE(pkt, nullptr);
    if (pkt == nullptr) return nullptr;
    EXPECT_TRUE(pkt->Append(len));
    pkt->data[0] = tag;
    pkt->meta.egress_spec = port;
    pkt->meta.queue_id = queue;
    return pkt;
  }

  uint32_t Send(uint32_t len, PortId port, uint8_t queue, TimeNs now, uint8_t tag = 0) {
    return tm_->Enqueue(Make(len, port, queue, tag), now);
  }

  void TearDown() override {
    if (tm_ != nullptr) {
      tm_->FreeAll();
      EXPECT_EQ(pool_->InUse(), 0u);
    }
  }

  std::unique_ptr<HeapPacketPool> pool_;
  std::unique_ptr<TrafficManager> tm_;
};

}  // namespace swemu::tm_test
