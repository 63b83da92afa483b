// The goat program case by case (docs/wire.md "GOAT"): one switch (node 1), workers 0-3 on ports
// 0-3, the PS on port 4, a neighbour switch (node 2) behind port 5; 8 elements per fragment.
#include "pipeline/programs/goat.h"

#include <gtest/gtest.h>

#include <bit>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/goat.h"
#include "pipeline/wire/ipv4.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT(build/namespaces)

constexpr uint16_t kN = 8;
constexpr uint16_t kJob = 1;
constexpr PortId kPs = 4;
constexpr PortId kNeighbour = 5;

std::vector<int32_t> Fill(int32_t v) { return std::vector<int32_t>(kN, v); }

struct Fragment {
  GoatFields f;
  std::vector<int32_t> values = Fill(0);
  uint16_t elements = kN;

  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> payload(GoatPayloadLen(elements));
    GoatFields g = f;
    g.num_elements = elements;
    g.Encode(payload.data());
    for (std::size_t i = 0; i < values.size() && i < elements; ++i) {
      StoreBe32(payload.data() + kGoatHeaderLen + 4 * i, static_cast<uint32_t>(values[i]));
    }
    return FrameBuilder()
        .Eth(*ParseMac("02:00:00:00:00:10"), *ParseMac("02:00:00:00:00:01"))
        .Ipv4(0x0A000001, 0x0A000010)
        .Udp(30000, kGoatDefaultUdpPort)
        .Payload(payload)
        .Build();
  }
};

Fragment Grad(uint8_t worker, uint16_t node, uint16_t submodel, uint32_t fragment, uint32_t round,
              int32_t v, uint8_t flags = 0) {
  Fragment p;
  p.f.flags = flags;
  p.f.job_id = kJob;
  p.f.node_id = node;
  p.f.submodel = submodel;
  p.f.fragment = fragment;
  p.f.round = round;
  p.f.count = 1;
  p.f.bitmap = uint64_t{1} << worker;
  p.values = Fill(v);
  return p;
}

struct Out {
  PortId port = 0;
  GoatFields f;
  std::vector<int32_t> values;
};

Out Decode(const SentFrame& frame) {
  Out out;
  out.port = frame.port;
  const uint8_t* goat = frame.bytes.data() + kGoatHeaderOffset;
  out.f = *GoatFields::Decode(goat, frame.bytes.size() - kGoatHeaderOffset);
  for (uint16_t i = 0; i < out.f.num_elements; ++i) {
    out.values.push_back(static_cast<int32_t>(LoadBe32(goat + kGoatHeaderLen + 4 * i)));
  }
  return out;
}

class GoatTest : public ::testing::Test {
 protected:
  GoatTest() : h_(Config()) {}
  static SwitchConfig Config() {
    SwitchConfig config;
    config.num_ports = 6;
    config.program = "goat";
    config.program_options.Set("elements", std::to_string(kN));
    config.program_options.Set("slots", "64");
    return config;
  }
  void SetUp() override {
    ASSERT_TRUE(h_.ok()) << h_.error();
    h_.MustCmd("table_add dmac forward 02:00:00:00:00:10 => 4");
    // This switch is node 1: sub-model 3 has slots 10..13 here, fan-in 2; sub-model 4 is
    // shared ATP-style in slots 20..21 with fan-in 3. Node 2 sits behind port 5.
    h_.MustCmd("table_add goat_node aggregate 1 1 3 => 10 4 2");
    h_.MustCmd("table_add goat_node share 1 65535 4 => 20 2 3");
    h_.MustCmd("table_add goat_route forward 2 => 5");
  }
  void Send(const Fragment& p, PortId port = 0) { h_.Send(port, p.Build()); }
  GoatProgram& Goat() { return static_cast<GoatProgram&>(h_.sw().program()); }

  SwitchHarness h_;
};

