// The atp program in whole exchanges: reductions, two levels, reuse, retransmissions, collisions
// between jobs, float and forward-only traffic, ECN from the queue.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pipeline/wire/checksum.h"
#include "tests/pipeline/programs/atp_test_util.h"

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT(build/namespaces)

class AtpScenarioTest : public AtpRackTest {
 protected:
  using AtpRackTest::AtpRackTest;
};

class AtpDefaultsTest : public AtpScenarioTest {
 protected:
  AtpDefaultsTest() : AtpScenarioTest(kAtpDefaultElements, 16384) {}
};

TEST_F(AtpDefaultsTest, FourWorkersReduceSeveralSeqsAndGetTheParametersBack) {
  for (uint32_t seq = 0; seq < 3; ++seq) {
    for (uint8_t w = 0; w < 4; ++w) {
      std::vector<int32_t> v(n_);
      for (uint16_t i = 0; i < n_; ++i) v[i] = static_cast<int32_t>(seq * 1000 + w * 10 + i) - 50;
      Send(Gradient(kJob, seq, w, 4, 0, v), w);
    }
  }
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 3u);
  for (const SentFrame& f : out) {
    AtpOut r = Decode(f);
    EXPECT_EQ(r.port, kPsPort);
    EXPECT_EQ(r.f.bitmap, 0xFu);
    for (uint16_t i = 0; i < n_; ++i) {
      EXPECT_EQ(r.values[i], static_cast<int32_t>(4 * (r.f.seq * 1000 + i) + 60 - 200)) << i;
    }
    // The rewritten payload carries a valid UDP checksum.
    EXPECT_TRUE(UdpChecksumOk(f.bytes.data() + 14, f.bytes.data() + 34, f.bytes.size() - 34));
  }
  EXPECT_EQ(Atp(h_).AggregatorsInUse(), 3u);
  Result<std::string> json = h_.Cmd("atp_stats");
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"completed\": 3"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"aggregators_in_use\": 3"), std::string::npos) << *json;
  for (uint32_t seq = 0; seq < 3; ++seq) Send(Param(kJob, seq, n_), kPsPort);
  EXPECT_EQ(h_.Drain().size(), 12u);
  EXPECT_EQ(Atp(h_).AggregatorsInUse(), 0u);
  Result<std::string> show = h_.Cmd("show atp");
  ASSERT_TRUE(show.ok());
  EXPECT_NE(show->find("0/16384 aggregators in use"), std::string::npos) << *show;
  EXPECT_NE(show->find("param_dealloc 3"), std::string::npos) << *show;
  ExpectConservation(h_);
}

// At the PS's switch one aggregator mixes a rack's complete aggregate (edge 1, fan_in1 = W) and
// the originals of the workers under this switch (edge 0, fan_in0 = W).
TEST_F(AtpScenarioTest, PsSwitchMixesARackAggregateWithLocalWorkers) {
  AtpPacket rack = Gradient(kJob, 4, 0, 2, 4, Fill(n_, 3), kAtpFlagEdge);
  rack.f.bitmap = 0x3;  // workers 0 and 1, aggregated by their rack switch
  Send(rack, 3);
  Send(Gradient(kJob, 4, 2, 4, 0, Fill(n_, 10)), 2);
  EXPECT_TRUE(h_.Drain().empty());
  Send(Gradient(kJob, 4, 3, 4, 0, Fill(n_, 100)), 3);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.f.bitmap, 0xFu);
  EXPECT_EQ(r.values, Fill(n_, 113));
  EXPECT_EQ(Cell(h_, "atp_count", Index(4)), 4u);
}

TEST_F(AtpScenarioTest, AnAggregatorIsReusedByALaterSeqAfterTheParameterPacket) {
  const uint32_t later = CollidingSeq(kJob, 2, kJob, aggs_);
  ASSERT_GT(later, 2u);
  for (uint8_t w = 0; w < 4; ++w) Send(Gradient(kJob, 2, w, 4, 0, Fill(n_, 1)), w);
  ASSERT_EQ(h_.Drain().size(), 1u);
  Send(Param(kJob, 2, n_), kPsPort);
  ASSERT_EQ(h_.Drain().size(), 4u);
  for (uint8_t w = 0; w < 4; ++w) Send(Gradient(kJob, later, w, 4, 0, Fill(n_, 5)), w);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  AtpOut r = Decode(out[0]);
  EXPECT_EQ(r.f.seq, later);
  EXPECT_EQ(r.values, Fill(n_, 20));
  EXPECT_FALSE(r.f.Has(kAtpFlagResend));
  EXPECT_EQ(Atp(h_).counters().claimed, 2u);
  EXPECT_EQ(Atp(h_).counters().collisions, 0u);
}

