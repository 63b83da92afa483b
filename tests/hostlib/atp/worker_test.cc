// The worker state machine on virtual time, against a transport that records frames.
#include "hostlib/atp/worker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "pipeline/wire/ipv4.h"
#include "tests/hostlib/atp/atp_test_util.h"

namespace swemu {
namespace {

using atp_test::AtpFrame;
using atp_test::HeaderOf;
using atp_test::Job;
using atp_test::RecordingTransport;

class WorkerTest : public ::testing::Test {
 protected:
  // One lane unless a test asks for more; worker 0 of a 2-worker job.
  void Make(uint32_t packets, AtpWorkerOptions options = OneLane(), uint16_t elements = 64) {
    job_ = Job(1, 2, elements);
    worker_ = std::make_unique<AtpWorker>(job_, 0, &tx_, options);
    in_.resize(std::size_t{packets} * elements);
    for (std::size_t i = 0; i < in_.size(); ++i) in_[i] = 0.001f * static_cast<float>(i);
    out_.assign(in_.size(), -1.0f);
    worker_->Submit(&call_, in_.data(), out_.data(), in_.size());
  }
  // The timer tests are written against a 1 ms initial RTO and floor, and the RTO alone (the
  // tail loss probe has tests of its own).
  static AtpWorkerOptions OneLane() {
    AtpWorkerOptions o;
    o.lanes = 1;
    o.rto_ns = 1'000'000;
    o.min_rto_ns = 1'000'000;
    o.tail_probe = false;
    return o;
  }
  // The PS's answer for seq: every element = 2 * (seq + 1), optionally with the ECN flag.
  void Param(TimeNs now, uint32_t seq, bool ecn = false) {
    AtpFields f;
    f.flags = kAtpFlagParam | kAtpFlagFloat | (ecn ? kAtpFlagEcn : 0);
    f.seq = seq;
    f.bitmap = job_.full_bitmap;
    std::vector<double> values(job_.spec.elements, 2.0 * (seq + 1));
    std::vector<uint8_t> frame = AtpFrame(job_, f, values);
    worker_->OnParam(now, HeaderOf(frame), false);
  }
  std::vector<uint32_t> SentSeqs(std::size_t from = 0) const {
    std::vector<uint32_t> seqs;
    for (std::size_t i = from; i < tx_.frames.size(); ++i) seqs.push_back(tx_.Header(i).Seq());
    return seqs;
  }

