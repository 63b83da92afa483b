// The sharded switch paths of real time on several lcores, on replicas without DPDK
// (multicore_replicas.h): multicast copies go to their ports' owners, a recirculated packet runs
// ingress again on its shard's lcore, and a packet is parsed once, by the lcore that received it.
#include "tests/swemu/multicore_replicas.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline/program/program.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu {
namespace {

using testing::Replicas;
using testing::Sent;

// The last payload byte is the shard key, the one before it the egress port. Egress on a first
// pass adds 1 to the key and recirculates, so the second ingress belongs to the next lcore.
class ShardRecirculateProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "test_shard_recirculate"; }
  Status Load(ProgramContext&) override { return Status::Ok(); }
  uint32_t ShardKey(const Packet& pkt) const noexcept override { return pkt.data[pkt.len - 1]; }
  void Ingress(Packet& pkt) noexcept override {
    pkt.meta.egress_spec = pkt.data[pkt.len - 2];
    ingress_keys.push_back(pkt.data[pkt.len - 1]);
  }
  void Egress(Packet& pkt) noexcept override {
    if (pkt.meta.recirculate_count == 0) {
      ++pkt.data[pkt.len - 1];
      pkt.meta.recirculate = true;
    }
  }
  std::vector<uint8_t> ingress_keys;  // test only: what this replica's ingress saw
};
SWEMU_REGISTER_PROGRAM("test_shard_recirculate", ShardRecirculateProgram);

std::vector<uint8_t> Frame(uint64_t dst, uint8_t port, uint8_t key) {
  std::vector<uint8_t> frame = FrameBuilder()
                                   .Eth(MacAddr::FromU64(dst), MacAddr::FromU64(0xa))
                                   .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
                                   .Udp(1000, 2000)
                                   .Payload(20)
                                   .Build();
  frame[frame.size() - 2] = port;
  frame[frame.size() - 1] = key;
  return frame;
}

SwitchConfig Config(const std::string& program, uint16_t ports) {
  SwitchConfig config;
  config.program = program;
  config.num_ports = ports;
  return config;
}

std::vector<uint8_t>& KeysSeen(Switch& sw) {
  return static_cast<ShardRecirculateProgram&>(sw.program()).ingress_keys;
}

TEST(MulticoreReplicasTest, RecirculatedPacketRunsIngressAgainOnItsShardsLcore) {
  Replicas r(Config("test_shard_recirculate", 2), 2);
  // Received on port 1 (lcore 1), key 4: ingress on lcore 0, egress port 0 (lcore 0), which
  // recirculates it with key 5: the second ingress is lcore 1's, then port 0 again sends it.
  EXPECT_EQ(r.Receive(1, Frame(2, 0, 4)), 0u);
  const std::vector<Sent> sent = r.Drain();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].port, 0);
  EXPECT_EQ(sent[0].bytes.back(), 5);
  EXPECT_EQ(KeysSeen(r.sw(0)), std::vector<uint8_t>{4});
  EXPECT_EQ(KeysSeen(r.sw(1)), std::vector<uint8_t>{5});
  EXPECT_EQ(r.sw(0).counters().program.recirculated, 1u);
  EXPECT_EQ(r.sw(0).counters().program.egress_packets, 2u);
  EXPECT_EQ(r.sw(1).counters().program.ingress_packets, 1u);
  EXPECT_EQ(r.sw(0).TotalDrops() + r.sw(1).TotalDrops(), 0u);
}

TEST(MulticoreReplicasTest, RecirculatedPacketOfALocalShardStaysOnItsLcore) {
  Replicas r(Config("test_shard_recirculate", 2), 2);
  r.Receive(0, Frame(2, 0, 6));  // key 6 then 7: lcore 0, then lcore 1
  r.Receive(0, Frame(2, 1, 5));  // key 5 then 6: lcore 1 sends it on port 1, lcore 0's again
  const std::vector<Sent> sent = r.Drain();
  EXPECT_EQ(sent.size(), 2u);
  std::vector<uint8_t> seen0 = KeysSeen(r.sw(0));
  std::vector<uint8_t> seen1 = KeysSeen(r.sw(1));
  std::sort(seen0.begin(), seen0.end());
  std::sort(seen1.begin(), seen1.end());
  EXPECT_EQ(seen0, (std::vector<uint8_t>{6, 6}));
  EXPECT_EQ(seen1, (std::vector<uint8_t>{5, 7}));
}