TEST_F(AtpScenarioTest, ALateRetransmissionOfAPreviousRoundNeverTouchesTheNewRound) {
  const uint32_t newer = CollidingSeq(kJob, 2, kJob, aggs_);
  for (uint8_t w = 0; w < 4; ++w) Send(Gradient(kJob, 2, w, 4, 0, Fill(n_, 1)), w);
  Send(Param(kJob, 2, n_), kPsPort);
  h_.Drain();
  // After the round: a retransmission finds the aggregator empty and goes to the PS as it is.
  Send(Gradient(kJob, 2, 1, 4, 0, Fill(n_, 1), kAtpFlagResend), 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).values, Fill(n_, 1));
  EXPECT_TRUE(AggregatorEmpty(h_, Index(2), n_));
  // A newer seq holds the aggregator: the late one is a collision, the newer one is intact.
  Send(Gradient(kJob, newer, 0, 4, 0, Fill(n_, 7)));
  Send(Gradient(kJob, 2, 3, 4, 0, Fill(n_, 1), kAtpFlagResend), 3);
  out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decode(out[0]).f.seq, 2u);
  EXPECT_EQ(Cell(h_, "atp_id", Index(2)), AtpAggregatorId(kJob, newer));
  EXPECT_EQ(Cell(h_, "atp_value", Index(2)), 7u);
  EXPECT_EQ(Atp(h_).counters().resend_forwarded, 1u);
  EXPECT_EQ(Atp(h_).counters().collisions, 1u);
}

TEST_F(AtpScenarioTest, TwoJobsCollidingOnOneAggregatorStayCorrect) {
  h_.MustCmd("table_add atp_job aggregate 2 => 1");
  const uint32_t seq2 = CollidingSeq(kJob, 0, 2, aggs_);
  Send(Gradient(kJob, 0, 0, 2, 0, Fill(n_, 1)));
  Send(Gradient(2, seq2, 2, 2, 0, Fill(n_, 50)), 2);  // collision: goes on as a resend
  Send(Gradient(2, seq2, 3, 2, 0, Fill(n_, 60)), 3);  // collision too
  Send(Gradient(kJob, 0, 1, 2, 0, Fill(n_, 2)), 1);   // completes job 1
  std::map<uint16_t, std::vector<AtpOut>> by_job;
  for (const SentFrame& f : h_.Drain()) {
    AtpOut r = Decode(f);
    by_job[r.f.job_id].push_back(r);
  }
  ASSERT_EQ(by_job[kJob].size(), 1u);
  EXPECT_EQ(by_job[kJob][0].values, Fill(n_, 3));
  ASSERT_EQ(by_job[2].size(), 2u);
  for (const AtpOut& r : by_job[2]) {
    EXPECT_TRUE(r.f.Has(kAtpFlagResend));
    EXPECT_EQ(r.values, Fill(n_, r.f.worker_id == 2 ? 50 : 60));
  }
  EXPECT_EQ(Atp(h_).counters().collisions, 2u);
}

TEST_F(AtpScenarioTest, FloatGradientsAreForwardedUntouchedWithoutAnAggregator) {
  AtpPacket p = Gradient(kJob, 3, 1, 4, 0, Fill(n_, 0x3F800000), kAtpFlagFloat);
  Send(p, 1);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPsPort);
  EXPECT_EQ(out[0].bytes, p.Build());
  EXPECT_TRUE(AggregatorEmpty(h_, Index(3), n_));
  EXPECT_EQ(Atp(h_).counters().forwarded_plain, 1u);
}