  AtpJobConfig job_;
  RecordingTransport tx_;
  std::unique_ptr<AtpWorker> worker_;
  AllReduceJob call_;
  std::vector<float> in_, out_;
};

TEST_F(WorkerTest, SplitsTheTensorIntoScaledPacketsAndPadsTheLast) {
  job_ = Job(1, 2);
  worker_ = std::make_unique<AtpWorker>(job_, 1, &tx_, OneLane());
  std::vector<float> in(150, 0.5f), out(150);
  in[149] = -0.25f;
  worker_->Submit(&call_, in.data(), out.data(), in.size());
  worker_->Pump(0);
  ASSERT_EQ(tx_.frames.size(), 3u);
  EXPECT_EQ(call_.packets(), 3u);
  for (uint32_t k = 0; k < 3; ++k) {
    const AtpHeader& h = tx_.Header(k);
    EXPECT_EQ(tx_.frames[k].size(), AtpFrameLen(64));
    EXPECT_EQ(h.Seq(), k);
    EXPECT_EQ(h.JobId(), 1);
    EXPECT_EQ(h.worker_id, 1);
    EXPECT_EQ(h.Bitmap(), 2u);
    EXPECT_EQ(h.fan_in0, 2);
    EXPECT_EQ(h.fan_in1, 0);
    EXPECT_EQ(h.Flags(), 0);
  }
  const AtpHeader& last = tx_.Header(2);
  EXPECT_EQ(LoadAtpInt(last.Elements(), 0), 1 << 19);
  EXPECT_EQ(LoadAtpInt(last.Elements(), 21), -(1 << 18));  // element 149
  for (int i = 22; i < 64; ++i) EXPECT_EQ(LoadAtpInt(last.Elements(), i), 0);
  EXPECT_EQ(tx_.frames[0][14 + 1] & 3, kEcnEct0);  // ECN-capable
}

TEST_F(WorkerTest, APacketWithAnUnscalableElementGoesAsFloat) {
  job_ = Job(1, 2);
  worker_ = std::make_unique<AtpWorker>(job_, 0, &tx_, OneLane());
  std::vector<float> in(128, 1.0f), out(128);
  in[70] = 1e6f;
  worker_->Submit(&call_, in.data(), out.data(), in.size());
  worker_->Pump(0);
  ASSERT_EQ(tx_.frames.size(), 2u);
  EXPECT_FALSE(tx_.Header(0).Has(kAtpFlagFloat));
  EXPECT_TRUE(tx_.Header(1).Has(kAtpFlagFloat));
  EXPECT_EQ(LoadAtpFloat(tx_.Header(1).Elements(), 6), 1e6f);
  EXPECT_EQ(LoadAtpFloat(tx_.Header(1).Elements(), 0), 1.0f);
  EXPECT_EQ(worker_->stats().float_packets, 1u);
}

TEST_F(WorkerTest, WindowStartsAt50PacketsPerLane) {
  Make(300);
  worker_->Pump(0);
  EXPECT_EQ(tx_.frames.size(), 50u);
  worker_->Pump(10);  // nothing acknowledged: nothing more
  EXPECT_EQ(tx_.frames.size(), 50u);

  tx_.frames.clear();
  AtpWorkerOptions two;
  two.lanes = 2;
  two.chunk_packets = 100;
  Make(300, two);
  worker_->Pump(0);
  EXPECT_EQ(tx_.frames.size(), 100u);
}

TEST_F(WorkerTest, SlowStartGrowsOneMtuPerParamThenOneMtuPerWindow) {
  Make(2000);
  const uint64_t len = worker_->frame_len();
  worker_->Pump(0);
  Param(1000, 0);
  EXPECT_EQ(worker_->window_bytes(0), 50 * len + 1500);
  worker_->Pump(1000);
  // UNA moved to 1: positions 1 .. 1 + ceil(window / len) - 1 may be in flight.
  EXPECT_EQ(tx_.frames.size(), 1 + (50 * len + 1500 + len - 1) / len);

  // An ECN param halves and sets ssthresh; after that growth is one MTU per window.
  Param(2000, 1, /*ecn=*/true);
  const uint64_t halved = (50 * len + 1500) / 2;
  EXPECT_EQ(worker_->window_bytes(0), halved);
  EXPECT_EQ(worker_->ssthresh(0), halved);
  uint32_t seq = 2;
  while (worker_->window_bytes(0) == halved) {
    worker_->Pump(3000);
    Param(3000, seq++);
  }
  EXPECT_EQ(worker_->window_bytes(0), halved + 1500);
  EXPECT_EQ(seq - 2, (halved + len - 1) / len);  // a window's worth of bytes acknowledged
}

TEST_F(WorkerTest, EcnHalvesAtMostOncePerWindow) {
  Make(400);
  worker_->Pump(0);
  const uint64_t w0 = worker_->window_bytes(0);
  Param(100, 0, true);
  Param(101, 1, true);
  Param(102, 2, true);
  EXPECT_EQ(worker_->window_bytes(0), w0 / 2);
  EXPECT_EQ(worker_->stats().ecn_halvings, 1u);
  // Once every packet sent before the halving is acknowledged, ECN halves again.
  for (uint32_t s = 3; s < 50; ++s) Param(200, s);
  worker_->Pump(200);
  Param(300, 50, true);
  EXPECT_EQ(worker_->stats().ecn_halvings, 2u);
}

TEST_F(WorkerTest, ThreeOutOfOrderParamsRetransmitUna) {
  Make(100);
  worker_->Pump(0);
  tx_.frames.clear();
  Param(100, 1);
  Param(101, 2);
  EXPECT_TRUE(tx_.frames.empty());
  const uint64_t before = worker_->window_bytes(0);
  Param(102, 3);
  ASSERT_EQ(tx_.frames.size(), 1u);
  EXPECT_EQ(tx_.Header(0).Seq(), 0u);
  EXPECT_TRUE(tx_.Header(0).Has(kAtpFlagResend));
  EXPECT_EQ(tx_.Header(0).Bitmap(), 1u);
  EXPECT_FALSE(tx_.Header(0).Has(kAtpFlagEdge));
  EXPECT_LT(worker_->window_bytes(0), before);
  EXPECT_EQ(worker_->stats().fast_retransmits, 1u);
  EXPECT_EQ(worker_->stats().loss_halvings, 1u);
  // UNA's parameter packet then advances UNA past everything acknowledged.
  Param(103, 0);
  worker_->Pump(103);
  EXPECT_EQ(worker_->stats().retransmissions, 1u);
}

TEST_F(WorkerTest, TimeoutResendsALostTailWithBackoffAndResetsOnProgress) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;  // the estimated RTO never drops below the initial 1 ms here
  Make(3, options);
  worker_->Pump(0);
  EXPECT_EQ(worker_->NextTimer(), 1'000'000u);
  Param(500, 0);
  Param(600, 1);
  EXPECT_EQ(worker_->NextTimer(), 600u + 1'000'000u);  // progress resets the timer
  tx_.frames.clear();
  worker_->OnTimer(1'000'600);
  ASSERT_EQ(SentSeqs(), std::vector<uint32_t>{2});
  EXPECT_TRUE(tx_.Header(0).Has(kAtpFlagResend));
  EXPECT_EQ(worker_->NextTimer(), 1'000'600u + 2'000'000u);
  worker_->OnTimer(3'000'600);
  EXPECT_EQ(worker_->NextTimer(), 3'000'600u + 4'000'000u);
  EXPECT_EQ(worker_->stats().timeouts, 2u);
  Param(3'500'000, 2);
  EXPECT_TRUE(call_.done());
  EXPECT_EQ(worker_->NextTimer(), kNever);
}

TEST_F(WorkerTest, ParamsFillTheOutputAndSeqsContinueAcrossCalls) {
  Make(2, OneLane(), 64);
  worker_->Pump(0);
  Param(10, 1);
  EXPECT_FALSE(call_.done());
  Param(20, 1);
  EXPECT_EQ(worker_->stats().duplicate_params, 1u);
  Param(30, 0);
  EXPECT_TRUE(call_.done());
  EXPECT_EQ(call_.finish_ns(), 30u);
  EXPECT_EQ(out_[0], 2.0f);
  EXPECT_EQ(out_[64], 4.0f);
  AllReduceJob second;
  std::vector<float> out2(10);
  worker_->Submit(&second, in_.data(), out2.data(), 10);
  tx_.frames.clear();
  worker_->Pump(40);
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{2});
  Param(50, 0);  // an old seq
  EXPECT_EQ(worker_->stats().stale_params, 1u);
  Param(60, 2);
  EXPECT_TRUE(second.done());
  EXPECT_EQ(out2[9], 6.0f);
}

