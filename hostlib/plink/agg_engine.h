#pragma once
// AggEngine's executor (PLink section 4.2.2) on one node: runs an AggPlan's schedule over a
// datagram transport. Every chunk is a small DAG on this node, by its role:
//   - a member sends its values to its group's local master (LM) and waits for the total;
//   - an LM sums its group (its own values plus |G|-1 contributions); if it is not the chunk's
//     global master (GM) it sends the group sum to the GM and waits for the total; it then sends
//     the total to its members;
//   - the GM adds the other groups' sums to its own group's, then sends the total to the other
//     LMs and to its members.
// Chunks run independently, so one chunk's inter-group step overlaps another's intra-group step,
// as the paper's engine does. A flat plan (FA) is the one-group case.
//
// The paper's engine rides TCP (ordered bytes, a 4-byte chunk id per flow). Here every packet
// carries the PLink header (pipeline/wire/plink.h: chunk id, byte offset, sender, plan epoch,
// step) and is acknowledged one by one; per destination a window (additive increase, halved on a
// timeout) and a retransmission timer (Jacobson/Karels, with a floor) give loss recovery.
// Contributions are summed into the node's output as they arrive (duplicates are ignored), so
// sums are in arrival order: exact for values that float32 adds exactly (integers below 2^24),
// within float rounding otherwise.
//
// A packet of another plan epoch is acknowledged and ignored when it is older (a retransmission
// of a finished reduction) and dropped unacknowledged when newer (its sender retransmits it once
// this node has started that epoch).
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/pacer.h"
#include "hostlib/common/rtt_estimator.h"
#include "hostlib/common/udp_frame.h"
#include "hostlib/plink/agg_plan.h"
#include "hostlib/plink/prober.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/plink.h"

namespace swemu {

struct AggEngineOptions {
  uint16_t udp_port = kPlinkDefaultUdpPort;
  uint32_t payload_bytes = 1024;  // chunk bytes per packet (a multiple of 4)
  uint32_t window_packets = 64;   // largest window per destination
  uint32_t initial_window = 8;    // the window each destination starts with
  uint32_t node_window = 64;      // packets in flight from this node to all destinations
  TimeNs min_rto_ns = 1'000'000;  // retransmission timer floor
  TimeNs initial_rto_ns = 5'000'000;
  uint64_t nic_rate_bps = 0;  // pace sends to this rate (the host's link); 0 = unpaced
};

struct AggEngineStats {
  uint64_t packets_sent = 0;
  uint64_t retransmissions = 0;
  uint64_t acks_sent = 0;
  uint64_t duplicates = 0;        // chunk packets received again (their ack was lost or late)
  uint64_t stale = 0;             // packets of an older epoch (acknowledged, ignored)
  uint64_t early = 0;             // packets of a newer epoch (dropped, retransmitted later)
  uint64_t bad_packets = 0;       // PLink chunks or acks that are not for this node or malformed
  uint64_t timeouts = 0;          // packets declared lost by the retransmission timer
  uint64_t fast_retransmits = 0;  // packets declared lost by later acks
};

// What one reduction moved and took on this node: payload bytes (first copies) sent to and
// received from each node, and the time spent sending to each destination.
struct AggNodeReport {
  TimeNs start_ns = 0, finish_ns = 0;
  std::vector<uint64_t> sent_to, received_from;
  // Per destination: the time it had packets queued or unacknowledged (its busy periods, so
  // waiting for a sum to complete does not count as transfer time).
  std::vector<TimeNs> send_busy_ns;
};

class PlinkAggNode final : public Endpoint {
 public:
  PlinkAggNode(uint16_t node, std::vector<PlinkNodeAddr> nodes, Transport* transport,
               AggEngineOptions options = {});