TEST_F(AtpScenarioTest, ForwardOnlyJobForwardsGradientsAndMulticastsParameters) {
  h_.MustCmd("table_add atp_job forward_only 3 => 1");
  std::vector<std::vector<uint8_t>> sent;
  for (uint8_t w = 0; w < 4; ++w) {
    sent.push_back(Gradient(3, 0, w, 4, 0, Fill(n_, w)).Build());
    h_.Send(w, sent.back());
  }
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 4u);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].port, kPsPort);
    EXPECT_EQ(out[i].bytes, sent[i]);
  }
  EXPECT_TRUE(AggregatorEmpty(h_, Index(0, 3), n_));
  EXPECT_EQ(Atp(h_).counters().forwarded_plain, 4u);
  Send(Param(3, 0, n_), kPsPort);
  EXPECT_EQ(h_.Drain().size(), 4u);
}

TEST_F(AtpScenarioTest, JobWithoutGroupSendsParametersByL2) {
  h_.MustCmd("table_add atp_job aggregate 4 => 0");
  AtpPacket p = Param(4, 0, n_);
  p.dst = WorkerMac(2);
  Send(p, kPsPort);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 2);
}

TEST_F(AtpScenarioTest, EgressSetsCeAndTheAtpEcnFlagFromTheQueueThreshold) {
  h_.MustCmd("set_port_rate 4 1G");
  const std::size_t len = AtpFrameLen(n_);
  h_.MustCmd("set_ecn_threshold 4 0 " + std::to_string(2 * len));
  for (uint32_t seq = 0; seq < 4; ++seq) {
    AtpPacket p = Gradient(kJob, seq, 0, 1, 0, Fill(n_, 1));  // fan-in 1: completes at once
    p.tos = 0x2;                                              // ECT(0)
    Send(p);
  }
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 4u);
  std::vector<bool> flag;
  std::vector<int> ecn;
  for (const SentFrame& f : out) {
    AtpOut r = Decode(f);
    flag.push_back(r.f.Has(kAtpFlagEcn));
    ecn.push_back(r.tos & 0x3);
    EXPECT_TRUE(UdpChecksumOk(f.bytes.data() + 14, f.bytes.data() + 34, f.bytes.size() - 34));
    EXPECT_TRUE(Ipv4HeaderChecksumOk(f.bytes.data() + 14, 20));
  }
  EXPECT_EQ(flag, (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(ecn, (std::vector<int>{2, 2, 3, 3}));
}

TEST_F(AtpScenarioTest, OtherTrafficIsForwardedByL2l3) {
  std::vector<uint8_t> frame = FrameBuilder()
                                   .Eth(WorkerMac(3), WorkerMac(0))
                                   .Ipv4(0x0A000001, 0x0A000003)
                                   .Udp(1234, 5678)
                                   .Payload(40)
                                   .Build();
  h_.Send(0, frame);
  std::vector<SentFrame> out = h_.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, 3);
  EXPECT_EQ(out[0].bytes, frame);
  EXPECT_EQ(Atp(h_).AggregatorsInUse(), 0u);
}

}  // namespace
}  // namespace swemu

namespace swemu {
namespace {

using namespace swemu::testing;  // NOLINT(build/namespaces)

// configs/atp_rack.cli sets up the rack the tests above build by hand.
TEST(AtpRackConfigTest, TheStartupScriptReducesAndMulticasts) {
  SwitchHarness h(AtpConfig(kAtpDefaultElements, 16384));
  ASSERT_TRUE(h.ok()) << h.error();
  Status script = h.sw().commands().RunScript(SWEMU_SOURCE_DIR "/configs/atp_rack.cli");
  ASSERT_TRUE(script.ok()) << script.message();
  for (uint8_t w = 0; w < 4; ++w) {
    h.Send(w, Gradient(kJob, 42, w, 4, 0, Fill(kAtpDefaultElements, 1 << w)).Build());
  }
  std::vector<SentFrame> out = h.Drain();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].port, kPsPort);
  EXPECT_EQ(Decode(out[0]).values, Fill(kAtpDefaultElements, 15));
  h.Send(kPsPort, Param(kJob, 42, kAtpDefaultElements).Build());
  std::set<PortId> ports;
  for (const SentFrame& f : h.Drain()) ports.insert(f.port);
  EXPECT_EQ(ports, (std::set<PortId>{0, 1, 2, 3}));
  ExpectConservation(h);
}

}  // namespace
}  // namespace swemu
