#pragma once
// The ATP worker of section 5.4: splits each AllReduce tensor into packets of E elements (the
// last one zero-padded), sends them on several sender lanes (the paper's threads), each with
// its own byte window, and writes the sums from the PS's parameter packets into the caller's
// output buffer.
//
// Per lane: UNA (first unacknowledged position) and a window in bytes; positions below
// UNA + ceil(window / frame bytes) may be in flight. The window starts at 50 packets' worth,
// grows by one MTU per parameter packet in slow start and by one MTU per window in congestion
// avoidance, and halves (ssthresh = window) on a parameter packet with ECN/CE or a detected loss,
// at most once per window of packets (but every timeout halves). Loss detection: three
// parameter packets in a row for positions other than UNA retransmit UNA (once until UNA
// moves); a retransmission timeout (doubling, capped, reset on progress) resends the lane's
// unacknowledged packets so a lost tail is recovered. Retransmissions carry kAtpFlagResend and
// otherwise the original header (own bit, edge 0).
//
// Spurious retransmissions (a packet that was only late, e.g. delayed by a busy machine) are
// detected as TCP does (Eifel, RFC 3522; DSACK undo, RFC 3708): the retransmitted packet's
// parameter arrives sooner after the retransmission than the lane's minimum RTT, so it answers
// the original; or a second parameter packet arrives for a packet sent only twice. Then the
// loss cut is undone (window and ssthresh restored). After a spurious timeout the lane's RTO
// floor also rises to twice the delay the late packet showed (at most
// max_adaptive_min_rto_ns), so scheduling delay alone does not time packets out again and again.
// The out-of-order threshold stays at three: a split aggregation (some workers' packets
// aggregated in a switch, others at the PS) is a loss ATP must recover quickly (section 3.1),
// and a higher threshold measured slower.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/job_config.h"
#include "hostlib/common/endpoint.h"
#include "hostlib/common/rtt_estimator.h"

namespace swemu {

class EventLoop;

struct AtpWorkerOptions {
  uint32_t lanes = 2;
  uint32_t initial_window_packets = 50;
  // Slow start (one MTU per parameter packet, ~x6 per round trip) reaches the cap before the
  // first ECN mark returns: 2 lanes x 512 packets of 314 B queued at a 1 Gbit/s port are 2.6 ms,
  // below min_rto_ns. At 1024 (5.2 ms) 3 of 12 first passes of the main job timed out with no
  // loss; at 512, 0 of 12.
  uint32_t max_window_packets = 512;
  uint32_t mtu_bytes = 1500;    // the window's growth step
  uint32_t chunk_packets = 64;  // the scheduler's unit
  uint32_t ooo_threshold = 3;   // out-of-order parameter packets that mean UNA was lost
  TimeNs rto_ns = 4'000'000;    // before the first RTT sample
  // Floor of the estimated RTO (srtt + 4 rttvar). 4 ms, not the 1 ms ATP 7.2.3 gives SwitchML:
  // in slow start the queues grow faster than srtt follows, and at 1 ms the demo's first pass
  // timed out 24-32 times with no loss, each second timeout in a row resending a whole
  // window. Real losses are rare and mostly recovered by fast retransmit; a lost tail waits 4 ms.
  TimeNs min_rto_ns = 4'000'000;
  TimeNs max_rto_ns = 64'000'000;
  // RFC 8985's tail loss probe (AtpWorker::ArmProbe); off: a lost tail waits for the RTO.
  bool tail_probe = true;
  // Section 5.3's loss signal: ooo_threshold later parameter packets resend a hole. Off: only
  // timeouts recover losses (SwitchML's recovery, the baseline of ATP's Figure 7a).
  bool fast_retransmit = true;
  // Off: the window stays at initial_window_packets, whatever ECN or losses say (Figure 7a's
  // setting: loss recovery measured without window back-off).
  bool congestion_control = true;
  // How far spurious timeouts may raise a lane's RTO floor: scheduling delays on a busy machine
  // (a few ms of CFS slices) are covered; a late answer that waited on another worker's
  // recovery does not make every later recovery slow.
  TimeNs max_adaptive_min_rto_ns = 16'000'000;
  uint8_t tos = 0b10;  // ECT(0): switches mark CE instead of dropping
};

struct AtpWorkerStats {
  uint64_t packets_sent = 0;  // including retransmissions
  uint64_t bytes_sent = 0;    // frame bytes
  uint64_t retransmissions = 0;
  uint64_t fast_retransmits = 0;  // after ooo_threshold out-of-order parameter packets
  uint64_t timeouts = 0;
  uint64_t tail_probes = 0;  // a lane's last packets resent after 2 srtt without an answer
  uint64_t spurious_fast = 0;      // fast retransmits found spurious (cut undone)
  uint64_t spurious_timeouts = 0;  // timeouts found spurious (cut undone)
  uint64_t ecn_halvings = 0;
  uint64_t loss_halvings = 0;
  uint64_t float_packets = 0;  // sent on the overflow path
  uint64_t send_failures = 0;  // refused by the transport (recovered as losses)
  uint64_t params_received = 0;
  uint64_t duplicate_params = 0;
  uint64_t stale_params = 0;  // for a seq outside the current call
  uint64_t overflow_results = 0;  // AllReduceJob::overflow_results, over every call
  uint64_t elements_completed = 0;
  uint64_t calls_completed = 0;
  uint64_t window_bytes = 0;  // sum over lanes, now
  uint64_t rtt_samples = 0;   // parameter packets timed (never for a retransmitted seq)
  TimeNs srtt_ns = 0;         // smoothed RTT of lane 0, now
};

// One AllReduce call; owned by the Context, valid as long as it.
class AllReduceJob {
 public:
  bool done() const { return done_; }
  uint16_t job_id() const { return job_id_; }
  std::size_t size() const { return n_; }
  uint32_t first_seq() const { return first_seq_; }
  uint32_t packets() const { return packets_; }
  TimeNs start_ns() const { return start_ns_; }
  TimeNs finish_ns() const { return finish_ns_; }
  // This call's packets whose int32 sum overflowed in a switch: the PS redid the sum from the
  // retransmitted originals and its parameter packet carried kAtpFlagOverflow.
  uint64_t overflow_results() const { return overflow_results_; }
  // Drives `loop` until this call is done; false after timeout_ns.
  bool Wait(EventLoop& loop, TimeNs timeout_ns) const;