TEST_F(GoatTest, AggregatesAtItsNodeIdAndSendsTheSumToThePsReaddressed) {
  Send(Grad(0, 1, 3, 2, 7, 5), 0);
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Cell(h_, "goat_id", 12, 0), GoatSlotKey(kJob, 3, 2));
  EXPECT_EQ(Cell(h_, "goat_id", 12, 1), 8u);  // round + 1
  Send(Grad(2, 1, 3, 2, 7, -9), 2);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  Out r = Decode(out[0]);
  EXPECT_EQ(r.port, kPs);
  EXPECT_EQ(r.values, Fill(-4));
  EXPECT_EQ(r.f.node_id, kGoatNodePs);
  EXPECT_EQ(r.f.bitmap, 0x5u);
  EXPECT_EQ(r.f.count, 2);
  EXPECT_TRUE(r.f.Has(kGoatFlagAggregate));
  EXPECT_EQ(Goat().counters().claimed, 1u);
  EXPECT_EQ(Goat().counters().aggregated, 1u);
  EXPECT_EQ(Goat().counters().completed, 1u);
  ExpectConservation(h_);
}

TEST_F(GoatTest, FragmentOfAnotherNodeIsRoutedByNodeIdUnchanged) {
  const std::vector<uint8_t> frame = Grad(1, 2, 3, 0, 1, 4).Build();
  h_.Send(1, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kNeighbour);
  EXPECT_EQ(out[0].bytes, frame);
  EXPECT_EQ(Goat().counters().routed, 1u);
  EXPECT_EQ(Goat().counters().claimed, 0u);
}

TEST_F(GoatTest, UnknownNodeIdIsForwardedToThePsNotAggregated) {
  const std::vector<uint8_t> frame = Grad(1, 9, 3, 0, 1, 4).Build();
  h_.Send(1, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPs);
  EXPECT_EQ(out[0].bytes, frame);
  EXPECT_EQ(Goat().counters().route_miss, 1u);
  EXPECT_EQ(Goat().counters().claimed, 0u);
}

TEST_F(GoatTest, DuplicateWorkerInARoundIsDropped) {
  Send(Grad(0, 1, 3, 0, 1, 1));
  Send(Grad(0, 1, 3, 0, 1, 1));
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Goat().counters().duplicates, 1u);
  EXPECT_EQ(h_.sw().Drops(GoatDrop::kDuplicate), 1u);
}

TEST_F(GoatTest, RetransmissionFlushesThePartialSumToThePs) {
  Send(Grad(0, 1, 3, 1, 4, 6));
  EXPECT_TRUE(h_.Drain().empty());
  // Worker 1's first copy was lost; its retransmission flushes the slot with its values added.
  Send(Grad(1, 1, 3, 1, 4, 10, kGoatFlagResend), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  Out r = Decode(out[0]);
  EXPECT_EQ(r.port, kPs);
  EXPECT_EQ(r.values, Fill(16));
  EXPECT_EQ(r.f.bitmap, 0x3u);
  EXPECT_TRUE(r.f.Has(kGoatFlagAggregate));
  EXPECT_EQ(Goat().counters().flushed, 1u);
  // Worker 0 retransmits too (its result was slow): the slot is done, so it goes on alone.
  Send(Grad(0, 1, 3, 1, 4, 6, kGoatFlagResend));
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(6));
  EXPECT_EQ(r.f.bitmap, 0x1u);
  EXPECT_EQ(r.f.node_id, kGoatNodePs);
  EXPECT_FALSE(r.f.Has(kGoatFlagAggregate));
  EXPECT_EQ(Goat().counters().resend_direct, 1u);
  ExpectConservation(h_);
}

TEST_F(GoatTest, RetransmissionWhoseWorkerIsInTheSlotFlushesTheSlotsSum) {
  Send(Grad(0, 1, 3, 1, 4, 6));
  Send(Grad(0, 1, 3, 1, 4, 6, kGoatFlagResend));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  Out r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(6));  // not added twice
  EXPECT_EQ(r.f.bitmap, 0x1u);
  EXPECT_TRUE(r.f.Has(kGoatFlagAggregate));
}

