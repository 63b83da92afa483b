#pragma once
// DLCP's reliable channel for control signals (4.1: flow start, finish, stop, retransmission
// request, confirm). The paper carries them over kernel TCP; swemu's hosts run where there is no
// kernel TCP (the engine, DPDK ports), so the channel is a small ARQ of its own: every signal has
// a number per peer, the peer answers each with an acknowledgement (type 8) and drops repeats,
// and an unacknowledged signal is sent again after a timeout that doubles (1 ms, up to 64 ms)
// until `max_tries`. Signals ride in the control queue (DSCP 48, Not-ECT).
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/common/endpoint.h"
#include "pipeline/wire/dlcp.h"

namespace swemu {

struct DlcpSignal {
  DlcpType type = DlcpType::kStart;
  uint8_t flags = 0;
  uint32_t tensor = 0;
  uint32_t offset = 0;
  std::vector<uint8_t> payload;
};

struct DlcpControlStats {
  uint64_t sent = 0;
  uint64_t resent = 0;
  uint64_t acked = 0;
  uint64_t duplicates = 0;  // signals received again (their ACK was lost): answered, not redone
  uint64_t given_up = 0;    // no ACK after max_tries
};

// The signal numbers received from one peer: every number below a floor, and those above it
// (ascending; only signals that overtook a lost one), so the record stays as small as the
// peer's signals out of order, not as long as the run.
class DlcpReceivedSignals {
 public:
  // Records seq; false when it was received before.
  bool Insert(uint32_t seq);
  // Every number below it was received.
  uint32_t floor() const { return floor_; }
  // Numbers above the floor received.
  std::size_t out_of_order() const { return above_.size(); }

 private:
  uint32_t floor_ = 0;
  std::vector<uint32_t> above_;
};

class DlcpControlChannel {
 public:
  DlcpControlChannel(Transport& transport, const TcpEnd& local, uint8_t dscp);

  // Queues a signal to `peer` (MAC, IP, UDP port) and sends it now.
  void Send(TimeNs now, const TcpEnd& peer, DlcpSignal signal);
  // A control frame from `peer`: an ACK settles a pending signal (returns false); a signal is
  // acknowledged and returned in *out unless it is a repeat (returns true only for new ones).
  bool OnControl(const TcpEnd& peer, const DlcpHeader& h, std::span<const uint8_t> payload,
                 DlcpSignal* out);
  void OnTimer(TimeNs now);
  TimeNs NextTimer() const;
  const DlcpControlStats& stats() const { return stats_; }
  // No signal waits for its ACK.
  bool idle() const { return pending_.empty(); }
  // Unreliable: sent once, no number, no ACK (rate reports).
  void SendUnreliable(const TcpEnd& peer, const DlcpSignal& signal);

  static constexpr TimeNs kFirstTimeoutNs = 1'000'000;
  static constexpr TimeNs kMaxTimeoutNs = 64'000'000;
  static constexpr uint32_t kMaxTries = 30;

 private:
  struct Pending {
    TcpEnd peer;
    uint32_t seq = 0;
    DlcpSignal signal;
    TimeNs due = 0;
    TimeNs timeout = kFirstTimeoutNs;
    uint32_t tries = 0;
  };
  static uint64_t PeerKey(const TcpEnd& p) { return (uint64_t{p.ip} << 16) | p.port; }
  void Transmit(const TcpEnd& peer, uint32_t seq, const DlcpSignal& s);
  TimeNs EarliestDue() const;

  Transport& transport_;
  TcpEnd local_;
  uint8_t dscp_;
  std::map<uint64_t, uint32_t> next_seq_;               // per peer
  std::map<uint64_t, DlcpReceivedSignals> seen_;        // per peer
  std::deque<Pending> pending_;
  // The earliest due of pending_, kept so that NextTimer (read after every event of the host)
  // does not walk every signal; kNever with none. Recomputed only when that signal goes.
  TimeNs next_due_ = kNever;
  std::vector<uint8_t> frame_;
  uint16_t ip_id_ = 0;
  DlcpControlStats stats_;
};

// Writes Ethernet + IPv4 + UDP + DlcpHeader + payload into out.
void BuildDlcpFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, uint8_t tos,
                    DlcpType type, uint8_t flags, uint32_t tensor, uint32_t seq, uint32_t offset,
                    std::span<const uint8_t> payload, uint16_t ip_id);

// A DLCP frame as read off the wire; false for anything else (not IPv4/UDP to `port`, a header
// or payload cut short, another version).
struct DlcpFrameView {
  TcpEnd from;
  const DlcpHeader* header = nullptr;
  std::span<const uint8_t> payload;
  uint8_t tos = 0;
};
bool ParseDlcpFrame(std::span<const uint8_t> frame, uint16_t port, DlcpFrameView* view);

}  // namespace swemu