// Chunks go to the lane with the fewest outstanding bytes; each lane has its own window.
TEST_F(WorkerTest, LeastLoadedSchedulerDealsChunksToLanes) {
  AtpWorkerOptions o;
  o.lanes = 3;
  o.chunk_packets = 4;
  o.initial_window_packets = 2;
  Make(24, o);
  worker_->Pump(0);
  // Lanes own chunks {0,3}, {1,4}, {2,5} and send their first two packets each.
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{0, 1, 4, 5, 8, 9}));
  Param(10, 4);  // lane 1 advances alone
  tx_.frames.clear();
  worker_->Pump(10);
  // Window 2 x 314 + 1500 B = 7 packets from UNA (position 1): positions 2..7.
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{6, 7, 16, 17, 18, 19}));
}

TEST_F(WorkerTest, RtoFollowsTheMeasuredRttAndIgnoresRetransmittedSeqs) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 10'000;
  Make(6, options);
  worker_->Pump(0);
  EXPECT_EQ(worker_->NextTimer(), 1'000'000u);  // no sample yet: the initial RTO
  Param(40'000, 0);                             // RTT 40 us: srtt 40, rttvar 20 -> RTO 120 us
  EXPECT_EQ(worker_->stats().rtt_samples, 1u);
  EXPECT_EQ(worker_->stats().srtt_ns, 40'000u);
  EXPECT_EQ(worker_->NextTimer(), 40'000u + 120'000u);
  // A timeout resends UNA (seq 1); its parameter packet then gives no RTT sample (Karn).
  worker_->OnTimer(160'000);
  Param(170'000, 1);
  EXPECT_EQ(worker_->stats().rtt_samples, 1u);
}

TEST_F(WorkerTest, AFirstTimeoutResendsOnlyUnaAndTheHolesBelowTheHighestAck) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;
  Make(6, options);
  worker_->Pump(0);  // seqs 0..5 in flight
  Param(100, 3);     // 0, 1, 2 are holes below the highest acknowledged position; 4, 5 unknown
  tx_.frames.clear();
  worker_->OnTimer(1'000'000);
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{0, 1, 2}));
  tx_.frames.clear();
  worker_->OnTimer(3'000'000);  // nothing moved: a second timeout resends the whole window
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(worker_->stats().timeouts, 2u);
}