TEST_F(GoatTest, NewerRoundReclaimsTheSlotAndAnOlderRoundGoesToThePs) {
  Send(Grad(0, 1, 3, 0, 1, 1));
  Send(Grad(1, 1, 3, 0, 2, 2), 1);  // round 2 evicts round 1's unfinished slot
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Goat().counters().evicted, 1u);
  Send(Grad(2, 1, 3, 0, 1, 3), 2);  // a straggler of round 1
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  Out r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(3));
  EXPECT_EQ(r.f.node_id, kGoatNodePs);
  EXPECT_EQ(Goat().counters().late, 1u);
  Send(Grad(3, 1, 3, 0, 2, 4), 3);  // round 2 completes with workers 1 and 3
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).values, Fill(6));
  EXPECT_EQ(Decode(out[0]).f.bitmap, 0xAu);
}

TEST_F(GoatTest, LateWorkerAfterCompletionGoesToThePsAlone) {
  Send(Grad(0, 1, 3, 0, 1, 1));
  Send(Grad(1, 1, 3, 0, 1, 2), 1);
  ASSERT_EQ(h_.Drain().size(), 1u);
  Send(Grad(2, 1, 3, 0, 1, 3), 2);  // fan-in 2 was K: worker 2 is the straggler
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).values, Fill(3));
  EXPECT_EQ(Decode(out[0]).f.bitmap, 0x4u);
  EXPECT_EQ(Goat().counters().late, 1u);
}

TEST_F(GoatTest, FragmentPastTheSubmodelsSlotsGoesToThePs) {
  Send(Grad(0, 1, 3, 4, 1, 1));  // sub-model 3 has 4 slots here
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).f.node_id, kGoatNodePs);
  EXPECT_EQ(Goat().counters().out_of_range, 1u);
}

TEST_F(GoatTest, EntriesThatCannotAggregateSendFragmentsToThePs) {
  h_.MustCmd("table_add goat_node aggregate 1 1 5 => 62 4 2");  // slots 62..65 of 64
  h_.MustCmd("table_add goat_node aggregate 1 1 6 => 0 4 65");  // more workers than a bitmap
  h_.MustCmd("table_add goat_node aggregate 1 1 7 => 0 4 0");   // every worker here is late
  for (uint16_t g : {5, 6, 7}) Send(Grad(0, 1, g, 0, 1, 1));
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 3u);
  for (const SentFrame& f : out) {
    EXPECT_EQ(f.port, kPs);
    EXPECT_EQ(Decode(f).f.node_id, kGoatNodePs);
  }
  EXPECT_EQ(Goat().counters().out_of_range, 3u);
  EXPECT_EQ(Goat().counters().claimed, 0u);
}

TEST_F(GoatTest, SharedSlotIsFirstComeFirstServedAndHeldUntilTheResult) {
  // Fragments 0 and 2 of sub-model 4 share slot 20 (2 slots).
  Send(Grad(0, kGoatNodeAny, 4, 0, 1, 1));
  Send(Grad(0, kGoatNodeAny, 4, 2, 1, 5));  // collision: forwarded unchanged
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  Out r = Decode(out[0]);
  EXPECT_EQ(r.f.node_id, kGoatNodeAny);
  EXPECT_EQ(r.f.fragment, 2u);
  EXPECT_FALSE(r.f.Has(kGoatFlagAggregate));
  EXPECT_EQ(Goat().counters().collisions, 1u);
  // A partial aggregate of two workers and one more worker complete the fan-in of 3.
  Fragment partial = Grad(1, kGoatNodeAny, 4, 0, 1, 10);
  partial.f.bitmap = 0x6;
  partial.f.count = 2;
  Send(partial, kNeighbour);
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  r = Decode(out[0]);
  EXPECT_EQ(r.values, Fill(11));
  EXPECT_EQ(r.f.bitmap, 0x7u);
  EXPECT_EQ(r.f.node_id, kGoatNodeAny);  // a later switch may aggregate it further
  // Still held: fragment 2 collides again.
  Send(Grad(1, kGoatNodeAny, 4, 2, 1, 5), 1);
  EXPECT_EQ(h_.Drain().size(), 1u);
  EXPECT_EQ(Goat().counters().collisions, 2u);
  // The PS's result passes back and frees the slot.
  Fragment result = Grad(0, kGoatNodeAny, 4, 0, 1, 11);
  result.f.type = GoatType::kResult;
  result.f.bitmap = 0x7;
  result.f.count = 3;
  Send(result, kPs);
  h_.Drain();
  EXPECT_EQ(Goat().counters().released, 1u);
  EXPECT_EQ(Cell(h_, "goat_id", 20, 0), 0u);
  Send(Grad(3, kGoatNodeAny, 4, 2, 1, 5), 3);
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(Goat().counters().claimed, 2u);
  ExpectConservation(h_);
}

