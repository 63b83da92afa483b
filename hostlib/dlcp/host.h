#pragma once
// A DLCP host (4.1): dlcp_send(tensor, prio_func) and dlcp_recv(tensor, bound) as one Endpoint,
// over any Transport: the engine, DPDK ports, kernel UDP sockets (which set each datagram's TOS
// byte from the frame, so DSCP and ECN reach the switch).
//
// Sender, per flow: a START (rendezvous: tensor, size, bound, partition) on the control channel
// and at once the data (zero-RTT), one partition per packet, paced by the rate control; after
// the last partition a STOP. On a RETRANSMIT (the receiver's missing ranges) it sends those
// partitions again at line rate and STOPs again; on FINISH it stops at once and CONFIRMs.
// Receiver, per flow: data before its START is discarded (counted); data is placed by offset;
// once the bound is met it sends FINISH (and keeps receiving until the CONFIRM); on a STOP with
// the bound unmet it waits `retransmit_wait_ns` (the data the STOP overtook is still arriving),
// then asks for the ranges still missing (for everything when the STOP overtook a lost START).
// Every 200 us it reports, per flow, the bytes it received and the time they took (the loop may
// wake late); the sender compares them with what it sent since the last report. There is no
// data timeout: the sender's STOP drives retransmission (3.2.1).
// Data packets: DSCP = dscp_base + the partition's tag, ECT(0) when important, else Not-ECT;
// the gradients as IEEE 754 float32, little-endian.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/pacer.h"
#include "hostlib/dlcp/control_channel.h"
#include "hostlib/dlcp/rate_control.h"
#include "hostlib/dlcp/receive_buffer.h"
#include "hostlib/dlcp/segments.h"
#include "hostlib/dlcp/sender_agenda.h"

namespace swemu {

struct DlcpHostOptions {
  uint16_t port = kDlcpDefaultUdpPort;
  uint32_t partition_bytes = 1400;  // payload per data packet, a multiple of 4
  uint8_t dscp_base = kDlcpDefaultDscpBase;
  uint8_t control_dscp = kDlcpDefaultControlDscp;
  DlcpRateOptions rate;
  // How long a receiver waits after a STOP before it asks for the missing ranges: the STOP rides
  // in the control queue and overtakes the flow's last data, still queued behind it.
  TimeNs retransmit_wait_ns = 500'000;
  // A receiver refuses (FINISH with kDlcpFlagRefused) a START for a tensor larger than this, or
  // one whose buffer would take the receive buffers it holds past max_buffered_bytes: one
  // datagram must not make a host allocate gigabytes.
  uint64_t max_tensor_bytes = uint64_t{1} << 30;
  uint64_t max_buffered_bytes = uint64_t{4} << 30;
  // false: a model host, for simulations of many hosts: a sender keeps its segments but not its
  // copy of the tensor and sends zeros of the same length, a receiver keeps only which
  // partitions arrived (DlcpReceiveBuffer's bitmap). The packets, their timing and every count
  // are the same; 144 hosts of ResNet-50 would otherwise hold tens of GB.
  bool hold_tensors = true;
  // The host's flows share one NIC of rate.link_bps (SharedNic, offered round robin): a
  // worker's 54 layers offer the link's rate between them, not 54 times it. false: each flow
  // is paced by its rate control alone.
  bool shared_nic = false;
};

struct DlcpSendFlow {
  uint32_t tensor = 0;
  TcpEnd dst;
  TimeNs start_ns = 0;
  TimeNs finish_ns = kNever;  // FINISH received: the flow is over for the sender
  uint64_t packets = 0;
  uint64_t resent_packets = 0;
  uint64_t retransmit_requests = 0;
  uint64_t stops = 0;
  uint32_t halvings = 0;  // rate halved (congestion seen)
  bool refused = false;   // the receiver refused the tensor (finish_ns: when it said so)
  bool done() const { return finish_ns != kNever; }
};

struct DlcpRecvFlow {
  uint32_t tensor = 0;
  TcpEnd src;
  TimeNs start_ns = 0;          // START arrived
  TimeNs bound_met_ns = kNever;
  uint64_t bytes_at_bound = 0;  // distinct bytes held when the bound was met
  TimeNs retransmit_due = kNever;  // a STOP came with the bound unmet: ask then
  TimeNs confirm_ns = kNever;
  uint64_t duplicates = 0, out_of_bounds = 0, misaligned = 0;
  uint64_t ecn_packets = 0, packets = 0;
  std::unique_ptr<DlcpReceiveBuffer> buffer;
};

struct DlcpHostStats {
  uint64_t discarded_early = 0;  // data of a flow whose START had not arrived
  uint64_t after_confirm = 0;    // data of a flow already over
  uint64_t unknown_signals = 0;  // signals for no flow (late, or another host's)
  uint64_t stops_before_start = 0;  // answered with a request for everything
  uint64_t starts_refused = 0;      // too large, or no buffer left: answered with a refusal
  uint64_t frames_ignored = 0;   // not DLCP
};

class DlcpHost final : public Endpoint {
 public:
  DlcpHost(Transport& transport, const MacAddr& mac, Ipv4Addr ip, const DlcpHostOptions& options);

