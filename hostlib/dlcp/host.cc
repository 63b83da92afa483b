#include "hostlib/dlcp/host.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {
namespace {

constexpr std::size_t kMaxRangesPerSignal = 128;

std::vector<uint8_t> U32s(std::initializer_list<uint32_t> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::size_t i = 0;
  for (uint32_t v : values) StoreBe32(out.data() + 4 * i++, v);
  return out;
}

}  // namespace

DlcpHost::DlcpHost(Transport& transport, const MacAddr& mac, Ipv4Addr ip,
                   const DlcpHostOptions& options)
    : transport_(transport),
      local_{mac, ip, options.port},
      opt_(options),
      control_(transport, local_, options.control_dscp) {
  if (!opt_.hold_tensors) zeros_.assign(opt_.partition_bytes, 0);
  if (opt_.shared_nic) nic_ = std::make_unique<SharedNic>(static_cast<double>(opt_.rate.link_bps));
}

Status DlcpHost::Send(TimeNs now, const TcpEnd& dst, uint32_t tensor, std::span<const float> g,
                      const DlcpPrioFunc& prio, double loss_bound, bool pull) {
  if (g.empty()) return Status::Error("DLCP send: an empty tensor");
  if (!(loss_bound >= 0 && loss_bound < 1)) return Status::Error("DLCP send: bound in [0, 1)");
  const uint64_t key = FlowKey(dst.ip, tensor);
  if (send_.count(key) != 0 && !send_.at(key).stats->done()) {
    return Status::Error("DLCP send: tensor " + std::to_string(tensor) + " is already in flight");
  }
  Result<std::vector<DlcpSegment>> segs = SegmentTensor(g, opt_.partition_bytes, prio, tensor + 1);
  if (!segs.ok()) return segs.status();
  send_stats_.push_back(std::make_unique<DlcpSendFlow>());
  DlcpSendFlow* st = send_stats_.back().get();
  st->tensor = tensor;
  st->dst = dst;
  st->start_ns = now;
  send_.erase(key);
  std::vector<float> copy;
  if (opt_.hold_tensors) copy.assign(g.begin(), g.end());
  Sender& s = send_.emplace(key, Sender{st, std::move(copy), std::move(*segs),
                                        {}, 0, false, DlcpRateControl(opt_.rate), HostPacer{},
                                        0, 0, now + 2 * opt_.rate.period_ns, {}, false})
                  .first->second;
  s.pacer.Restart(now);
  s.last_report_ns = now;
  // The rendezvous goes at the next Pump, and the data right behind it (zero-RTT).
  s.start_signal = DlcpSignal{DlcpType::kStart, static_cast<uint8_t>(pull ? kDlcpFlagPull : 0),
                              tensor, static_cast<uint32_t>(g.size() * 4),
                              U32s({static_cast<uint32_t>(std::lround(loss_bound * 1e6)),
                                    opt_.partition_bytes})};
  s.start_pending = true;
  Place(key, s);
  return Status::Ok();
}

void DlcpHost::Place(uint64_t key, const Sender& s) {
  const TimeNs pacer = s.pacer.next_ns(), nic = NicNext();
  if (s.start_pending) {
    agenda_.SetOwn(key, 0);
  } else if (s.stats->done() || s.stopped) {
    agenda_.Erase(key);
  } else if (nic_ != nullptr && pacer <= nic && s.report_due >= nic) {
    agenda_.SetNicBound(key, s.report_due);
  } else {
    agenda_.SetOwn(key, std::min(nic_ == nullptr ? pacer : std::max(pacer, nic), s.report_due));
  }
}

const DlcpRecvFlow* DlcpHost::Received(Ipv4Addr src, uint32_t tensor) const {
  auto it = recv_.find(FlowKey(src, tensor));
  return it == recv_.end() ? nullptr : &it->second;
}

