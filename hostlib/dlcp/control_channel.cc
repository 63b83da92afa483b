#include "hostlib/dlcp/control_channel.h"

#include <algorithm>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {

void BuildDlcpFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, uint8_t tos,
                    DlcpType type, uint8_t flags, uint32_t tensor, uint32_t seq, uint32_t offset,
                    std::span<const uint8_t> payload, uint16_t ip_id) {
  const std::size_t udp_len = kUdpHeaderLen + kDlcpHeaderLen + payload.size();
  out.assign(kEthernetHeaderLen + kIpv4MinHeaderLen + udp_len, 0);
  EthernetFields{to.mac, from.mac, kEtherTypeIpv4}.Encode(out.data());
  Ipv4Fields ip;
  ip.tos = tos;
  ip.total_length = static_cast<uint16_t>(kIpv4MinHeaderLen + udp_len);
  ip.identification = ip_id;
  ip.protocol = kIpProtoUdp;
  ip.src_addr = from.ip;
  ip.dst_addr = to.ip;
  uint8_t* ip_at = out.data() + kEthernetHeaderLen;
  ip.Encode(ip_at);
  HeaderAt<Ipv4Header>(ip_at)->SetHeaderChecksum(Ipv4HeaderChecksum(ip_at, kIpv4MinHeaderLen));
  uint8_t* udp_at = ip_at + kIpv4MinHeaderLen;
  UdpFields{from.port, to.port, static_cast<uint16_t>(udp_len), 0}.Encode(udp_at);
  HeaderAt<DlcpHeader>(udp_at + kUdpHeaderLen)
      ->Set(type, flags, static_cast<uint16_t>(payload.size()), tensor, seq, offset);
  std::copy(payload.begin(), payload.end(), udp_at + kUdpHeaderLen + kDlcpHeaderLen);
}

bool ParseDlcpFrame(std::span<const uint8_t> frame, uint16_t port, DlcpFrameView* view) {
  constexpr std::size_t kMin = kEthernetHeaderLen + kIpv4MinHeaderLen + kUdpHeaderLen;
  if (frame.size() < kMin || HeaderAt<EthernetHeader>(frame.data())->EtherType() != kEtherTypeIpv4) {
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(frame.data() + kEthernetHeaderLen);
  const std::size_t udp_at = kEthernetHeaderLen + ip->HeaderLen();
  if (ip->Version() != 4 || ip->protocol != kIpProtoUdp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      ip->IsFragment() || udp_at + kUdpHeaderLen + kDlcpHeaderLen > frame.size()) {
    return false;
  }
  const auto* udp = HeaderAt<UdpHeader>(frame.data() + udp_at);
  if (udp->DstPort() != port) return false;
  const auto* h = HeaderAt<DlcpHeader>(frame.data() + udp_at + kUdpHeaderLen);
  const std::size_t payload_at = udp_at + kUdpHeaderLen + kDlcpHeaderLen;
  if (h->Version() != kDlcpVersion || payload_at + h->Length() > frame.size()) return false;
  view->from.ip = ip->SrcAddr();
  view->from.port = udp->SrcPort();
  std::copy(frame.begin() + 6, frame.begin() + 12, view->from.mac.bytes.begin());
  view->header = h;
  view->payload = frame.subspan(payload_at, h->Length());
  view->tos = ip->tos;
  return true;
}

bool DlcpReceivedSignals::Insert(uint32_t seq) {
  if (seq < floor_) return false;
  if (seq > floor_) {
    auto at = std::lower_bound(above_.begin(), above_.end(), seq);
    if (at != above_.end() && *at == seq) return false;
    above_.insert(at, seq);
    return true;
  }
  ++floor_;  // the next in order: it and the run of later ones already here go below the floor
  std::size_t run = 0;
  while (run < above_.size() && above_[run] == floor_) {
    ++floor_;
    ++run;
  }
  above_.erase(above_.begin(), above_.begin() + static_cast<std::ptrdiff_t>(run));
  return true;
}

DlcpControlChannel::DlcpControlChannel(Transport& transport, const TcpEnd& local, uint8_t dscp)
    : transport_(transport), local_(local), dscp_(dscp) {}

void DlcpControlChannel::Transmit(const TcpEnd& peer, uint32_t seq, const DlcpSignal& s) {
  BuildDlcpFrame(frame_, local_, peer, MakeTos(dscp_, kEcnNotEct), s.type, s.flags, s.tensor, seq,
                 s.offset, s.payload, ip_id_++);
  transport_.Send(frame_);
}

void DlcpControlChannel::Send(TimeNs now, const TcpEnd& peer, DlcpSignal signal) {
  const uint32_t seq = next_seq_[PeerKey(peer)]++;
  Transmit(peer, seq, signal);
  ++stats_.sent;
  pending_.push_back({peer, seq, std::move(signal), now + kFirstTimeoutNs, kFirstTimeoutNs, 1});
  next_due_ = std::min(next_due_, pending_.back().due);
}

void DlcpControlChannel::SendUnreliable(const TcpEnd& peer, const DlcpSignal& signal) {
  Transmit(peer, 0, signal);
}

bool DlcpControlChannel::OnControl(const TcpEnd& peer, const DlcpHeader& h,
                                   std::span<const uint8_t> payload, DlcpSignal* out) {
  if (h.Type() == DlcpType::kAck) {
    const uint64_t key = PeerKey(peer);
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) {
      return PeerKey(p.peer) == key && p.seq == h.Seq();
    });
    if (it != pending_.end()) {
      const bool was_next = it->due == next_due_;
      pending_.erase(it);
      ++stats_.acked;
      if (was_next) next_due_ = EarliestDue();
    }
    return false;
  }
  if (h.Type() != DlcpType::kRate) {  // reliable signals: acknowledge, then drop repeats
    BuildDlcpFrame(frame_, local_, peer, MakeTos(dscp_, kEcnNotEct), DlcpType::kAck, 0,
                   h.Tensor(), h.Seq(), 0, {}, ip_id_++);
    transport_.Send(frame_);
    if (!seen_[PeerKey(peer)].Insert(h.Seq())) {
      ++stats_.duplicates;
      return false;
    }
  }
  out->type = h.Type();
  out->flags = h.flags;
  out->tensor = h.Tensor();
  out->offset = h.Offset();
  out->payload.assign(payload.begin(), payload.end());
  return true;
}

void DlcpControlChannel::OnTimer(TimeNs now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now < it->due) {
      ++it;
      continue;
    }
    if (it->tries >= kMaxTries) {
      ++stats_.given_up;
      it = pending_.erase(it);
      continue;
    }
    Transmit(it->peer, it->seq, it->signal);
    ++stats_.resent;
    ++it->tries;
    it->timeout = std::min(it->timeout * 2, kMaxTimeoutNs);
    it->due = now + it->timeout;
    ++it;
  }
  next_due_ = EarliestDue();
}

TimeNs DlcpControlChannel::NextTimer() const { return next_due_; }

TimeNs DlcpControlChannel::EarliestDue() const {
  TimeNs next = kNever;
  for (const Pending& p : pending_) next = std::min(next, p.due);
  return next;
}

}  // namespace swemu