 private:
  friend class AtpWorker;
  uint16_t job_id_ = 0;
  const float* in_ = nullptr;
  float* out_ = nullptr;
  std::size_t n_ = 0;
  uint32_t first_seq_ = 0;
  uint32_t packets_ = 0;
  bool started_ = false;
  bool done_ = false;
  TimeNs start_ns_ = 0;
  TimeNs finish_ns_ = 0;
  uint64_t overflow_results_ = 0;
};

// An Endpoint of its own (one job on one host port: frames that are not this job's parameter
// packets are ignored), or one of a Context's jobs (the Context parses each frame once and
// hands it to OnParam).
class AtpWorker final : public Endpoint {
 public:
  // How far beyond UNA a lane may send while answers beyond a hole free its window.
  static constexpr uint32_t kSpreadWindows = 4;

  AtpWorker(const AtpJobConfig& job, uint32_t worker_index, Transport* transport,
            AtpWorkerOptions options = {});

  // Queues a call; `in` and `out` must stay valid until it is done.
  void Submit(AllReduceJob* call, const float* in, float* out, std::size_t n);
  void SetTransport(Transport* transport) { transport_ = transport; }

  // A parameter packet of this job, on its port.
  void OnParam(TimeNs now, const AtpHeader& header, bool ce) noexcept;

  // Endpoint
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

  uint16_t job_id() const { return job_.spec.job_id; }
  uint16_t udp_port() const { return job_.spec.udp_port; }
  const AtpWorkerStats& stats() const;
  // Lane state, for tests.
  uint32_t lanes() const { return static_cast<uint32_t>(lanes_.size()); }
  uint64_t window_bytes(uint32_t lane) const { return lanes_[lane].window; }
  uint64_t ssthresh(uint32_t lane) const { return lanes_[lane].ssthresh; }
  std::size_t frame_len() const { return tmpl_.frame_len(); }

