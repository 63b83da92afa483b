#pragma once
// A window-based TCP sender and receiver model that reacts to ECN, for the experiments whose
// switches mark (PCN, DLCP) where kernel TCP cannot run: the virtual-time engine and raw
// frame transports (DPDK). Frames are real Ethernet + IPv4 + TCP frames (checksums included),
// so switches, captures and the analyzer see ordinary TCP flows. What it models and what not:
//   - congestion control: Reno (RFC 5681 slow start and congestion avoidance, fast retransmit
//     and NewReno-style recovery of the next hole on a partial ACK, RTO with back-off) reacting
//     to ECE as to a loss once per window (RFC 3168), or DCTCP (RFC 8257: alpha = (1 - g) *
//     alpha + g * F per window, cwnd *= 1 - alpha / 2 once per window with marks), or pFabric's
//     minimal rate control (no reaction to ECN or to duplicate ACKs beyond retransmitting; a
//     timeout sends one segment, then slow start, after a fixed RTO of min_rto_ns);
//   - a DSCP on every data segment from the flow's progress (PacketPriority, PIAS's and
//     pFabric's tagging; none by default);
//   - the receiver ACKs every segment (no delayed ACKs), cumulatively, keeps out-of-order
//     segments, and echoes each segment's CE in ECE (DCTCP's exact echo; a Reno sender reacts
//     at most once per window either way, as RFC 3168's latched ECE would make it);
//   - no handshake, no FIN, no receive window, no SACK, no timestamps: a flow starts with data
//     and ends when every byte is acknowledged;
//   - segments leave no faster than the host's link rate (the NIC), which the engine's host
//     links do not model.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/packet_priority.h"
#include "hostlib/common/pacer.h"
#include "hostlib/common/rtt_estimator.h"
#include "pipeline/core/clock.h"
#include "pipeline/wire/address.h"

namespace swemu {

enum class CongestionControl : uint8_t { kReno, kDctcp, kPfabric };
// "reno" or "dctcp"; false for anything else (pFabric is the DLCP experiment's baseline only).
bool ParseCongestionControl(std::string_view text, CongestionControl* out);
const char* CongestionControlName(CongestionControl cc);

struct EcnTcpOptions {
  CongestionControl cc = CongestionControl::kReno;
  uint32_t mss = 1448;            // payload bytes per segment (1514-byte frames)
  uint32_t initial_cwnd = 10;     // segments (RFC 6928)
  TimeNs min_rto_ns = 200'000'000;  // Linux's 200 ms
  TimeNs initial_rto_ns = 1'000'000'000;
  double dctcp_g = 1.0 / 16;
  uint64_t link_bps = 1'000'000'000;  // the host's NIC; 0 = unpaced
  bool ect = true;                    // data segments ECT(0); false: Not-ECT
  PacketPriority priority;            // each data segment's DSCP (none: 0)
  // A TcpHost's flows share one NIC of link_bps (SharedNic, offered round robin); false: each
  // flow is paced alone at link_bps, as if it had the host's link to itself.
  bool shared_nic = false;
};

struct TcpEnd {
  MacAddr mac;
  Ipv4Addr ip = 0;
  uint16_t port = 0;
};

// The fields of a TCP segment the model reads; false for anything that is not an untagged
// Ethernet + IPv4 + TCP frame whose headers are complete.
struct TcpSegmentView {
  Ipv4Addr src_ip = 0;
  Ipv4Addr dst_ip = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint8_t flags = 0;
  uint32_t payload_len = 0;
  bool ce = false;  // the IPv4 ECN field is CE
};
bool ParseTcpSegment(std::span<const uint8_t> frame, TcpSegmentView* view) noexcept;

struct EcnTcpSenderStats {
  uint64_t segments_sent = 0;
  uint64_t retransmits = 0;
  uint64_t ece_acks = 0;         // ACKs that carried ECE
  uint64_t ecn_reductions = 0;   // window cuts for ECN
  uint64_t loss_reductions = 0;  // fast retransmits
  uint64_t timeouts = 0;
  uint64_t bytes_acked = 0;
  TimeNs started_ns = kNever;  // first segment sent
  TimeNs done_ns = kNever;     // every byte acknowledged
};

class EcnTcpSender {
 public:
  EcnTcpSender(Transport& transport, const TcpEnd& local, const TcpEnd& remote,
               const EcnTcpOptions& options);

  // Starts sending `bytes` (0: without end, a long-lived flow until Stop) at `now`; once.
  void Start(TimeNs now, uint64_t bytes);
  // Sends nothing new from now on (a long-lived flow's end); what is in flight is abandoned.
  void Stop() { stopped_ = true; }
  // Sends its segments through `nic` too (not owned; the host's, shared by its flows): a
  // segment goes when both this flow's pacer and the NIC are ready. Retransmissions that go at
  // once (a timeout, fast retransmit) still take the NIC's time.
  void ShareNic(SharedNic* nic) { nic_ = nic; }
  bool done() const { return stats_.done_ns != kNever; }
  bool Accepts(const TcpSegmentView& seg) const;  // an ACK of this flow
  void OnAck(TimeNs now, const TcpSegmentView& seg);
  void OnTimer(TimeNs now);
  TimeNs NextTimer() const;
  void Pump(TimeNs now);
  // NextTimer's parts, for a host that keeps its flows' wakes (TcpHost). Live: neither stopped
  // nor done. The RTO's deadline (kNever: none armed). Whether it waits for a slot to send
  // (data left, the window not full), and when its own pacer gives one.
  bool live() const { return !stopped_ && !done(); }
  TimeNs rto_deadline() const { return rto_at_; }
  bool WantsSlot() const {
    const auto window = static_cast<uint64_t>(std::floor(cwnd_)) * opt_.mss;
    return snd_nxt_ < snd_end_ && Flight() < std::max<uint64_t>(window, opt_.mss);
  }
  TimeNs pacer_next() const { return pacer_.next_ns(); }

