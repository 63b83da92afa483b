#pragma once
// PCN's worker/PS handshake (section 3.1, Figure 6): before its burst a worker sends a
// PCN-START toward the PS, which answers with an ACK; the worker sends its burst once the ACK
// is in, or once a bounded wait has passed (a lost START or ACK must not stall training).
// Both are UDP datagrams on the PCN port whose meaning rides in the IPv4 TOS byte
// (pipeline/wire/pcn.h); their 8-byte payload (docs/wire.md, "PCN") lets an ACK be matched to
// its START. Written against Transport, so they run over kernel UDP sockets, DPDK ports and
// the virtual-time engine alike.
#include <cstdint>
#include <span>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/common/endpoint.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/pcn.h"

namespace swemu {

// The START/ACK payload: announcement id (big-endian 32 bits: the worker's burst number) and
// the announced burst's size in bytes (32 bits, saturating; informational).
inline constexpr uint32_t kPcnPayloadLen = 8;

struct PcnAnnouncerOptions {
  uint32_t threshold = 10;          // packets, PcnThresholdEncodable
  TimeNs ack_wait_ns = 20'000'000;  // then the burst goes without an ACK; >= one RTT (3.1)
  uint32_t start_retries = 1;       // STARTs re-sent, spread evenly over the wait
  uint8_t ecn = 0b10;               // the START's ECN codepoint (ECT(0))

  // One line naming the bad field.
  Status Validate() const;
};

struct PcnAnnouncerStats {
  uint64_t starts_sent = 0;
  uint64_t acks = 0;
  uint64_t ack_timeouts = 0;  // bursts sent without an ACK
  uint64_t stray_acks = 0;    // ACKs for no pending announcement (late, or another id)
};

class PcnAnnouncer {
 public:
  // local: the worker's MAC, IP and UDP source port; ps: the PS's MAC, IP and PCN port.
  PcnAnnouncer(Transport& transport, const TcpEnd& local, const TcpEnd& ps,
               const PcnAnnouncerOptions& options);

  // Sends a START for announcement `id` announcing `burst_bytes`.
  void Announce(TimeNs now, uint32_t id, uint64_t burst_bytes);
  // True when the frame was a PCN ACK for this worker (matched or not); the caller passes
  // every other frame on.
  bool OnFrame(TimeNs now, std::span<const uint8_t> frame);
  void OnTimer(TimeNs now);
  TimeNs NextTimer() const;
  // The burst may go: the ACK came, or the wait ran out (then acked() is false).
  bool ready() const { return state_ == State::kReady; }
  bool acked() const { return acked_; }
  TimeNs ack_ns() const { return ack_ns_; }  // kNever until the ACK
  const PcnAnnouncerStats& stats() const { return stats_; }

 private:
  enum class State : uint8_t { kIdle, kWaiting, kReady };
  void SendStart(TimeNs now);

  Transport& transport_;
  TcpEnd local_;
  TcpEnd ps_;
  PcnAnnouncerOptions opt_;
  State state_ = State::kIdle;
  uint32_t id_ = 0;
  uint64_t burst_bytes_ = 0;
  uint32_t sent_ = 0;  // STARTs of this announcement
  TimeNs announced_ns_ = 0;
  TimeNs next_start_ns_ = kNever;
  TimeNs deadline_ns_ = kNever;
  TimeNs ack_ns_ = kNever;
  bool acked_ = false;
  std::vector<uint8_t> frame_;
  PcnAnnouncerStats stats_;
};

struct PcnResponderStats {
  uint64_t starts = 0;
  uint64_t acks_sent = 0;
  uint64_t malformed = 0;  // to the PCN port but not a START (ACK bit set, short payload)
};

// The PS side: every START to local.port gets an ACK back to its sender, carrying the same
// threshold and payload, Not-ECT.
class PcnResponder {
 public:
  PcnResponder(Transport& transport, const TcpEnd& local) : transport_(transport), local_(local) {}
  // True when the frame was addressed to the PCN port (answered or counted as malformed).
  bool OnFrame(std::span<const uint8_t> frame);
  const PcnResponderStats& stats() const { return stats_; }

 private:
  Transport& transport_;
  TcpEnd local_;
  std::vector<uint8_t> frame_;
  PcnResponderStats stats_;
};

// A PCN datagram as read off a frame: the UDP ends, the TOS fields and the payload's id.
struct PcnDatagram {
  Ipv4Addr src_ip = 0;
  Ipv4Addr dst_ip = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  PcnTos tos;
  uint8_t ecn = 0;
  bool has_payload = false;  // kPcnPayloadLen bytes or more
  uint32_t id = 0;
  uint32_t burst_bytes = 0;
  MacAddr src_mac;
};
// False for anything that is not an untagged Ethernet + IPv4 + UDP frame with complete headers.
bool ParsePcnDatagram(std::span<const uint8_t> frame, PcnDatagram* out);
// A START (or ACK) frame.
void BuildPcnFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, PcnTos tos,
                   uint8_t ecn, uint32_t id, uint32_t burst_bytes);

}  // namespace swemu
