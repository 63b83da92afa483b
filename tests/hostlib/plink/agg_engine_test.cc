// AggEngine as packets (hostlib/plink/agg_engine.h) on an emulated datacenter in the virtual-time
// engine: Table 1's traffic measured at the hosts, exact sums, loss recovery, and the bad calls.
#include "hostlib/plink/agg_engine.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "hostlib/common/engine_transport.h"
#include "hostlib/plink/datacenter.h"
#include "pipeline/engine/engine.h"
#include "pipeline/switch/switch.h"

namespace swemu {
namespace {

// C racks of N hosts under one spine (10 Gbit/s hosts, a 2:1 oversubscribed spine).
std::unique_ptr<EmulatedDatacenter> Racks(uint32_t racks, uint32_t per_rack, double loss = 0) {
  DatacenterSpec spec;
  spec.fanout = {racks};
  spec.per_rack = per_rack;
  spec.tier_delay_ns = {5'000, 1'000};
  spec.tier_rate_bps = {per_rack * 5'000'000'000ull, 10'000'000'000ull};
  spec.host_link_loss = loss;
  Result<std::unique_ptr<EmulatedDatacenter>> dc = EmulatedDatacenter::Create(spec);
  EXPECT_TRUE(dc.ok()) << dc.message();
  return dc.ok() ? std::move(*dc) : nullptr;
}

// Integer-valued inputs (exact in float32 whatever the order of the additions) and their sum.
std::vector<std::vector<float>> Inputs(uint32_t hosts, std::size_t n, std::vector<float>* sum) {
  std::vector<std::vector<float>> in(hosts, std::vector<float>(n));
  sum->assign(n, 0);
  for (uint32_t h = 0; h < hosts; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      in[h][i] = static_cast<float>(static_cast<int>((i * 7 + h * 131) % 2001) - 1000);
      (*sum)[i] += in[h][i];
    }
  }
  return in;
}

// Payload bytes the racks' uplinks carried up towards the spine: frame bytes less 66 per frame
// (Ethernet, IPv4, UDP and the PLink header; acks carry no payload). Every cross-rack payload
// byte leaves its rack once; without losses there is nothing else.
uint64_t UplinkPayload(EmulatedDatacenter& dc, uint32_t racks, uint32_t per_rack) {
  uint64_t bytes = 0;
  for (uint32_t r = 0; r < racks; ++r) {
    const PortCounters& up =
        dc.engine().FindSwitch("l1s" + std::to_string(r))->counters().ports[per_rack];
    bytes += up.tx_bytes - (kUdpPayloadOffset + kPlinkHeaderLen) * up.tx_packets;
  }
  return bytes;
}

void ExpectSums(const std::vector<std::vector<float>>& out, const std::vector<float>& sum) {
  for (std::size_t h = 0; h < out.size(); ++h) {
    ASSERT_EQ(out[h].size(), sum.size());
    for (std::size_t i = 0; i < sum.size(); ++i) {
      ASSERT_EQ(out[h][i], sum[i]) << "host " << h << " element " << i;
    }
  }
}

TEST(AggEngine, Table1TrafficMeasuredOnPacketsAndExactSums) {
  constexpr uint32_t kRacks = 4, kPerRack = 4, kHosts = kRacks * kPerRack;
  constexpr std::size_t kFloats = 64 * 1024;  // S = 256 KiB
  constexpr uint64_t kS = 4 * kFloats;
  auto dc = Racks(kRacks, kPerRack);
  ASSERT_NE(dc, nullptr);
  std::vector<float> sum;
  const auto in = Inputs(kHosts, kFloats, &sum);
  const auto chunks = CutChunks(kS, 16 << 10);
  Result<AggPlan> two = MakeTwoLevelPlan(dc->rack_of(), chunks);
  Result<AggPlan> flat = MakeFlatPlan(kHosts, chunks);
  ASSERT_TRUE(two.ok() && flat.ok());
  std::vector<std::vector<float>> out;
  Result<ReductionRun> r2 = dc->AllReduce(*two, in, &out);
  ASSERT_TRUE(r2.ok()) << r2.message();
  ExpectSums(out, sum);
  const uint64_t uplinks_2lha = UplinkPayload(*dc, kRacks, kPerRack);
  Result<ReductionRun> rf = dc->AllReduce(*flat, in, &out);
  ASSERT_TRUE(rf.ok()) << rf.message();
  ExpectSums(out, sum);
  const uint64_t uplinks_fa = UplinkPayload(*dc, kRacks, kPerRack) - uplinks_2lha;
  ASSERT_EQ(r2->retransmissions + rf->retransmissions, 0u);
  std::printf("2LHA: %.3f ms, cross-rack %llu B of %llu; FA: %.3f ms, cross-rack %llu B of %llu\n",
              r2->latency_ns / 1e6, static_cast<unsigned long long>(r2->cross_rack_bytes),
              static_cast<unsigned long long>(r2->total_bytes), rf->latency_ns / 1e6,
              static_cast<unsigned long long>(rf->cross_rack_bytes),
              static_cast<unsigned long long>(rf->total_bytes));
  // Table 1: 2(C-1)S against 2N(C-1)S across racks, 2(NC-1)S in all for both.
  EXPECT_EQ(r2->cross_rack_bytes, 2 * (kRacks - 1) * kS);
  EXPECT_EQ(rf->cross_rack_bytes, 2 * kPerRack * (kRacks - 1) * kS);
  EXPECT_EQ(r2->total_bytes, 2 * (kHosts - 1) * kS);
  EXPECT_EQ(rf->total_bytes, 2 * (kHosts - 1) * kS);
  // The same counted on the wire, on the racks' uplinks.
  EXPECT_EQ(uplinks_2lha, 2 * (kRacks - 1) * kS);
  EXPECT_EQ(uplinks_fa, 2 * kPerRack * (kRacks - 1) * kS);
  // Behind a 2:1 oversubscribed spine the hierarchy is the faster one.
  EXPECT_LT(r2->latency_ns, rf->latency_ns);
}

TEST(AggEngine, LossyHostLinksStillGiveExactSums) {
  auto dc = Racks(2, 3, 0.02);
  ASSERT_NE(dc, nullptr);
  std::vector<float> sum;
  const auto in = Inputs(6, 10'000, &sum);  // 40000 B: the last chunk and packet are short
  Result<AggPlan> plan = MakeTwoLevelPlan(dc->rack_of(), CutChunks(40'000, 4'100));
  ASSERT_TRUE(plan.ok());
  std::vector<std::vector<float>> out;
  for (int round = 0; round < 3; ++round) {
    Result<ReductionRun> r = dc->AllReduce(*plan, in, &out);
    ASSERT_TRUE(r.ok()) << r.message();
    ExpectSums(out, sum);
    EXPECT_GT(r->retransmissions, 0u);
  }
}

TEST(AggEngine, UnevenGroupsAndOneHost) {
  auto dc = Racks(3, 3);
  ASSERT_NE(dc, nullptr);
  std::vector<float> sum;
  const auto in = Inputs(9, 3'000, &sum);
  // Groups that cut across racks, of sizes 1, 3 and 5.
  Result<AggPlan> plan = MakeTwoLevelPlan({2, 1, 2, 1, 2, 0, 1, 2, 2}, CutChunks(12'000, 1'000));
  ASSERT_TRUE(plan.ok());
  std::vector<std::vector<float>> out;
  Result<ReductionRun> r = dc->AllReduce(*plan, in, &out);
  ASSERT_TRUE(r.ok()) << r.message();
  ExpectSums(out, sum);
}

TEST(AggEngine, BadCallsAreRefusedWithOneLine) {
  std::vector<PlinkNodeAddr> nodes(2);
  PlinkAggNode node(0, nodes, nullptr);
  Result<AggPlan> plan = MakeFlatPlan(2, CutChunks(400, 100));
  ASSERT_TRUE(plan.ok());
  std::vector<float> in(100), out(100);
  EXPECT_FALSE(node.AllReduce(*plan, 1, in.data(), out.data(), 99, 0).ok());  // size
  Result<AggPlan> three = MakeFlatPlan(3, CutChunks(400, 100));
  EXPECT_FALSE(node.AllReduce(*three, 1, in.data(), out.data(), 100, 0).ok());  // nodes
  Result<AggPlan> odd = MakeFlatPlan(2, {101, 299});
  EXPECT_FALSE(node.AllReduce(*odd, 1, in.data(), out.data(), 100, 0).ok());  // not floats
  AggPlan broken = *plan;
  broken.global_master[0] = 5;
  EXPECT_FALSE(node.AllReduce(broken, 1, in.data(), out.data(), 100, 0).ok());
  AggEngineOptions bad;
  bad.payload_bytes = 6;
  PlinkAggNode odd_payload(0, nodes, nullptr, bad);
  Status s = odd_payload.AllReduce(*plan, 1, in.data(), out.data(), 100, 0);
  EXPECT_NE(s.message().find("payload_bytes"), std::string::npos) << s.message();
}

TEST(AggEngine, AReductionThatCannotFinishEndsWithAnError) {
  auto dc = Racks(2, 2);
  ASSERT_NE(dc, nullptr);
  dc->TakeDown(3);
  std::vector<float> sum;
  const auto in = Inputs(4, 1'000, &sum);
  Result<AggPlan> plan = MakeFlatPlan(4, CutChunks(4'000, 1'000));
  ASSERT_TRUE(plan.ok());
  std::vector<std::vector<float>> out;
  Result<ReductionRun> r = dc->AllReduce(*plan, in, &out, 500'000'000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("hosts done after 500 ms"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace swemu
