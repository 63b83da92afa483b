#pragma once
// A host of model TCP flows (hostlib/common/ecn_tcp.h) as one Endpoint: flows it sends, each
// from a start time for a number of bytes or until a stop time, and ports it receives on. The
// background hosts of the PCN and DLCP experiments are this; protocol endpoints (a PCN worker)
// embed one and add flows as their protocol decides.
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/common/endpoint.h"
#include "hostlib/common/timed_key_heap.h"

namespace swemu {

struct TcpFlowPlan {
  TcpEnd remote;
  uint16_t local_port = 0;
  TimeNs start_ns = 0;
  TimeNs stop_ns = kNever;  // a long-lived flow stops sending here
  uint64_t bytes = 0;       // 0: without end
  uint64_t rate_bps = 0;    // an application rate limit below the NIC's (iperf3 -b); 0: none
};

class TcpHost final : public Endpoint {
 public:
  TcpHost(Transport& transport, const MacAddr& mac, Ipv4Addr ip, const EcnTcpOptions& options);

  // A flow; it starts at plan.start_ns (at once if that is past). The reference stays valid.
  EcnTcpSender& AddFlow(const TcpFlowPlan& plan);
  EcnTcpSink& Listen(uint16_t port);
  const EcnTcpSink* sink(uint16_t port) const;

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

  uint64_t frames_ignored() const { return ignored_; }

 private:
  static constexpr std::size_t kOut = ~std::size_t{0};  // not in that heap
  struct Flow {
    TcpFlowPlan plan;
    std::unique_ptr<EcnTcpSender> sender;
    uint64_t ordinal = 0;  // its place in flows_ (and live_) order
    bool started = false;
    bool stopped = false;
    bool in_group = false;  // waits for the shared NIC alone (nic_group_)
    // Its index in each heap of the agenda, or kOut.
    std::size_t timed_at = kOut, rto_at = kOut, own_at = kOut;
    // Nothing left to do: started, and stopped or done with no stop time to wait for.
    bool Retired() const {
      return started && (stopped || (sender->done() && plan.stop_ns == kNever));
    }
  };
  // The agenda: when each live flow next has something to do, so that a pass visits only the
  // flows due and in the order the passes over every live flow did (live_ order; Pump round
  // from nic_next_), and NextTimer is the least of four tops. A flow is due to start or stop
  // (timed_), due to time out (rto_), or waits for a slot to send: on its own pacer (own_), or,
  // with a shared NIC, for the NIC alone when its pacer is ready by the NIC's next free time
  // (nic_group_, whose wake is the NIC's). Place() files a flow after anything changed it;
  // OnNicMoved() moves those whose pacer the NIC's new time passed into the group.
  void Place(Flow& flow);
  void Unfile(Flow& flow);
  void OnNicMoved();
  TimeNs NicNext() const { return nic_ == nullptr ? kNever : nic_->next_ns(); }
  // The flows due at `now` in the heaps given, in live_ order from ordinal `first`.
  std::vector<Flow*> Due(TimeNs now, std::initializer_list<const TimedKeyHeap*> heaps,
                         uint64_t first);
  std::size_t LiveIndex(const Flow& flow) const;
  void VisitForPump(TimeNs now, Flow& flow);
  // Drops retired flows from live_ (Pump and OnTimer call it, after their pass).
  void PruneLive();
  static uint64_t PeerKey(Ipv4Addr remote_ip, uint16_t remote_port, uint16_t local_port) {
    return (uint64_t{remote_ip} << 32) | (uint64_t{remote_port} << 16) | local_port;
  }
  Transport& transport_;
  MacAddr mac_;
  Ipv4Addr ip_;
  EcnTcpOptions options_;
  std::deque<Flow> flows_;
  // The flows not yet retired, in flows_'s order.
  std::vector<Flow*> live_;
  bool retired_since_prune_ = false;
  TimedKeyHeap timed_, rto_, own_;
  std::set<uint64_t> nic_group_;  // ordinals
  // With options.shared_nic: the NIC its flows share, and where Pump offers it first (the
  // live_ index after the flow that sent last).
  std::unique_ptr<SharedNic> nic_;
  std::size_t nic_next_ = 0;
  // Every flow by (remote ip, remote port, local port), in flows_'s order: an ACK's lookup.
  std::unordered_map<uint64_t, std::vector<Flow*>> by_peer_;
  std::deque<EcnTcpSink> sinks_;
  uint64_t ignored_ = 0;
};

}  // namespace swemu