class MulticoreMulticastTest : public ::testing::Test {
 protected:
  MulticoreMulticastTest() : r_(Config("l2l3", 4), 2) {
    r_.Cmd("table_add dmac multicast 00:00:00:00:00:77 => 1");
    r_.Cmd("mc_mgrp_create 1");
    r_.Cmd("mc_node_create 9 0 1 2 3");
    r_.Cmd("mc_node_associate 1 0");
    r_.Cmd("table_add dmac multicast 00:00:00:00:00:66 => 2");
    r_.Cmd("mc_mgrp_create 2");  // no nodes
  }
  Replicas r_;
};

TEST_F(MulticoreMulticastTest, EachCopyIsQueuedOnItsPortsOwner) {
  const uint32_t lcore = r_.Receive(1, Frame(0x77, 0, 0));
  // The copies for the ingress lcore's ports are queued there, the others handed over.
  EXPECT_EQ(r_.router(lcore).egress[1 - lcore].size(), 2u);
  const std::vector<Sent> sent = r_.Drain();
  std::vector<PortId> ports;
  for (const Sent& s : sent) ports.push_back(s.port);
  std::sort(ports.begin(), ports.end());
  EXPECT_EQ(ports, (std::vector<PortId>{0, 1, 2, 3}));
  EXPECT_EQ(r_.sw(lcore).MulticastCopies(), 3u);
  EXPECT_EQ(
      r_.sw(0).Drops(DropReason::kShardMulticast) + r_.sw(1).Drops(DropReason::kShardMulticast),
      0u);
  for (uint32_t i = 0; i < 2; ++i) {
    for (PortId p = 0; p < 4; ++p) {
      // A port's queue counts its copy on the owner only.
      EXPECT_EQ(r_.sw(i).tm().queue_counters(p, 0).enqueued, p % 2 == i ? 1u : 0u) << p;
    }
  }
}

TEST_F(MulticoreMulticastTest, EmptyGroupIsDroppedAsWithOneLcore) {
  const uint32_t lcore = r_.Receive(0, Frame(0x66, 0, 0));
  EXPECT_TRUE(r_.Drain().empty());
  EXPECT_EQ(r_.sw(lcore).Drops(DropReason::kMulticastEmptyGroup), 1u);
}

TEST(MulticoreParseTest, HeadersParsedByTheReceivingLcoreServeTheShardsIngress) {
  Replicas r(Config("l2l3", 2), 2);
  r.Cmd("table_add dmac forward 00:00:00:00:00:02 => 1");
  uint32_t crossed = 0;
  for (uint16_t flow = 0; flow < 16; ++flow) {
    std::vector<uint8_t> frame = FrameBuilder()
                                     .Eth(MacAddr::FromU64(2), MacAddr::FromU64(1))
                                     .Ipv4(MakeIpv4Addr(10, 0, 0, 1), MakeIpv4Addr(10, 0, 0, 2))
                                     .Udp(static_cast<uint16_t>(1000 + flow), 2000)
                                     .Payload(20)
                                     .Build();
    crossed += r.Receive(0, frame) != 0;
  }
  EXPECT_GT(crossed, 0u);  // some flows' ingress ran on lcore 1 with lcore 0's parse
  EXPECT_EQ(r.Drain().size(), 16u);
  EXPECT_EQ(r.sw(0).counters().ports[0].rx_packets + r.sw(1).counters().ports[0].rx_packets, 16u);
  // A frame the parser refuses is dropped by the lcore that received it.
  EXPECT_EQ(r.Receive(1, std::vector<uint8_t>(10, 0)), 1u);
  EXPECT_EQ(r.sw(1).Drops(DropReason::kTruncatedEthernet), 1u);
}

}  // namespace
}  // namespace swemu