TEST_F(GoatTest, SumLeavingInt32IsFlaggedOverflow) {
  Send(Grad(0, 1, 3, 0, 1, 0x7FFFFFF0));
  Send(Grad(1, 1, 3, 0, 1, 0x100), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(Decode(out[0]).f.Has(kGoatFlagOverflow));
  EXPECT_EQ(Goat().counters().overflow, 1u);
}

TEST_F(GoatTest, MalformedHeadersAreDroppedWithNamedReasons) {
  Fragment bad_elements = Grad(0, 1, 3, 0, 1, 1);
  bad_elements.elements = kN + 1;
  Send(bad_elements);
  Fragment bad_count = Grad(0, 1, 3, 0, 1, 1);
  bad_count.f.count = 2;
  Send(bad_count);
  Fragment no_bits = Grad(0, 1, 3, 0, 1, 1);
  no_bits.f.bitmap = 0;
  no_bits.f.count = 0;
  Send(no_bits);
  std::vector<uint8_t> bad_version = Grad(0, 1, 3, 0, 1, 1).Build();
  bad_version[kGoatHeaderOffset] = 0x20;
  h_.Send(0, bad_version);
  std::vector<uint8_t> truncated = Grad(0, 1, 3, 0, 1, 1).Build();
  truncated.resize(kGoatHeaderOffset + kGoatHeaderLen + 4);
  h_.Send(0, truncated);
  EXPECT_TRUE(h_.Drain().empty());
  EXPECT_EQ(h_.sw().Drops(GoatDrop::kBadElements), 1u);
  EXPECT_EQ(h_.sw().Drops(GoatDrop::kInconsistent), 2u);
  EXPECT_EQ(h_.sw().Drops(GoatDrop::kBadVersion), 1u);
  EXPECT_GE(h_.sw().TotalDrops(), 5u);
  EXPECT_EQ(Goat().counters().claimed, 0u);
  ExpectConservation(h_);
}

TEST_F(GoatTest, FirstPieceOfAFragmentedDatagramIsForwardedUntouched) {
  std::vector<uint8_t> frame = Grad(0, 1, 3, 0, 1, 5).Build();
  StoreBe16(frame.data() + 14 + 6, kIpv4FlagMf);  // MF, offset 0
  StoreBe16(frame.data() + 14 + 10, 0);
  StoreBe16(frame.data() + 14 + 10, Ipv4HeaderChecksum(frame.data() + 14, 20));
  h_.Send(0, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPs);
  EXPECT_EQ(out[0].bytes, frame);
  EXPECT_EQ(Goat().counters().fragments_forwarded, 1u);
  EXPECT_EQ(Goat().counters().claimed, 0u);
}

TEST_F(GoatTest, NonGoatTrafficIsForwardedByL2l3) {
  const std::vector<uint8_t> frame =
      FrameBuilder()
          .Eth(*ParseMac("02:00:00:00:00:10"), *ParseMac("02:00:00:00:00:01"))
          .Ipv4(0x0A000001, 0x0A000010)
          .Udp(1, 2)
          .Payload(std::vector<uint8_t>(20, 7))
          .Build();
  h_.Send(0, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPs);
}

TEST_F(GoatTest, StatsCommandReportsCountersAndSlots) {
  Send(Grad(0, 1, 3, 0, 1, 1));
  h_.Drain();
  Result<std::string> stats = h_.Cmd("goat_stats");
  ASSERT_TRUE(stats.ok()) << stats.message();
  EXPECT_NE(stats->find("\"claimed\": 1"), std::string::npos) << *stats;
  EXPECT_NE(stats->find("\"slots_in_use\": 1"), std::string::npos) << *stats;
  EXPECT_FALSE(h_.Cmd("goat_stats bogus").ok());
  ASSERT_TRUE(h_.Cmd("goat_stats reset").ok());
  EXPECT_EQ(Goat().counters().claimed, 0u);
}

}  // namespace
}  // namespace swemu