void DlcpHost::SendData(TimeNs now, Sender& s, uint32_t index, bool resend) {
  const DlcpSegment& seg = s.segments[index];
  const uint8_t* bytes = opt_.hold_tensors
                             ? reinterpret_cast<const uint8_t*>(s.g.data()) + seg.offset
                             : zeros_.data();
  const uint8_t tos =
      MakeTos(static_cast<uint8_t>(opt_.dscp_base + seg.tag), seg.important ? kEcnEct0 : kEcnNotEct);
  BuildDlcpFrame(frame_, local_, s.stats->dst, tos, DlcpType::kData, 0, s.stats->tensor, s.seq++,
                 seg.offset, std::span<const uint8_t>(bytes, seg.length), ip_id_++);
  transport_.Send(frame_);
  ++s.stats->packets;
  if (resend) ++s.stats->resent_packets;
  s.period_bytes += seg.length;  // payload, as the receiver counts it
  s.pacer.OnSend(now, frame_.size() + kEthernetWireOverheadBytes, std::max(s.rate.rate_bps(), 1.0));
  if (nic_ != nullptr) nic_->OnSend(now, frame_.size() + kEthernetWireOverheadBytes);
}

void DlcpHost::OnReport(Sender& s, TimeNs now, uint64_t received_bytes, TimeNs recv_period_ns) {
  // Reports covering less than 3/4 of the sender's period add up until they cover it (a
  // sender may run a longer period than the receiver reports at).
  s.acc_recv_bytes += received_bytes;
  s.acc_recv_ns += recv_period_ns;
  if (s.acc_recv_ns < opt_.rate.period_ns * 3 / 4) return;
  // Both rates over the time each side really measured: a real-time loop wakes late, and a
  // late report divided by the nominal period would look like congestion.
  const TimeNs sent_over = std::max<TimeNs>(now - s.last_report_ns, 1'000);
  const double before = s.rate.rate_bps();
  s.rate.OnReport(static_cast<double>(s.period_bytes) * 8e9 / static_cast<double>(sent_over),
                  static_cast<double>(s.acc_recv_bytes) * 8e9 /
                      static_cast<double>(std::max<TimeNs>(s.acc_recv_ns, 1'000)));
  if (s.rate.rate_bps() < before) ++s.stats->halvings;
  s.period_bytes = 0;
  s.acc_recv_bytes = 0;
  s.acc_recv_ns = 0;
  s.last_report_ns = now;
  s.report_due = now + 2 * opt_.rate.period_ns;
}

// Visits the senders due now, in key order (with a shared NIC, from the key after the sender
// that sent last, round the keys): those due on their own (a START, a report, their pacer),
// and, while the NIC is free, the next of those waiting for the NIC alone. A visit to any
// other sender would neither report nor send. Those done or stopped leave the agenda (a
// RETRANSMIT brings one back, OnSignal).
void DlcpHost::Pump(TimeNs now) noexcept {
  if (now < SendersWake()) return;  // none due: a PS's many data arrivals cost nothing here
  const uint64_t last = nic_ != nullptr ? nic_last_key_ : ~uint64_t{0};
  const std::vector<uint64_t> due = agenda_.Due(now, last);
  uint64_t from = 0;  // the next position of the cycle not yet passed
  bool passed_all = false;
  auto visit = [&](uint64_t key) {
    Visit(now, key);
    from = DlcpSenderAgenda::Position(key, last) + 1;
    passed_all = from == 0;  // the last position of the cycle
  };
  for (std::size_t i = 0; i <= due.size() && !passed_all; ++i) {
    std::optional<uint64_t> to;  // the end of the cycle, after the last sender due
    if (i < due.size()) to = DlcpSenderAgenda::Position(due[i], last);
    // Before the next sender due on its own, a free NIC goes to the first of those waiting
    // for it alone.
    while (nic_ != nullptr && nic_->Ready(now) && !passed_all) {
      const std::optional<uint64_t> key = agenda_.FirstNicBound(last, from, to);
      if (!key) break;
      visit(*key);
    }
    if (i < due.size()) visit(due[i]);
  }
}

// One sender's due work; a sender that sent moves the NIC's group, and is placed again.
void DlcpHost::Visit(TimeNs now, uint64_t key) {
  auto it = send_.find(key);
  if (it == send_.end()) return;
  Sender& s = it->second;
  const uint64_t sent = s.stats->packets;
  const TimeNs nic_was = NicNext();
  PumpSender(now, s);
  if (s.stats->packets != sent) nic_last_key_ = key;
  if (NicNext() != nic_was) agenda_.OnNicMoved(NicNext());
  Place(key, s);
}

void DlcpHost::PumpSender(TimeNs now, Sender& s) {
  if (s.start_pending) {
    control_.Send(now, s.stats->dst, std::move(s.start_signal));
    s.start_pending = false;
  }
  if (s.stats->done() || s.stopped) return;
  if (now >= s.report_due) OnReport(s, now, 0, opt_.rate.period_ns);  // no report came
  while (s.pacer.Ready(now) && NicReady(now)) {
    if (!s.resend.empty()) {
      const uint32_t index = s.resend.back();
      s.resend.pop_back();
      SendData(now, s, index, true);
    } else if (s.next < s.segments.size()) {
      SendData(now, s, static_cast<uint32_t>(s.next++), false);
    } else {
      control_.Send(now, s.stats->dst, {DlcpType::kStop, 0, s.stats->tensor, 0, {}});
      ++s.stats->stops;
      s.stopped = true;
      break;
    }
  }
}

void DlcpHost::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  DlcpFrameView v;
  if (!ParseDlcpFrame(frame, opt_.port, &v)) {
    ++stats_.frames_ignored;
    return;
  }
  if (v.header->Type() == DlcpType::kData) {
    OnData(now, v);
    return;
  }
  DlcpSignal s;
  if (control_.OnControl(v.from, *v.header, v.payload, &s)) OnSignal(now, v.from, s);
}

void DlcpHost::OnData(TimeNs now, const DlcpFrameView& v) {
  auto it = recv_.find(FlowKey(v.from.ip, v.header->Tensor()));
  if (it == recv_.end()) {
    ++stats_.discarded_early;  // before the rendezvous: lost to the flow (3.2.1)
    return;
  }
  if (it->second.confirm_ns != kNever) {
    ++stats_.after_confirm;  // still in flight when the flow ended
    return;
  }
  DlcpRecvFlow& f = it->second;
  ++f.packets;
  if ((v.tos & 0x3) == kEcnCe) ++f.ecn_packets;
  switch (f.buffer->Place(v.header->Offset(), v.payload)) {
    case DlcpPlace::kPlaced:
      recv_period_bytes_[it->first] += v.payload.size();
      break;
    case DlcpPlace::kDuplicate:
      ++f.duplicates;
      break;
    case DlcpPlace::kOutOfBounds:
      ++f.out_of_bounds;
      break;
    case DlcpPlace::kMisaligned:
      ++f.misaligned;
      break;
  }
  if (f.bound_met_ns == kNever && f.buffer->BoundMet()) {
    f.bound_met_ns = now;
    f.bytes_at_bound = f.buffer->received_bytes();
    control_.Send(now, f.src, {DlcpType::kFinish, 0, f.tensor, 0, {}});
  }
}

void DlcpHost::OnSignal(TimeNs now, const TcpEnd& from, const DlcpSignal& s) {
  const uint64_t key = FlowKey(from.ip, s.tensor);
  switch (s.type) {
    case DlcpType::kStart:
      OnStart(now, from, s, key);
      return;
    case DlcpType::kStop: {
      auto it = recv_.find(key);
      if (it == recv_.end()) {
        // A STOP before its START (the START was lost and is on its way again): ask for
        // everything (no ranges), so the sender neither waits for ever nor stops early.
        ++stats_.stops_before_start;
        control_.Send(now, from, {DlcpType::kRetransmit, 0, s.tensor, 0, {}});
        return;
      }
      DlcpRecvFlow& f = it->second;
      if (f.buffer->BoundMet()) {
        control_.Send(now, from, {DlcpType::kFinish, 0, s.tensor, 0, {}});
        return;
      }
      if (f.retransmit_due == kNever) {
        f.retransmit_due = now + opt_.retransmit_wait_ns;
        recv_due_.insert({f.retransmit_due, key});
      }
      return;
    }
    case DlcpType::kConfirm: {
      auto it = recv_.find(key);
      if (it != recv_.end() && it->second.confirm_ns == kNever) it->second.confirm_ns = now;
      return;
    }
    case DlcpType::kFinish:
    case DlcpType::kRetransmit:
    case DlcpType::kRate:
      OnSenderSignal(now, from, s, key);
      return;
    default:
      ++stats_.unknown_signals;
  }
}

// START: a receive buffer for the tensor, unless it would pass the host's limits (refused).
void DlcpHost::OnStart(TimeNs now, const TcpEnd& from, const DlcpSignal& s, uint64_t key) {
  if (s.payload.size() < 8) {
    ++stats_.unknown_signals;
    return;
  }
  auto posted = posted_.find(s.tensor);
  const double bound = posted != posted_.end() ? posted->second
                                               : LoadBe32(s.payload.data()) / 1e6;
  auto held = recv_.find(key);
  const uint64_t replaced = held != recv_.end() && held->second.buffer ? held->second.buffer->size() : 0;
  if (s.offset > opt_.max_tensor_bytes ||
      buffered_bytes_ - replaced + s.offset > opt_.max_buffered_bytes) {
    ++stats_.starts_refused;
    control_.Send(now, from, {DlcpType::kFinish, kDlcpFlagRefused, s.tensor, 0, {}});
    return;
  }
  Result<DlcpReceiveBuffer> b =
      DlcpReceiveBuffer::Make(s.offset, LoadBe32(s.payload.data() + 4), std::min(bound, 0.999),
                              4, opt_.hold_tensors);
  if (!b.ok()) {
    ++stats_.unknown_signals;
    return;
  }
  buffered_bytes_ = buffered_bytes_ - replaced + b->size();
  DlcpRecvFlow& f = recv_[key];
  if (f.retransmit_due != kNever) recv_due_.erase({f.retransmit_due, key});
  f = DlcpRecvFlow{};
  f.tensor = s.tensor;
  f.src = from;
  f.start_ns = now;
  f.buffer = std::make_unique<DlcpReceiveBuffer>(std::move(*b));
  recv_open_.insert(key);
  if (next_report_ns_ == kNever) next_report_ns_ = now + opt_.rate.period_ns;
}

// FINISH, RETRANSMIT or a rate report, for one of this host's senders.
void DlcpHost::OnSenderSignal(TimeNs now, const TcpEnd& from, const DlcpSignal& s, uint64_t key) {
  auto it = send_.find(key);
  if (it == send_.end() || it->second.stats->done()) {
    ++stats_.unknown_signals;
    return;
  }
  Sender& snd = it->second;
  if (s.type == DlcpType::kFinish) {
    snd.stats->finish_ns = now;
    snd.stats->refused = (s.flags & kDlcpFlagRefused) != 0;
    snd.resend.clear();
    // Done for good (Pump and signals skip a done sender): its copy of the tensor and its
    // segments are never read again, and a PS holds many.
    std::vector<float>().swap(snd.g);
    std::vector<DlcpSegment>().swap(snd.segments);
    control_.Send(now, from, {DlcpType::kConfirm, 0, s.tensor, 0, {}});
  } else if (s.type == DlcpType::kRetransmit) {
    ++snd.stats->retransmit_requests;
    snd.rate.OnRetransmitRequest();
    snd.resend.clear();
    if (s.payload.empty()) {  // everything (the receiver had no START yet)
      for (uint32_t k = 0; k < snd.segments.size(); ++k) snd.resend.push_back(k);
    }
    for (std::size_t i = 0; i + 8 <= s.payload.size(); i += 8) {
      const uint32_t b = LoadBe32(s.payload.data() + i), e = LoadBe32(s.payload.data() + i + 4);
      // Segments tile the tensor in offset order: the first ending past b, then on while they
      // start before e (not a walk over every segment per range: 128 ranges x 7,000 segments).
      auto k = std::partition_point(
          snd.segments.begin(), snd.segments.end(),
          [b](const DlcpSegment& seg) { return uint64_t{seg.offset} + seg.length <= b; });
      for (; k != snd.segments.end() && k->offset < e; ++k) {
        snd.resend.push_back(static_cast<uint32_t>(k - snd.segments.begin()));
      }
    }
    std::reverse(snd.resend.begin(), snd.resend.end());  // popped from the back: in order
    snd.stopped = false;
    snd.pacer.CatchUp(now);
  } else if (s.payload.size() >= 4) {  // a rate report: bytes, then the period in us
    const TimeNs period = s.payload.size() >= 8
                              ? TimeNs{LoadBe32(s.payload.data() + 4)} * 1'000
                              : opt_.rate.period_ns;
    OnReport(snd, now, LoadBe32(s.payload.data()), period);
  }
  Place(key, snd);
}

void DlcpHost::Report(TimeNs now) {
  bool active = false;
  for (auto k = recv_open_.begin(); k != recv_open_.end();) {
    const uint64_t key = *k;
    DlcpRecvFlow& f = recv_.at(key);
    if (f.confirm_ns != kNever || f.bound_met_ns != kNever) {
      k = recv_open_.erase(k);  // settled for good (a new START opens it again)
      continue;
    }
    ++k;
    active = true;
    uint64_t& bytes = recv_period_bytes_[key];
    const TimeNs period = now - std::max(last_report_ns_, f.start_ns);
    control_.SendUnreliable(
        f.src, {DlcpType::kRate, 0, f.tensor, 0,
                U32s({static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX)),
                      static_cast<uint32_t>(std::clamp<TimeNs>(period / 1'000, 1, UINT32_MAX))})});
    bytes = 0;
  }
  last_report_ns_ = now;
  next_report_ns_ = active ? now + opt_.rate.period_ns : kNever;
}

void DlcpHost::OnTimer(TimeNs now) noexcept {
  control_.OnTimer(now);
  // The receivers due now, in recv_'s key order (the order their RETRANSMITs go in).
  std::vector<uint64_t> due;
  while (!recv_due_.empty() && recv_due_.begin()->first <= now) {
    due.push_back(recv_due_.begin()->second);
    recv_due_.erase(recv_due_.begin());
  }
  std::sort(due.begin(), due.end());
  for (uint64_t key : due) {
    DlcpRecvFlow& f = recv_.at(key);
    f.retransmit_due = kNever;
    if (f.buffer->BoundMet() || f.confirm_ns != kNever) continue;  // FINISH already went
    std::vector<uint8_t> ranges;
    for (const auto& [b, e] : f.buffer->Missing(kMaxRangesPerSignal)) {
      const std::vector<uint8_t> r = U32s({static_cast<uint32_t>(b), static_cast<uint32_t>(e)});
      ranges.insert(ranges.end(), r.begin(), r.end());
    }
    control_.Send(now, f.src, {DlcpType::kRetransmit, 0, f.tensor, 0, std::move(ranges)});
  }
  if (now >= next_report_ns_) Report(now);
}

TimeNs DlcpHost::NextTimer() const noexcept {
  TimeNs next = std::min(control_.NextTimer(), next_report_ns_);
  if (!recv_due_.empty()) next = std::min(next, recv_due_.begin()->first);
  return std::min(next, SendersWake());
}

}  // namespace swemu