  // Starts sending tensor `tensor` (its gradients g) to dst's DLCP port at the next Pump (the
  // driver's, or the engine's when it starts). Errors for a
  // tensor already in flight to dst, a bad bound or an empty tensor.
  Status Send(TimeNs now, const TcpEnd& dst, uint32_t tensor, std::span<const float> g,
              const DlcpPrioFunc& prio, double loss_bound, bool pull = false);
  // Posts a receive: flows of `tensor` meet `loss_bound` (the START's bound otherwise).
  void Receive(uint32_t tensor, double loss_bound) { posted_[tensor] = loss_bound; }

  const std::vector<std::unique_ptr<DlcpSendFlow>>& send_flows() const { return send_stats_; }
  const DlcpRecvFlow* Received(Ipv4Addr src, uint32_t tensor) const;
  const std::map<uint64_t, DlcpRecvFlow>& recv_flows() const { return recv_; }
  const DlcpHostStats& stats() const { return stats_; }
  const DlcpControlChannel& control() const { return control_; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  struct Sender {
    DlcpSendFlow* stats;
    std::vector<float> g;  // empty without hold_tensors
    std::vector<DlcpSegment> segments;
    std::vector<uint32_t> resend;  // segment indexes still to resend
    std::size_t next = 0;          // next segment of the first pass
    bool stopped = false;          // STOP sent, nothing more to send until a RETRANSMIT
    DlcpRateControl rate;
    HostPacer pacer;  // at the rate control's rate
    uint64_t period_bytes = 0;     // sent since the last rate report
    uint32_t seq = 0;
    TimeNs report_due = 0;  // no report by then counts as one of nothing received
    DlcpSignal start_signal;
    bool start_pending = false;  // the START goes at the next Pump
    TimeNs last_report_ns = 0;   // period_bytes counts from here
    uint64_t acc_recv_bytes = 0;  // reports not yet covering a period, added up
    TimeNs acc_recv_ns = 0;
  };
  void OnReport(Sender& s, TimeNs now, uint64_t received_bytes, TimeNs recv_period_ns);
  static uint64_t FlowKey(Ipv4Addr ip, uint32_t tensor) { return (uint64_t{ip} << 32) | tensor; }
  void OnData(TimeNs now, const DlcpFrameView& v);
  void OnSignal(TimeNs now, const TcpEnd& from, const DlcpSignal& s);
  void OnStart(TimeNs now, const TcpEnd& from, const DlcpSignal& s, uint64_t key);
  void OnSenderSignal(TimeNs now, const TcpEnd& from, const DlcpSignal& s, uint64_t key);
  void SendData(TimeNs now, Sender& s, uint32_t index, bool resend);
  void Report(TimeNs now);

  Transport& transport_;
  TcpEnd local_;
  DlcpHostOptions opt_;
  DlcpControlChannel control_;
  std::unordered_map<uint64_t, Sender> send_;  // by (dst ip, tensor)
  // The senders Pump may still act on (a START to send, or neither done nor stopped), by when
  // each next has something to do. Every change to a sender's pacer, report_due or state
  // places it again (Place).
  DlcpSenderAgenda agenda_;
  // With opt_.shared_nic: the NIC, and the key of the sender that sent on it last (Pump offers
  // it first to the next key).
  std::unique_ptr<SharedNic> nic_;
  uint64_t nic_last_key_ = 0;
  bool NicReady(TimeNs now) const { return nic_ == nullptr || nic_->Ready(now); }
  TimeNs NicNext() const { return nic_ == nullptr ? kNever : nic_->next_ns(); }
  // The earliest wake of any sender (kNever: none): NextTimer's, and Pump returns at once before.
  TimeNs SendersWake() const { return agenda_.Earliest(NicNext()); }
  // Puts key's sender in the agenda: at 0 with a START pending, out once done or stopped, with
  // the NIC's group when its pacer is ready before the NIC and its report is not, else at the
  // earlier of its report's time and when its pacer and the NIC let it send.
  void Place(uint64_t key, const Sender& s);
  void Visit(TimeNs now, uint64_t key);
  void PumpSender(TimeNs now, Sender& s);
  std::vector<std::unique_ptr<DlcpSendFlow>> send_stats_;
  std::map<uint64_t, DlcpRecvFlow> recv_;  // by (src ip, tensor)
  // recv_'s retransmit_dues (due, key), earliest first: NextTimer's is the first, OnTimer
  // takes those due. And the keys that may be neither confirmed nor at their bound (the ones
  // Report reports on), pruned as they settle.
  std::set<std::pair<TimeNs, uint64_t>> recv_due_;
  std::set<uint64_t> recv_open_;
  std::map<uint64_t, uint64_t> recv_period_bytes_;
  std::map<uint32_t, double> posted_;
  TimeNs next_report_ns_ = kNever;
  TimeNs last_report_ns_ = 0;  // the last rate reports went then
  uint64_t buffered_bytes_ = 0;  // held by recv_'s buffers
  std::vector<uint8_t> frame_;
  std::vector<uint8_t> zeros_;  // a partition's payload without hold_tensors
  uint16_t ip_id_ = 0;
  DlcpHostStats stats_;
};

}  // namespace swemu
