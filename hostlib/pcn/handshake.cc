#include "hostlib/pcn/handshake.h"

#include <algorithm>

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/udp.h"

namespace swemu {

Status PcnAnnouncerOptions::Validate() const {
  if (!PcnThresholdEncodable(threshold)) {
    return Status::Error("PCN threshold " + std::to_string(threshold) +
                         ": must be a multiple of 5 from 0 to 75 packets (the TOS field is 4 bits "
                         "of threshold / 5)");
  }
  if (ack_wait_ns == 0) return Status::Error("PCN ACK wait must be positive");
  if (start_retries > 100) return Status::Error("PCN START retries: at most 100");
  if (ecn > 3) return Status::Error("PCN START ECN codepoint: 0..3");
  return Status::Ok();
}

bool ParsePcnDatagram(std::span<const uint8_t> frame, PcnDatagram* out) {
  if (frame.size() < kEthernetHeaderLen + kIpv4MinHeaderLen + kUdpHeaderLen ||
      HeaderAt<EthernetHeader>(frame.data())->EtherType() != kEtherTypeIpv4) {
    return false;
  }
  const auto* ip = HeaderAt<Ipv4Header>(frame.data() + kEthernetHeaderLen);
  const std::size_t udp_at = kEthernetHeaderLen + ip->HeaderLen();
  if (ip->Version() != 4 || ip->protocol != kIpProtoUdp || ip->HeaderLen() < kIpv4MinHeaderLen ||
      ip->IsFragment() || udp_at + kUdpHeaderLen > frame.size()) {
    return false;
  }
  const auto* udp = HeaderAt<UdpHeader>(frame.data() + udp_at);
  const std::size_t payload_at = udp_at + kUdpHeaderLen;
  const std::size_t payload =
      udp->Length() >= kUdpHeaderLen ? std::size_t{udp->Length()} - kUdpHeaderLen : 0;
  PcnDatagram d;
  d.src_ip = ip->SrcAddr();
  d.dst_ip = ip->DstAddr();
  d.src_port = udp->SrcPort();
  d.dst_port = udp->DstPort();
  d.tos = PcnTos::Decode(ip->tos);
  d.ecn = ip->Ecn();
  std::copy(frame.begin() + 6, frame.begin() + 12, d.src_mac.bytes.begin());
  if (payload >= kPcnPayloadLen && payload_at + kPcnPayloadLen <= frame.size()) {
    d.has_payload = true;
    d.id = LoadBe32(frame.data() + payload_at);
    d.burst_bytes = LoadBe32(frame.data() + payload_at + 4);
  }
  *out = d;
  return true;
}

void BuildPcnFrame(std::vector<uint8_t>& out, const TcpEnd& from, const TcpEnd& to, PcnTos tos,
                   uint8_t ecn, uint32_t id, uint32_t burst_bytes) {
  uint8_t payload[kPcnPayloadLen];
  StoreBe32(payload, id);
  StoreBe32(payload + 4, burst_bytes);
  out = FrameBuilder()
            .Eth(to.mac, from.mac)
            .Ipv4(from.ip, to.ip)
            .Tos(tos.Encode(ecn))
            .Udp(from.port, to.port)
            .Payload(payload)
            .Build();
}

PcnAnnouncer::PcnAnnouncer(Transport& transport, const TcpEnd& local, const TcpEnd& ps,
                           const PcnAnnouncerOptions& options)
    : transport_(transport), local_(local), ps_(ps), opt_(options) {}

void PcnAnnouncer::Announce(TimeNs now, uint32_t id, uint64_t burst_bytes) {
  state_ = State::kWaiting;
  id_ = id;
  burst_bytes_ = burst_bytes;
  sent_ = 0;
  acked_ = false;
  ack_ns_ = kNever;
  announced_ns_ = now;
  deadline_ns_ = now + opt_.ack_wait_ns;
  SendStart(now);
}

void PcnAnnouncer::SendStart(TimeNs now) {
  BuildPcnFrame(frame_, local_, ps_, PcnTos{true, false, opt_.threshold}, opt_.ecn, id_,
                static_cast<uint32_t>(std::min<uint64_t>(burst_bytes_, UINT32_MAX)));
  transport_.Send(frame_);
  ++stats_.starts_sent;
  ++sent_;
  // Retries spread evenly over the wait: with one retry, at half of it.
  next_start_ns_ = sent_ <= opt_.start_retries
                       ? announced_ns_ + opt_.ack_wait_ns * sent_ / (opt_.start_retries + 1)
                       : kNever;
  (void)now;
}

bool PcnAnnouncer::OnFrame(TimeNs now, std::span<const uint8_t> frame) {
  PcnDatagram d;
  if (!ParsePcnDatagram(frame, &d) || d.dst_port != local_.port || d.src_port != ps_.port ||
      d.src_ip != ps_.ip || !d.tos.ack || d.tos.start) {
    return false;
  }
  if (state_ != State::kWaiting || !d.has_payload || d.id != id_) {
    ++stats_.stray_acks;
    return true;
  }
  ++stats_.acks;
  acked_ = true;
  ack_ns_ = now;
  state_ = State::kReady;
  return true;
}

void PcnAnnouncer::OnTimer(TimeNs now) {
  if (state_ != State::kWaiting) return;
  if (now >= deadline_ns_) {
    ++stats_.ack_timeouts;
    state_ = State::kReady;
    return;
  }
  if (now >= next_start_ns_) SendStart(now);
}

TimeNs PcnAnnouncer::NextTimer() const {
  return state_ == State::kWaiting ? std::min(deadline_ns_, next_start_ns_) : kNever;
}

bool PcnResponder::OnFrame(std::span<const uint8_t> frame) {
  PcnDatagram d;
  if (!ParsePcnDatagram(frame, &d) || d.dst_ip != local_.ip || d.dst_port != local_.port) {
    return false;
  }
  if (!d.tos.start || d.tos.ack || !d.has_payload) {
    ++stats_.malformed;
    return true;
  }
  ++stats_.starts;
  BuildPcnFrame(frame_, local_, TcpEnd{d.src_mac, d.src_ip, d.src_port},
                PcnTos{false, true, d.tos.threshold}, kEcnNotEct, d.id, d.burst_bytes);
  if (transport_.Send(frame_)) ++stats_.acks_sent;
  return true;
}

}  // namespace swemu
