#include "hostlib/common/ecn_tcp.h"

#include <algorithm>
#include <cmath>

#include "pipeline/tm/tm_config.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"

namespace swemu {
namespace {

// Every model flow starts at sequence number 1: there is no handshake to agree on one, and the
// sink must know where a flow begins even when its first segment is lost.
constexpr uint32_t kModelIss = 1;
constexpr std::size_t kHeaders = kEthernetHeaderLen + kIpv4MinHeaderLen + kTcpMinHeaderLen;
constexpr TimeNs kMaxRtoNs = 60'000'000'000;

uint64_t FlowKey(Ipv4Addr ip, uint16_t port) { return (uint64_t{ip} << 16) | port; }

}  // namespace

bool ParseCongestionControl(std::string_view text, CongestionControl* out) {
  if (text == "reno") {
    *out = CongestionControl::kReno;
  } else if (text == "dctcp") {
    *out = CongestionControl::kDctcp;
  } else {
    return false;
  }
  return true;
}

const char* CongestionControlName(CongestionControl cc) {
  switch (cc) {
    case CongestionControl::kDctcp:
      return "dctcp";
    case CongestionControl::kPfabric:
      return "pfabric";
    case CongestionControl::kReno:
      break;
  }
  return "reno";
}

bool ParseTcpSegment(std::span<const uint8_t> frame, TcpSegmentView* view) noexcept {
  if (frame.size() < kHeaders ||
      HeaderAt<EthernetHeader>(frame.data())->EtherType() != kEtherTypeIpv4) {
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(frame.data() + kEthernetHeaderLen);
  const std::size_t tcp_at = kEthernetHeaderLen + ip->HeaderLen();
  if (ip->Version() != 4 || ip->protocol != kIpProtoTcp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      tcp_at + kTcpMinHeaderLen > frame.size()) {
    return false;
  }
  const auto* tcp = HeaderAt<TcpHeader>(frame.data() + tcp_at);
  const std::size_t headers = ip->HeaderLen() + tcp->HeaderLen();
  if (tcp->HeaderLen() < kTcpMinHeaderLen || ip->TotalLength() < headers ||
      kEthernetHeaderLen + std::size_t{ip->TotalLength()} > frame.size()) {
    return false;
  }
  *view = TcpSegmentView{ip->SrcAddr(),    ip->DstAddr(),    tcp->SrcPort(),
                         tcp->DstPort(),   tcp->SeqNum(),    tcp->AckNum(),
                         tcp->flags,       static_cast<uint32_t>(ip->TotalLength() - headers),
                         ip->Ecn() == kEcnCe};
  return true;
}

void BuildTcpFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, uint32_t seq,
                   uint32_t ack, uint8_t flags, uint8_t tos, uint32_t payload, uint16_t ip_id) {
  out.assign(kHeaders + payload, 0);
  EthernetFields{to.mac, from.mac, kEtherTypeIpv4}.Encode(out.data());
  Ipv4Fields ip;
  ip.tos = tos;
  ip.total_length = static_cast<uint16_t>(kIpv4MinHeaderLen + kTcpMinHeaderLen + payload);
  ip.identification = ip_id;
  ip.flags_fragment_offset = kIpv4FlagDf;
  ip.protocol = kIpProtoTcp;
  ip.src_addr = from.ip;
  ip.dst_addr = to.ip;
  uint8_t* ip_at = out.data() + kEthernetHeaderLen;
  ip.Encode(ip_at);
  HeaderAt<Ipv4Header>(ip_at)->SetHeaderChecksum(Ipv4HeaderChecksum(ip_at, kIpv4MinHeaderLen));
  TcpFields tcp;
  tcp.src_port = from.port;
  tcp.dst_port = to.port;
  tcp.seq_num = seq;
  tcp.ack_num = ack;
  tcp.flags = flags;
  uint8_t* tcp_at = ip_at + kIpv4MinHeaderLen;
  tcp.Encode(tcp_at);
  HeaderAt<TcpHeader>(tcp_at)->SetChecksum(
      TcpChecksum(ip_at, tcp_at, kTcpMinHeaderLen + std::size_t{payload}));
}

// ---- Sender ----

EcnTcpSender::EcnTcpSender(Transport& transport, const TcpEnd& local, const TcpEnd& remote,
                           const EcnTcpOptions& options)
    : transport_(transport),
      local_(local),
      remote_(remote),
      opt_(options),
      iss_(kModelIss),
      cwnd_(std::max<uint32_t>(options.initial_cwnd, 1)),
      rtt_(UncappedEstimateRtt(options.initial_rto_ns, options.min_rto_ns, kMaxRtoNs)) {}

void EcnTcpSender::Start(TimeNs now, uint64_t bytes) {
  snd_end_ = bytes == 0 ? UINT64_MAX : bytes;
  stopped_ = false;
  pacer_.CatchUp(now);
  Pump(now);
}

bool EcnTcpSender::Accepts(const TcpSegmentView& seg) const {
  return seg.src_ip == remote_.ip && seg.dst_ip == local_.ip && seg.src_port == remote_.port &&
         seg.dst_port == local_.port && (seg.flags & kTcpAck) != 0;
}

void EcnTcpSender::SendSegment(TimeNs now, uint64_t seq, uint32_t len, bool retransmit) {
  uint8_t flags = kTcpAck | kTcpPsh;
  if (send_cwr_) {
    flags |= kTcpCwr;
    send_cwr_ = false;
  }
  // PIAS counts the new bytes sent before this segment (snd_max_), so a retransmission is not
  // demoted further; pFabric the bytes not yet acknowledged.
  const uint8_t dscp = opt_.priority.Dscp(snd_max_, snd_end_ - snd_una_);
  const uint8_t ecn = opt_.ect ? kEcnEct0 : kEcnNotEct;
  BuildTcpFrame(frame_, local_, remote_, static_cast<uint32_t>(iss_ + seq), kModelIss, flags,
                static_cast<uint8_t>(dscp << 2 | ecn), len, ip_id_++);
  transport_.Send(frame_);
  ++stats_.segments_sent;
  if (stats_.started_ns == kNever) stats_.started_ns = now;
  if (retransmit) {
    ++stats_.retransmits;
    if (rtt_pending_ && seq <= rtt_seq_) rtt_pending_ = false;  // Karn
  } else if (!rtt_pending_) {
    rtt_pending_ = true;
    rtt_seq_ = seq;
    rtt_sent_ns_ = now;
  }
  if (opt_.link_bps != 0) {
    pacer_.OnSend(now, frame_.size() + kEthernetWireOverheadBytes,
                  static_cast<double>(opt_.link_bps));
  }
  if (nic_ != nullptr) nic_->OnSend(now, frame_.size() + kEthernetWireOverheadBytes);
  if (rto_at_ == kNever) ArmRto(now);
}

void EcnTcpSender::Pump(TimeNs now) {
  if (stopped_ || done()) return;
  const uint32_t mss = opt_.mss;
  while (snd_nxt_ < snd_end_ && pacer_.Ready(now) && (nic_ == nullptr || nic_->Ready(now))) {
    const auto window = static_cast<uint64_t>(std::floor(cwnd_)) * mss;
    const auto len = static_cast<uint32_t>(std::min<uint64_t>(mss, snd_end_ - snd_nxt_));
    if (Flight() + len > std::max<uint64_t>(window, mss)) break;
    const bool retransmit = snd_nxt_ < snd_max_;
    SendSegment(now, snd_nxt_, len, retransmit);
    snd_nxt_ += len;
    snd_max_ = std::max(snd_max_, snd_nxt_);
  }
}

TimeNs EcnTcpSender::NextTimer() const {
  if (!live()) return kNever;
  TimeNs next = rto_at_;
  if (WantsSlot()) {
    const TimeNs slot = nic_ == nullptr ? pacer_.next_ns()
                                        : std::max(pacer_.next_ns(), nic_->next_ns());
    next = std::min(next, slot);
  }
  return next;
}

void EcnTcpSender::OnTimer(TimeNs now) {
  if (stopped_ || done() || rto_at_ == kNever || now < rto_at_) return;
  if (snd_max_ == snd_una_) {
    rto_at_ = kNever;
    return;
  }
  // Retransmission timeout: one segment of window, go back to the first unacknowledged byte.
  ++stats_.timeouts;
  ssthresh_ = std::max(static_cast<double>(snd_max_ - snd_una_) / opt_.mss / 2, 2.0);
  cwnd_ = 1;
  in_recovery_ = false;
  dupacks_ = 0;
  cwr_end_ = snd_max_;
  snd_nxt_ = snd_una_;
  if (opt_.cc != CongestionControl::kPfabric) rtt_.Backoff();
  rto_at_ = kNever;
  const auto len = static_cast<uint32_t>(std::min<uint64_t>(opt_.mss, snd_max_ - snd_una_));
  SendSegment(now, snd_una_, len, true);
  snd_nxt_ += len;
}

void EcnTcpSender::OnAck(TimeNs now, const TcpSegmentView& seg) {
  if (stopped_ || done()) return;
  const auto diff = static_cast<int32_t>(seg.ack - static_cast<uint32_t>(iss_ + snd_una_));
  if (diff < 0 || snd_una_ + static_cast<uint64_t>(diff) > snd_max_) return;  // old or bogus
  const bool ece = (seg.flags & kTcpEce) != 0;
  if (ece) ++stats_.ece_acks;
  const uint64_t ack = snd_una_ + static_cast<uint64_t>(diff);
  if (ack == snd_una_) {
    if (seg.payload_len == 0 && snd_max_ > snd_una_ && ++dupacks_ == 3 && !in_recovery_) {
      // Fast retransmit; the window halves once for this loss (and for any ECN in it), except
      // pFabric's, which only a timeout shrinks.
      in_recovery_ = true;
      recover_ = snd_max_;
      if (opt_.cc != CongestionControl::kPfabric) {
        ssthresh_ = std::max(cwnd_ / 2, 2.0);
        cwnd_ = ssthresh_;
        ++stats_.loss_reductions;
      }
      cwr_end_ = snd_max_;
      SendSegment(now, snd_una_,
                  static_cast<uint32_t>(std::min<uint64_t>(opt_.mss, snd_max_ - snd_una_)), true);
    }
    return;
  }
  const uint64_t acked = ack - snd_una_;
  snd_una_ = ack;
  snd_nxt_ = std::max(snd_nxt_, snd_una_);
  dupacks_ = 0;
  stats_.bytes_acked = snd_una_;
  if (rtt_pending_ && ack > rtt_seq_) {
    rtt_.Sample(now - rtt_sent_ns_);
    rtt_pending_ = false;
  }
  if (in_recovery_) {
    if (ack >= recover_) {
      in_recovery_ = false;
      if (opt_.cc != CongestionControl::kPfabric) cwnd_ = ssthresh_;
    } else {  // partial ACK: the next hole
      SendSegment(now, snd_una_,
                  static_cast<uint32_t>(std::min<uint64_t>(opt_.mss, snd_max_ - snd_una_)), true);
    }
  } else {
    const double segs = static_cast<double>(acked) / opt_.mss;
    cwnd_ += cwnd_ < ssthresh_ ? segs : segs / cwnd_;
  }
  OnEcn(acked, ece);
  if (snd_end_ != UINT64_MAX && snd_una_ >= snd_end_) {
    stats_.done_ns = now;
    rto_at_ = kNever;
    return;
  }
  rto_at_ = kNever;
  if (snd_max_ > snd_una_) ArmRto(now);
}

void EcnTcpSender::OnEcn(uint64_t acked, bool ece) {
  if (opt_.cc == CongestionControl::kPfabric) return;
  if (opt_.cc == CongestionControl::kReno) {
    if (ece && snd_una_ >= cwr_end_ && !in_recovery_) {
      ssthresh_ = std::max(cwnd_ / 2, 2.0);
      cwnd_ = ssthresh_;
      cwr_end_ = snd_max_;
      send_cwr_ = true;
      ++stats_.ecn_reductions;
    }
    return;
  }
  window_acked_ += acked;
  if (ece) window_marked_ += acked;
  if (snd_una_ < window_end_) return;
  // One window (about one RTT) of data acknowledged: update alpha, cut once if it saw marks.
  const double f = window_acked_ == 0 ? 0.0
                                      : static_cast<double>(window_marked_) /
                                            static_cast<double>(window_acked_);
  alpha_ = (1 - opt_.dctcp_g) * alpha_ + opt_.dctcp_g * f;
  if (window_marked_ != 0 && !in_recovery_) {
    cwnd_ = std::max(cwnd_ * (1 - alpha_ / 2), 2.0);
    ssthresh_ = cwnd_;
    send_cwr_ = true;
    ++stats_.ecn_reductions;
  }
  window_end_ = snd_max_;
  window_acked_ = 0;
  window_marked_ = 0;
}

// ---- Sink ----

EcnTcpSink::EcnTcpSink(Transport& transport, const TcpEnd& local)
    : transport_(transport), local_(local) {}

const EcnTcpFlowStats* EcnTcpSink::Find(Ipv4Addr ip, uint16_t port) const {
  auto it = flows_.find(FlowKey(ip, port));
  return it == flows_.end() ? nullptr : &stats_[it->second.stats];
}

void EcnTcpSink::OnSegment(TimeNs now, std::span<const uint8_t> frame,
                           const TcpSegmentView& seg) {
  auto [it, fresh] = flows_.try_emplace(FlowKey(seg.src_ip, seg.src_port));
  Flow& flow = it->second;
  if (fresh) {
    flow.rcv_nxt = kModelIss;
    flow.stats = stats_.size();
    stats_.push_back(EcnTcpFlowStats{seg.src_ip, seg.src_port});
    stats_.back().first_ns = now;
  }
  std::copy(frame.begin() + 6, frame.begin() + 12, flow.mac.bytes.begin());
  EcnTcpFlowStats& st = stats_[flow.stats];
  ++st.segments;
  if (seg.ce) ++st.ce_segments;
  // 64-bit offsets from the flow's start: the edge, and this segment placed nearest to it.
  const uint64_t edge = st.bytes;
  const int64_t rel = static_cast<int32_t>(seg.seq - static_cast<uint32_t>(kModelIss + edge));
  const int64_t begin = static_cast<int64_t>(edge) + rel;
  const int64_t end = begin + seg.payload_len;
  if (end <= static_cast<int64_t>(edge)) {
    ++st.duplicates;
  } else if (begin <= static_cast<int64_t>(edge)) {
    uint64_t next = static_cast<uint64_t>(end);
    for (auto o = flow.ooo.begin(); o != flow.ooo.end() && o->first <= next;) {
      next = std::max(next, o->second);
      o = flow.ooo.erase(o);
    }
    st.bytes = next;
    st.last_ns = now;
  } else {
    uint64_t& stored = flow.ooo[static_cast<uint64_t>(begin)];
    stored = std::max(stored, static_cast<uint64_t>(end));
  }
  flow.rcv_nxt = static_cast<uint32_t>(kModelIss + st.bytes);
  const TcpEnd to{flow.mac, seg.src_ip, seg.src_port};
  BuildTcpFrame(frame_, local_, to, kModelIss, flow.rcv_nxt,
                static_cast<uint8_t>(kTcpAck | (seg.ce ? kTcpEce : 0)), kEcnNotEct, 0, ip_id_++);
  transport_.Send(frame_);
}

}  // namespace swemu