TEST_F(WorkerTest, UnaIsFastRetransmittedOncePerUna) {
  Make(100);
  worker_->Pump(0);
  for (uint32_t seq = 1; seq <= 9; ++seq) Param(100 * seq, seq);  // UNA (seq 0) lost
  EXPECT_EQ(worker_->stats().fast_retransmits, 1u);
  EXPECT_EQ(worker_->stats().retransmissions, 1u);
  Param(1000, 0);  // UNA moves to 10; the next loss is fast-retransmitted again
  for (uint32_t seq = 11; seq <= 13; ++seq) Param(1000 + seq, seq);
  EXPECT_EQ(worker_->stats().fast_retransmits, 2u);
}

// Eifel (RFC 3522) by timing: UNA's parameter packet comes sooner after the fast retransmit
// than any round trip took, so it answers the original: the cut is undone.
TEST_F(WorkerTest, ASpuriousFastRetransmitIsUndoneByTiming) {
  Make(100);
  worker_->Pump(0);
  Param(40'000, 1);  // RTT 40 us: the lane's minimum
  Param(40'100, 2);
  Param(40'200, 3);
  Param(40'300, 4);  // third out of order: UNA (seq 0) resent, window halved
  ASSERT_EQ(worker_->stats().fast_retransmits, 1u);
  const uint64_t halved = worker_->window_bytes(0);
  Param(45'000, 0);  // 4.7 us after the resend: the original's answer
  EXPECT_EQ(worker_->stats().spurious_fast, 1u);
  EXPECT_GT(worker_->window_bytes(0), halved);
}

// DSACK-style (RFC 3708): a second parameter packet for a packet sent twice means the original
// got through: the timeout's cut is undone and the lane's RTO floor rises to twice the delay
// the packet showed, so the same delay does not time out again.
TEST_F(WorkerTest, ASpuriousTimeoutIsUndoneAndRaisesTheRtoFloor) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;
  Make(6, options);
  worker_->Pump(0);
  const uint64_t w0 = worker_->window_bytes(0);
  worker_->OnTimer(1'000'000);  // seq 0 resent; window halved
  ASSERT_EQ(worker_->stats().timeouts, 1u);
  EXPECT_EQ(worker_->window_bytes(0), w0 / 2);
  Param(1'500'000, 0);  // the first answer: 1.5 ms after the original (no RTT sample yet)
  EXPECT_EQ(worker_->stats().spurious_timeouts, 0u);
  Param(1'600'000, 0);  // the second: the original was only late
  EXPECT_EQ(worker_->stats().spurious_timeouts, 1u);
  EXPECT_GE(worker_->window_bytes(0), w0);
  // Seq 1 is UNA now; its timer runs for at least the new floor, 2 x 1.5 ms.
  Param(1'700'000, 1);
  EXPECT_GE(worker_->NextTimer(), 1'700'000u + 3'000'000u);
}

// A retransmission that was needed (its answer came a full round trip after it, and once) is
// not undone: the cut stands.
TEST_F(WorkerTest, ANeededRetransmissionKeepsItsCut) {
  Make(100);
  worker_->Pump(0);
  for (uint32_t seq = 1; seq <= 3; ++seq) Param(40'000 + seq, seq);
  const uint64_t halved = worker_->window_bytes(0);
  Param(200'000, 0);  // 160 us after the resend: the resend's answer
  EXPECT_EQ(worker_->stats().spurious_fast, 0u);
  EXPECT_LE(worker_->window_bytes(0), halved + 1500);
}

// The defaults: no timeout before 4 ms, with or without an RTT sample (at 1 ms the demo's
// first pass timed out without a loss while slow start grew the queues).
TEST_F(WorkerTest, TheDefaultRtoFloorIsFourMilliseconds) {
  AtpWorkerOptions options;
  options.lanes = 1;
  options.tail_probe = false;  // the RTO alone
  Make(6, options);
  worker_->Pump(0);
  EXPECT_EQ(worker_->NextTimer(), 4'000'000u);
  Param(50'000, 0);  // RTT 50 us: srtt + 4 rttvar is far below the floor
  EXPECT_EQ(worker_->NextTimer(), 50'000u + 4'000'000u);
}

TEST_F(WorkerTest, EveryTimeoutHalvesTheWindow) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;
  Make(100, options);
  worker_->Pump(0);
  const uint64_t w0 = worker_->window_bytes(0);
  worker_->OnTimer(1'000'000);
  worker_->OnTimer(3'000'000);
  worker_->OnTimer(7'000'000);
  EXPECT_EQ(worker_->stats().timeouts, 3u);
  EXPECT_EQ(worker_->stats().loss_halvings, 3u);
  EXPECT_EQ(worker_->window_bytes(0), w0 / 8);
}

// A dead worker's UNA never completes: the live workers' repeated timeouts must still resend
// every packet in flight (beyond the shrunken window too), which frees the switch aggregators.
TEST_F(WorkerTest, RepeatedTimeoutsResendEveryPacketInFlight) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;
  Make(100, options);
  worker_->Pump(0);  // seqs 0..49 in flight
  tx_.frames.clear();
  worker_->OnTimer(1'000'000);
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{0});
  tx_.frames.clear();
  worker_->OnTimer(3'000'000);  // the window is now 12 packets; all 50 are resent
  std::vector<uint32_t> all(50);
  std::iota(all.begin(), all.end(), 0u);
  EXPECT_EQ(SentSeqs(), all);
  EXPECT_LT(worker_->window_bytes(0), 50 * worker_->frame_len());
}

// A lost tail of four: the first timeout resends UNA alone (nothing later was acknowledged);
// its ACK moves UNA but is the ACK of a retransmission, so the next timeout is the second of
// the streak and resends the three still missing at once, not one per timeout.
// Section 5.3's rule for every packet, not only UNA: two holes in one window are both resent as
// soon as three later packets are answered, each once, with one halving for the window.
TEST_F(WorkerTest, EveryHoleWithThreeLaterAnswersIsResentOnce) {
  Make(100);
  worker_->Pump(0);
  tx_.frames.clear();
  for (uint32_t seq : {1u, 2u, 3u}) Param(100 + seq, seq);  // 0 lost
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{0});
  for (uint32_t seq : {5u, 6u}) Param(100 + seq, seq);  // 4 lost: two answers after it so far
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{0});
  Param(107, 7);
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{0, 4}));
  for (uint32_t seq = 8; seq < 20; ++seq) Param(100 + seq, seq);  // no hole is resent twice
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(worker_->stats().fast_retransmits, 2u);
  EXPECT_EQ(worker_->stats().loss_halvings, 1u);
  EXPECT_EQ(worker_->stats().timeouts, 0u);
}

// A lost last packet has no three later ones to reveal it: once every packet is sent and none
// is answered for two smoothed RTTs, UNA is resent, long before the RTO; a lost probe is
// followed by others at doubling waits.
TEST_F(WorkerTest, ALostLastPacketIsProbedAfterTwoRttsThenWithBackoffBeforeTheRto) {
  AtpWorkerOptions options = OneLane();
  options.tail_probe = true;
  Make(4, options);
  worker_->Pump(0);
  Param(10'000, 0);  // srtt 10 us
  Param(10'100, 1);
  Param(10'200, 2);  // 3 is lost
  tx_.frames.clear();
  EXPECT_LT(worker_->NextTimer(), 10'200u + 100'000u);
  const TimeNs first_probe = worker_->NextTimer();
  worker_->OnTimer(first_probe);
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{3});
  EXPECT_EQ(worker_->stats().tail_probes, 1u);
  EXPECT_EQ(worker_->stats().timeouts, 0u);
  // The probe was lost too: another follows after twice the wait each time (one packet each),
  // until the RTO comes first.
  std::vector<TimeNs> probes_at = {first_probe};
  while (worker_->stats().timeouts == 0) {
    const TimeNs at = worker_->NextTimer();
    const uint64_t probes = worker_->stats().tail_probes;
    worker_->OnTimer(at);
    worker_->Pump(at);
    if (worker_->stats().tail_probes > probes) probes_at.push_back(at);
  }
  ASSERT_GE(probes_at.size(), 5u);  // 20 us, doubled, below the 1 ms RTO
  EXPECT_LE(probes_at.size(), 7u);
  for (std::size_t i = 2; i < probes_at.size(); ++i) {
    EXPECT_EQ(probes_at[i] - probes_at[i - 1], 2 * (probes_at[i - 1] - probes_at[i - 2])) << i;
  }
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>(probes_at.size() + 1, 3));  // + the RTO's resend
  Param(worker_->NextTimer() - 1, 3);
  EXPECT_TRUE(call_.done());
}

// Many unanswered packets at the end are a burst loss or a slow peer: the RTO judges them, and
// no probe walks them one round trip at a time.
TEST_F(WorkerTest, ManyUnansweredPacketsAreNotProbed) {
  AtpWorkerOptions options = OneLane();
  options.tail_probe = true;
  Make(20, options);
  worker_->Pump(0);
  Param(10'000, 0);  // 1..19 unanswered
  EXPECT_GE(worker_->NextTimer(), 1'000'000u);
}

TEST_F(WorkerTest, ALostTailIsRecoveredInTwoTimeoutsNotOnePerPacket) {
  AtpWorkerOptions options = OneLane();
  options.min_rto_ns = 1'000'000;
  Make(6, options);
  worker_->Pump(0);  // seqs 0..5 in flight; 2..5 are lost
  Param(100, 0);
  Param(200, 1);
  tx_.frames.clear();
  worker_->OnTimer(worker_->NextTimer());
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{2});
  Param(worker_->NextTimer() - 1'000, 2);  // the resent seq 2 gets through
  tx_.frames.clear();
  worker_->OnTimer(worker_->NextTimer());
  EXPECT_EQ(SentSeqs(), (std::vector<uint32_t>{3, 4, 5}));
  EXPECT_EQ(worker_->stats().timeouts, 2u);
}

// The window counts packets in flight (RFC 6675's pipe): answers beyond a lost UNA let new
// packets go while the hole is recovered, instead of stalling the lane at UNA + window.
TEST_F(WorkerTest, AnswersBeyondAHoleKeepNewPacketsGoing) {
  AtpWorkerOptions options = OneLane();
  options.congestion_control = false;  // the window stays at 50 through the loss
  Make(100, options);
  worker_->Pump(0);  // 0..49; 0 is lost
  tx_.frames.clear();
  for (uint32_t seq = 1; seq <= 10; ++seq) Param(100 + seq, seq);
  worker_->Pump(200);
  std::vector<uint32_t> expected = {0};  // the fast retransmit after 3 answers
  for (uint32_t seq = 50; seq < 60; ++seq) expected.push_back(seq);
  EXPECT_EQ(SentSeqs(), expected);
}

// No packet goes more than kSpreadWindows windows past UNA, however many are answered.
TEST_F(WorkerTest, ALaneSendsAtMostFourWindowsPastUna) {
  AtpWorkerOptions options = OneLane();
  options.congestion_control = false;
  Make(400, options);
  worker_->Pump(0);
  for (uint32_t round = 0; round < 6; ++round) {
    for (uint32_t seq = 1 + 50 * round; seq < 51 + 50 * round; ++seq) Param(100, seq);
    worker_->Pump(100);
  }
  const std::vector<uint32_t> sent = SentSeqs();
  EXPECT_EQ(*std::max_element(sent.begin(), sent.end()), AtpWorker::kSpreadWindows * 50 - 1);
}

// A resent hole lost again is found as the first loss was: three packets sent after the
// resend are answered before it.
TEST_F(WorkerTest, AResentHoleLostAgainIsResentAfterThreeLaterAnswers) {
  Make(100);
  worker_->Pump(0);
  for (uint32_t seq : {1u, 2u, 3u}) Param(100 + seq, seq);  // resends 0
  worker_->Pump(110);                                       // 50, 51, 52
  tx_.frames.clear();
  for (uint32_t seq = 4; seq < 50; ++seq) Param(120, seq);  // sent before the resend: no sign
  worker_->Pump(120);
  const std::vector<uint32_t> before = SentSeqs();
  EXPECT_EQ(std::count(before.begin(), before.end(), 0u), 0);
  const std::size_t sent = tx_.frames.size();
  Param(130, 50);
  Param(131, 51);
  Param(132, 52);  // the resend of 0 is lost too
  const std::vector<uint32_t> after = SentSeqs(sent);
  EXPECT_EQ(std::count(after.begin(), after.end(), 0u), 1);
  EXPECT_EQ(worker_->stats().fast_retransmits, 2u);
  EXPECT_EQ(worker_->stats().timeouts, 0u);
  Param(140, 0);
  EXPECT_EQ(worker_->stats().retransmissions, 2u);
}

// A hole resent at the end of a call has nothing sent after it to reveal a second loss: the
// tail probe covers it (one packet unanswered, however far UNA lags behind the last sent).
TEST_F(WorkerTest, AHoleResentAtTheTailIsProbed) {
  AtpWorkerOptions options = OneLane();
  options.tail_probe = true;
  Make(12, options);
  worker_->Pump(0);
  for (uint32_t seq = 0; seq < 12; ++seq) {
    if (seq != 3) Param(10'000 + 100 * seq, seq);  // 3 lost; resent after 4, 5, 6
  }
  tx_.frames.clear();
  EXPECT_LT(worker_->NextTimer(), 20'000u + 100'000u);
  worker_->OnTimer(worker_->NextTimer());
  EXPECT_EQ(SentSeqs(), std::vector<uint32_t>{3});
  EXPECT_EQ(worker_->stats().tail_probes, 1u);
  EXPECT_EQ(worker_->stats().timeouts, 0u);
}

// Figure 7a's setting: congestion control off keeps the window through ECN and losses.
TEST_F(WorkerTest, WithoutCongestionControlTheWindowStays) {
  AtpWorkerOptions options = OneLane();
  options.congestion_control = false;
  Make(400, options);
  worker_->Pump(0);
  const uint64_t w0 = worker_->window_bytes(0);
  Param(100, 1, true);
  Param(101, 2, true);
  Param(102, 3);  // 0 lost: a fast retransmit
  for (uint32_t seq = 4; seq < 40; ++seq) Param(103, seq);
  worker_->OnTimer(worker_->NextTimer());  // and a timeout
  EXPECT_EQ(worker_->stats().fast_retransmits, 1u);
  EXPECT_EQ(worker_->stats().timeouts, 1u);
  EXPECT_EQ(worker_->window_bytes(0), w0);
  EXPECT_EQ(worker_->stats().ecn_halvings + worker_->stats().loss_halvings, 0u);
}

// The timeout-only baseline (SwitchML's recovery): out-of-order answers resend nothing.
TEST_F(WorkerTest, WithoutFastRetransmitOnlyTheTimeoutResends) {
  AtpWorkerOptions options = OneLane();
  options.fast_retransmit = false;
  Make(100, options);
  worker_->Pump(0);
  tx_.frames.clear();
  for (uint32_t seq = 1; seq < 10; ++seq) Param(100 + seq, seq);
  worker_->Pump(200);
  for (uint32_t seq : SentSeqs()) EXPECT_GE(seq, 50u);
  EXPECT_EQ(worker_->stats().retransmissions, 0u);
  EXPECT_EQ(worker_->NextTimer(), 1'000'000u);
  tx_.frames.clear();
  worker_->OnTimer(1'000'000);
  EXPECT_EQ(SentSeqs().front(), 0u);
  EXPECT_TRUE(tx_.Header(0).Has(kAtpFlagResend));
  EXPECT_EQ(worker_->stats().fast_retransmits, 0u);
}

}  // namespace
}  // namespace swemu