  const EcnTcpSenderStats& stats() const { return stats_; }
  double cwnd() const { return cwnd_; }
  double alpha() const { return alpha_; }

 private:
  void SendSegment(TimeNs now, uint64_t seq, uint32_t len, bool retransmit);
  void OnEcn(uint64_t acked, bool ece);
  uint64_t Flight() const { return snd_nxt_ - snd_una_; }
  // pFabric's RTO is fixed: min_rto_ns, without estimate or back-off.
  void ArmRto(TimeNs now) {
    rto_at_ = now + (opt_.cc == CongestionControl::kPfabric ? opt_.min_rto_ns : rtt_.rto_ns());
  }

  Transport& transport_;
  TcpEnd local_;
  TcpEnd remote_;
  EcnTcpOptions opt_;
  // Sequence space as 64-bit offsets from iss_ (never wraps in a run); the wire carries the
  // low 32 bits.
  uint32_t iss_ = 1;
  uint64_t snd_una_ = 0;
  uint64_t snd_nxt_ = 0;
  uint64_t snd_max_ = 0;  // the highest byte ever sent (snd_nxt falls back after a timeout)
  uint64_t snd_end_ = 0;  // bytes the application gave so far (UINT64_MAX: without end)
  double cwnd_;           // segments
  double ssthresh_ = 1e9;
  uint32_t dupacks_ = 0;
  uint64_t recover_ = 0;  // snd_nxt when loss recovery began
  bool in_recovery_ = false;
  uint64_t cwr_end_ = 0;  // no further ECN cut until snd_una passes it
  bool send_cwr_ = false;
  // DCTCP's per-window counts.
  double alpha_ = 1.0;
  uint64_t window_end_ = 0;
  uint64_t window_acked_ = 0;
  uint64_t window_marked_ = 0;
  // RTT (RFC 6298), one timed segment at a time (Karn: never a retransmitted one).
  bool rtt_pending_ = false;
  uint64_t rtt_seq_ = 0;
  TimeNs rtt_sent_ns_ = 0;
  RttEstimator rtt_;
  TimeNs rto_at_ = kNever;
  HostPacer pacer_;  // the NIC (this flow's own, at link_bps)
  SharedNic* nic_ = nullptr;  // the host's NIC, when its flows share one
  bool stopped_ = false;
  uint16_t ip_id_ = 0;
  std::vector<uint8_t> frame_;
  EcnTcpSenderStats stats_;
};

struct EcnTcpFlowStats {
  Ipv4Addr src_ip = 0;
  uint16_t src_port = 0;
  uint64_t bytes = 0;  // in order, delivered
  uint64_t segments = 0;
  uint64_t ce_segments = 0;
  uint64_t duplicates = 0;
  TimeNs first_ns = kNever;
  TimeNs last_ns = kNever;  // when the in-order edge last advanced
};

// The receiving side of every flow to one local TCP port: state is made on a flow's first
// segment (as an accepting socket would), an ACK goes back for every data segment.
class EcnTcpSink {
 public:
  EcnTcpSink(Transport& transport, const TcpEnd& local);
  bool Accepts(const TcpSegmentView& seg) const {
    return seg.dst_ip == local_.ip && seg.dst_port == local_.port && seg.payload_len != 0;
  }
  void OnSegment(TimeNs now, std::span<const uint8_t> frame, const TcpSegmentView& seg);
  // Flows by (source address, source port), in the order they started.
  const std::vector<EcnTcpFlowStats>& flows() const { return stats_; }
  const EcnTcpFlowStats* Find(Ipv4Addr ip, uint16_t port) const;
  uint16_t port() const { return local_.port; }

 private:
  struct Flow {
    uint32_t rcv_nxt = 0;
    std::map<uint64_t, uint64_t> ooo;  // begin -> end (offsets), segments beyond the edge
    std::size_t stats = 0;
    MacAddr mac;
  };
  Transport& transport_;
  TcpEnd local_;
  std::map<uint64_t, Flow> flows_;
  std::vector<EcnTcpFlowStats> stats_;
  std::vector<uint8_t> frame_;
  uint16_t ip_id_ = 0;
};

// Writes Ethernet + IPv4 + TCP (+ `payload` pattern bytes) into out (resized), checksums
// included. tos carries the ECN codepoint.
void BuildTcpFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, uint32_t seq,
                   uint32_t ack, uint8_t flags, uint8_t tos, uint32_t payload, uint16_t ip_id);

}  // namespace swemu
