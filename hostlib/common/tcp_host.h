#pragma once
// A host of model TCP flows (hostlib/common/ecn_tcp.h) as one Endpoint: flows it sends, each
// from a start time for a number of bytes or until a stop time, and ports it receives on. The
// background hosts of the PCN and DLCP experiments are this; protocol endpoints (a PCN worker)
// embed one and add flows as their protocol decides.
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/common/endpoint.h"

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
  struct Flow {
    TcpFlowPlan plan;
    std::unique_ptr<EcnTcpSender> sender;
    bool started = false;
    bool stopped = false;
    // Nothing left to do: started, and stopped or done with no stop time to wait for.
    bool Retired() const {
      return started && (stopped || (sender->done() && plan.stop_ns == kNever));
    }
  };
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
  // The flows not yet retired, in flows_'s order: timers and Pump visit only these, so a
  // host's cost per event follows its open flows, not every flow it ever had.
  std::vector<Flow*> live_;
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