 private:
  struct Lane {
    std::vector<uint32_t> order;  // packet indices of the current call, in sending order
    uint32_t una = 0;             // positions in `order`
    uint32_t next = 0;
    uint32_t halve_guard = 0;  // no new halving until una reaches it
    // Positions below this are answered or were fast-retransmitted (each hole once).
    uint32_t recovered_below = 0;
    uint32_t high = 0;             // one past the highest position acknowledged
    uint32_t answered_ahead = 0;   // answered positions in [una, next): not in flight
    // Holes resent by RecoverHoles and not yet answered. A resent hole is lost again once
    // ooo_threshold packets sent after it are answered (RACK's rule, RFC 8985, by send order).
    struct ResentHole {
      uint32_t pos = 0;
      uint32_t sent_before = 0;  // lane.next when it was resent: later positions went after it
      uint32_t later = 0;        // answers of those since
    };
    std::vector<ResentHole> holes;
    uint32_t timeouts_in_row = 0;  // since UNA last moved
    uint64_t window = 0;           // bytes
    uint64_t ssthresh = ~uint64_t{0};
    uint64_t ca_bytes = 0;     // acknowledged bytes towards the next congestion-avoidance step
    uint64_t outstanding = 0;  // bytes assigned and not yet acknowledged (the scheduler's load)
    // SRTT, RTTVAR and the RTO (backed off after a timeout; its floor raised after a spurious
    // one): AtpWorker::LaneRtt.
    RttEstimator rtt;
    TimeNs min_rtt = kNever;
    TimeNs deadline = kNever;
    TimeNs probe_at = kNever;  // the tail loss probe, armed once every packet is sent
    uint32_t probed_una = 0;   // UNA + 1 when it was probed (0: not yet)
    uint32_t probes = 0;       // probes of that UNA so far
    // The last loss cut, to undo when it proves spurious.
    struct Undo {
      bool valid = false;
      bool timeout = false;
      uint32_t k = 0;        // the packet whose retransmission made the cut
      TimeNs at = 0;         // when it was retransmitted
      TimeNs answer_at = 0;  // when its first parameter packet came (0: not yet)
      uint64_t window = 0;
      uint64_t ssthresh = 0;
    } undo;
  };

  void StartCall(TimeNs now);
  void SendPacket(uint32_t k, bool resend, TimeNs now) noexcept;
  void SampleRtt(Lane& lane, TimeNs rtt) noexcept;
  static RttEstimatorOptions LaneRtt(const AtpWorkerOptions& options);
  void Halve(Lane& lane, bool ecn, bool timeout = false) noexcept;
  // Before a loss cut triggered by retransmitting packet k: what an undo restores.
  void RememberUndo(Lane& lane, uint32_t k, bool timeout, TimeNs now) noexcept;
  void UndoSpurious(Lane& lane, uint32_t k) noexcept;
  void Grow(Lane& lane) noexcept;
  // After position `answered` of the lane was answered out of order: resends each hole below it
  // with ooo_threshold answered packets after it, once.
  void RecoverHoles(Lane& lane, uint32_t answered, TimeNs now) noexcept;
  // RFC 8985's tail loss probe: when every packet of the lane is sent and none is answered for
  // max(2 srtt, srtt + 4 rttvar), UNA is resent (a lost tail has no three later packets to
  // reveal it, and would otherwise wait for the RTO's floor). A probe that gets no answer is
  // followed by another after twice the wait, one packet each, until the RTO is nearer.
  void ArmProbe(Lane& lane, TimeNs now) const noexcept;
  void Probe(Lane& lane, TimeNs now) noexcept;
  uint32_t WindowPackets(const Lane& lane) const noexcept;
  // One past the last position the lane may send now: packets in flight (sent, unanswered)
  // stay within the window, as RFC 6675's pipe, so answers beyond a hole keep new packets
  // going while it is recovered; and no packet goes more than kSpreadWindows windows past UNA.
  uint32_t SendLimit(const Lane& lane) const noexcept;
  // After position `answered` was answered: resends a resent hole that is lost again.
  void RecoverResentHoles(Lane& lane, uint32_t answered, TimeNs now) noexcept;
  void TrackResentHole(Lane& lane, uint32_t pos) noexcept;

  AtpJobConfig job_;
  AtpWorkerSetup setup_;
  Transport* transport_;
  AtpWorkerOptions options_;
  AtpFrameTemplate tmpl_;
  std::vector<Lane> lanes_;
  std::deque<AllReduceJob*> calls_;  // front: the current call once started
  uint32_t next_seq_ = 0;
  // Current call, per packet.
  std::vector<uint8_t> acked_;
  std::vector<uint8_t> lane_of_;
  std::vector<uint32_t> pos_of_;
  std::vector<TimeNs> sent_ns_;   // first transmission
  std::vector<uint8_t> resent_;   // retransmissions (saturating); Karn: no RTT sample then
  std::vector<uint8_t> answers_;  // parameter packets received (saturating)
  uint32_t acked_count_ = 0;
  std::vector<uint8_t> tx_;       // one frame being built
  std::vector<int32_t> scratch_;  // quantized elements
  mutable AtpWorkerStats stats_;
};

}  // namespace swemu