  // Starts a reduction (returns at once; driven by the transport) under `plan` with epoch `epoch`
  // (larger than the last one): out[0..n) becomes the sum of every node's in[0..n). The plan's
  // chunks must cover 4n bytes, each a multiple of 4. Both buffers stay valid until done(). One
  // line on a bad call.
  Status AllReduce(const AggPlan& plan, uint16_t epoch, const float* in, float* out, std::size_t n,
                   TimeNs now);
  // Its output is final and everything it sent was acknowledged.
  bool done() const { return active_ && results_missing_ == 0 && unacked_ == 0; }
  const AggNodeReport& report() const { return report_; }
  const AggEngineStats& stats() const { return stats_; }
  void set_nic_rate_bps(uint64_t bps) { options_.nic_rate_bps = bps; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  struct OutPacket {
    uint32_t chunk = 0;
    uint32_t offset = 0;  // bytes in the chunk
    uint32_t len = 0;
    PlinkStep step = PlinkStep::kToLocalMaster;
  };
  struct InFlight {
    OutPacket pkt;
    TimeNs sent = 0;     // kNever while waiting in `retx`
    uint64_t order = 0;  // the flow's transmission count when last sent
    bool retransmitted = false;
  };
  struct Sent {  // one transmission, in the flow's timeline
    TimeNs at = 0;
    uint64_t key = 0;
    uint64_t order = 0;
  };
  struct Flow {                   // to one destination
    std::deque<OutPacket> queue;  // not yet sent
    std::deque<uint64_t> retx;    // timed out, to send again (ahead of the queue, any window)
    std::map<uint64_t, InFlight> inflight;  // sent or waiting in retx, not acknowledged
    std::deque<Sent> timeline;              // transmissions, oldest first; stale ones popped lazily
    uint64_t sent_count = 0;                // transmissions so far (the next `order`)
    uint64_t highest_acked = 0;             // the largest order acknowledged, plus 1
    double window = 0;
    RttEstimator rtt;
    TimeNs recovery_until = 0;  // one window cut per round trip
    uint64_t outstanding = 0;   // packets queued or unacknowledged
    TimeNs busy_since = 0;      // when outstanding last became non-zero
  };
  struct ChunkState {
    uint32_t lm = 0, gm = 0;
    uint32_t contributions_missing = 0;  // LM: group members; GM: plus the other LMs
    bool final = false;                  // out holds the total
  };
  struct Receipt {  // one incoming transfer: which of its packets arrived
    std::vector<uint8_t> got;
    uint32_t missing = 0;
  };

  static uint64_t Key(const OutPacket& p) {
    return (uint64_t{p.chunk} << 34) | (uint64_t{p.offset} << 2) | static_cast<uint8_t>(p.step);
  }
  void Enqueue(uint32_t to, uint32_t chunk, PlinkStep step);
  void ContributionComplete(uint32_t chunk);
  void TotalReady(uint32_t chunk);
  void OnChunk(TimeNs now, const PlinkFields& f, std::span<const uint8_t> payload);
  void OnAck(TimeNs now, const PlinkFields& f);
  void SendAck(const PlinkFields& data);
  void Transmit(TimeNs now, uint32_t to, InFlight& p);
  // Pops timeline entries that are no longer an unacknowledged packet's last transmission.
  static void Clean(Flow& flow);
  // Marks the flow's packets lost whose transmission is before `until` (by time) or
  // kDupThreshold transmissions before one acknowledged (fast retransmit, as SACK does), and
  // cuts the window once per round trip.
  void DetectLosses(TimeNs now, Flow& flow);
  bool Sendable(const Flow& flow) const;
  void MaybeFinish(TimeNs now);

  uint16_t node_;
  std::vector<PlinkNodeAddr> nodes_;
  Transport* transport_;
  AggEngineOptions options_;
  std::vector<uint8_t> frame_;

  // The current reduction.
  AggPlan plan_;
  bool active_ = false;
  uint16_t epoch_ = 0;
  const float* in_ = nullptr;
  float* out_ = nullptr;
  std::vector<uint64_t> chunk_start_;  // bytes
  std::vector<ChunkState> chunks_;
  std::vector<std::vector<uint32_t>> members_;      // per group
  std::unordered_map<uint64_t, Receipt> receipts_;  // (chunk, from, step)
  uint64_t results_missing_ = 0;  // chunks whose total this node does not hold yet
  uint64_t unacked_ = 0;          // packets queued or in flight
  uint64_t in_network_ = 0;       // packets sent and neither acknowledged nor declared lost
  std::vector<Flow> flows_;
  TimeNs now_ = 0;  // of the call being handled
  bool finished_ = false;
  uint32_t rr_ = 0;     // round robin over destinations
  HostPacer pacer_{HostPacer::Rounding::kUp};  // the NIC
  AggNodeReport report_;
  AggEngineStats stats_;
};

}  // namespace swemu
