#include "hostlib/atp/worker.h"

#include <algorithm>
#include <cstring>

#include "hostlib/atp/quantize.h"
#include "hostlib/common/event_loop.h"

namespace swemu {

bool AllReduceJob::Wait(EventLoop& loop, TimeNs timeout_ns) const {
  return loop.RunUntil([this] { return done_; }, timeout_ns);
}

AtpWorker::AtpWorker(const AtpJobConfig& job, uint32_t worker_index, Transport* transport,
                     AtpWorkerOptions options)
    : job_(job),
      setup_(job.workers[worker_index]),
      transport_(transport),
      options_(options),
      tmpl_(job.spec.workers[worker_index].mac, job.spec.ps.mac, job.spec.workers[worker_index].ip,
            job.spec.ps.ip, job.spec.udp_port, job.spec.elements, options.tos),
      lanes_(std::max<uint32_t>(options.lanes, 1)),
      tx_(tmpl_.frame_len()),
      scratch_(job.spec.elements) {
  for (Lane& lane : lanes_) {
    lane.window = uint64_t{options_.initial_window_packets} * tmpl_.frame_len();
    lane.rtt = RttEstimator(LaneRtt(options_));
    lane.holes.reserve(std::size_t{options_.max_window_packets} * kSpreadWindows);
  }
}

void AtpWorker::Submit(AllReduceJob* call, const float* in, float* out, std::size_t n) {
  const uint32_t e = job_.spec.elements;
  call->job_id_ = job_id();
  call->in_ = in;
  call->out_ = out;
  call->n_ = n;
  call->packets_ = static_cast<uint32_t>((n + e - 1) / e);
  call->first_seq_ = next_seq_;
  call->started_ = call->done_ = false;
  next_seq_ += call->packets_;
  if (n == 0) {
    call->started_ = call->done_ = true;
    return;
  }
  calls_.push_back(call);
}

const AtpWorkerStats& AtpWorker::stats() const {
  stats_.window_bytes = 0;
  for (const Lane& lane : lanes_) stats_.window_bytes += lane.window;
  stats_.srtt_ns = static_cast<TimeNs>(lanes_.front().rtt.srtt_ns());
  return stats_;
}

// Slow path, once per call: reset per-packet state and deal the chunks out to the lanes.
void AtpWorker::StartCall(TimeNs now) {
  AllReduceJob* call = calls_.front();
  call->started_ = true;
  call->start_ns_ = now;
  const uint32_t p = call->packets_;
  acked_.assign(p, 0);
  lane_of_.assign(p, 0);
  pos_of_.assign(p, 0);
  sent_ns_.assign(p, 0);
  resent_.assign(p, 0);
  answers_.assign(p, 0);
  acked_count_ = 0;
  for (Lane& lane : lanes_) {
    lane.order.clear();
    lane.una = lane.next = lane.halve_guard = lane.recovered_below = lane.high = 0;
    lane.answered_ahead = 0;
    lane.holes.clear();
    lane.timeouts_in_row = 0;
    lane.undo = {};
    lane.outstanding = 0;
    lane.deadline = kNever;
    lane.probe_at = kNever;
    lane.probed_una = 0;
  }
  const uint32_t chunk = std::max<uint32_t>(options_.chunk_packets, 1);
  for (uint32_t first = 0; first < p; first += chunk) {
    auto least = std::min_element(lanes_.begin(), lanes_.end(), [](const Lane& a, const Lane& b) {
      return a.outstanding < b.outstanding;
    });
    const uint32_t last = std::min(p, first + chunk);
    for (uint32_t k = first; k < last; ++k) {
      lane_of_[k] = static_cast<uint8_t>(least - lanes_.begin());
      pos_of_[k] = static_cast<uint32_t>(least->order.size());
      least->order.push_back(k);
    }
    least->outstanding += uint64_t{last - first} * tmpl_.frame_len();
  }
}

uint32_t AtpWorker::WindowPackets(const Lane& lane) const noexcept {
  const uint64_t len = tmpl_.frame_len();
  return static_cast<uint32_t>((lane.window + len - 1) / len);
}

uint32_t AtpWorker::SendLimit(const Lane& lane) const noexcept {
  const uint32_t window = WindowPackets(lane);
  const uint32_t in_flight = lane.next - lane.una - lane.answered_ahead;
  const uint64_t room = window > in_flight ? window - in_flight : 0;
  const uint64_t limit = std::min({uint64_t{lane.order.size()}, uint64_t{lane.next} + room,
                                   uint64_t{lane.una} + uint64_t{kSpreadWindows} * window});
  return static_cast<uint32_t>(std::max<uint64_t>(limit, lane.next));
}

void AtpWorker::SendPacket(uint32_t k, bool resend, TimeNs now) noexcept {
  const AllReduceJob& call = *calls_.front();
  const uint16_t e = job_.spec.elements;
  const std::size_t first = std::size_t{k} * e;
  const std::size_t count = std::min<std::size_t>(e, call.n_ - first);
  const float* in = call.in_ + first;

  uint8_t* atp = tmpl_.Write(tx_.data());
  uint8_t* elements = atp + kAtpHeaderLen;
  const bool fits = QuantizeToInt32(in, count, job_.spec.scale, scratch_.data());
  if (fits) {
    for (std::size_t i = 0; i < count; ++i) StoreAtpInt(elements, i, scratch_[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) StoreAtpFloat(elements, i, in[i]);
    ++stats_.float_packets;
  }
  std::memset(elements + 4 * count, 0, 4 * (e - count));  // 0 is 0 as int32 and as float32
  AtpFields fields;
  fields.flags = static_cast<uint8_t>((fits ? 0 : kAtpFlagFloat) | (resend ? kAtpFlagResend : 0));
  fields.worker_id = setup_.worker_id;
  fields.fan_in0 = setup_.fan_in0;
  fields.fan_in1 = setup_.fan_in1;
  fields.job_id = job_.spec.job_id;
  fields.num_elements = e;
  fields.seq = call.first_seq_ + k;
  fields.bitmap = 1u << setup_.worker_id;
  fields.Encode(atp);

  ++stats_.packets_sent;
  stats_.bytes_sent += tx_.size();
  if (resend) {
    ++stats_.retransmissions;
    if (resent_[k] < 255) ++resent_[k];
  } else {
    sent_ns_[k] = now;
  }
  if (transport_ == nullptr || !transport_->Send(tx_)) ++stats_.send_failures;
}

void AtpWorker::Pump(TimeNs now) noexcept {
  if (calls_.empty()) return;
  if (!calls_.front()->started_) StartCall(now);
  for (Lane& lane : lanes_) {
    const uint32_t limit = SendLimit(lane);
    if (lane.next < limit && lane.deadline == kNever) lane.deadline = now + lane.rtt.rto_ns();
    for (; lane.next < limit; ++lane.next) {
      if (!acked_[lane.order[lane.next]]) SendPacket(lane.order[lane.next], false, now);
    }
    if (lane.probe_at == kNever) ArmProbe(lane, now);
  }
}

// RFC 6298 in whole nanoseconds (each step rounded down), RTO = srtt + 4 rttvar clamped to
// [min_rto_ns, max_rto_ns]: as this worker always computed it. A sample does not end a back-off:
// the RTO is recomputed when UNA advances (or a timeout proves spurious).
RttEstimatorOptions AtpWorker::LaneRtt(const AtpWorkerOptions& options) {
  RttEstimatorOptions r;
  r.initial_rto_ns = options.rto_ns;
  r.min_rto_ns = options.min_rto_ns;
  r.max_rto_ns = options.max_rto_ns;
  r.integer_ns = true;
  r.sample_resets_backoff = false;
  return r;
}

void AtpWorker::SampleRtt(Lane& lane, TimeNs rtt) noexcept {
  ++stats_.rtt_samples;
  lane.min_rtt = std::min(lane.min_rtt, rtt);
  lane.rtt.Sample(rtt);
}

void AtpWorker::RememberUndo(Lane& lane, uint32_t k, bool timeout, TimeNs now) noexcept {
  // A timeout in a row keeps the state from before the first one: that is what an undo restores.
  if (lane.undo.valid && lane.undo.timeout && timeout && lane.undo.k == k) return;
  lane.undo.valid = true;
  lane.undo.timeout = timeout;
  lane.undo.k = k;
  lane.undo.at = now;
  lane.undo.answer_at = 0;
  lane.undo.window = lane.window;
  lane.undo.ssthresh = lane.ssthresh;
}

void AtpWorker::UndoSpurious(Lane& lane, uint32_t k) noexcept {
  if (!lane.undo.valid || lane.undo.k != k) return;
  lane.window = std::max(lane.window, lane.undo.window);
  lane.ssthresh = lane.undo.ssthresh;
  lane.ca_bytes = 0;
  if (lane.undo.timeout) {
    ++stats_.spurious_timeouts;
    // The packet took this long to be answered; wait twice that before the next timeout.
    const TimeNs delay = lane.undo.answer_at > sent_ns_[k] ? lane.undo.answer_at - sent_ns_[k] : 0;
    lane.rtt.SetMinRto(std::clamp(2 * delay, lane.rtt.options().min_rto_ns,
                                  std::max(options_.max_adaptive_min_rto_ns, options_.min_rto_ns)));
    lane.rtt.ResetBackoff();
  } else {
    ++stats_.spurious_fast;
  }
  lane.undo.valid = false;
}

void AtpWorker::Halve(Lane& lane, bool ecn, bool timeout) noexcept {
  // Once per window of packets; but every timeout halves (the cut before it was not enough:
  // without this, windows stay far above the bottleneck queue and losses never stop).
  if (!options_.congestion_control) return;
  if (!timeout && lane.una < lane.halve_guard) return;
  lane.window = std::max<uint64_t>(lane.window / 2, tmpl_.frame_len());
  lane.ssthresh = lane.window;
  lane.ca_bytes = 0;
  lane.halve_guard = lane.next;
  ++(ecn ? stats_.ecn_halvings : stats_.loss_halvings);
}

void AtpWorker::Grow(Lane& lane) noexcept {
  if (!options_.congestion_control) return;
  const uint64_t max = uint64_t{options_.max_window_packets} * tmpl_.frame_len();
  if (lane.window < lane.ssthresh) {
    lane.window += options_.mtu_bytes;
  } else {
    lane.ca_bytes += tmpl_.frame_len();
    if (lane.ca_bytes >= lane.window) {
      lane.ca_bytes -= lane.window;
      lane.window += options_.mtu_bytes;
    }
  }
  lane.window = std::min(lane.window, max);
}

void AtpWorker::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  AtpFrameView view;
  if (!ParseAtpFrame(frame, &view) || !view.header->Has(kAtpFlagParam) ||
      view.header->JobId() != job_id() || !AtpFrameOnPort(view, udp_port())) {
    return;
  }
  OnParam(now, *view.header, view.ce);
}

void AtpWorker::OnParam(TimeNs now, const AtpHeader& header, bool ce) noexcept {
  ++stats_.params_received;
  if (calls_.empty() || !calls_.front()->started_) {
    ++stats_.stale_params;
    return;
  }
  AllReduceJob& call = *calls_.front();
  const uint32_t k = header.Seq() - call.first_seq_;  // wraps for older seqs
  if (k >= call.packets_ || header.NumElements() != job_.spec.elements) {
    ++stats_.stale_params;
    return;
  }

  if (acked_[k]) {
    ++stats_.duplicate_params;
    if (answers_[k] < 255) ++answers_[k];
    // DSACK-style: two answers for a packet sent twice; the original was not lost.
    Lane& lane = lanes_[lane_of_[k]];
    if (lane.undo.valid && lane.undo.k == k && resent_[k] == 1 && answers_[k] == 2) {
      UndoSpurious(lane, k);
    }
    return;
  }
  const uint16_t e = job_.spec.elements;
  const std::size_t first = std::size_t{k} * e;
  const std::size_t count = std::min<std::size_t>(e, call.n_ - first);
  const uint8_t* elements = header.Elements();
  float* out = call.out_ + first;
  if (header.Has(kAtpFlagFloat)) {
    for (std::size_t i = 0; i < count; ++i) out[i] = LoadAtpFloat(elements, i);
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = DequantizeSum(LoadAtpInt(elements, i), job_.spec.scale);
    }
  }
  // The PS's sum, redone from the originals after a switch's int32 sum overflowed.
  if (header.Has(kAtpFlagOverflow)) {
    ++call.overflow_results_;
    ++stats_.overflow_results;
  }
  acked_[k] = 1;
  answers_[k] = 1;
  ++acked_count_;
  stats_.elements_completed += count;

  Lane& lane = lanes_[lane_of_[k]];
  if (lane.undo.valid && lane.undo.k == k) {
    lane.undo.answer_at = now;
    // Eifel by timing: answered sooner after the retransmission than any round trip has
    // taken, so this answers the original.
    if (resent_[k] == 1 && lane.min_rtt != kNever && now - lane.undo.at < lane.min_rtt * 3 / 4) {
      UndoSpurious(lane, k);
    }
  }
  lane.outstanding -= tmpl_.frame_len();
  if (!resent_[k] && now >= sent_ns_[k]) SampleRtt(lane, now - sent_ns_[k]);
  lane.high = std::max(lane.high, pos_of_[k] + 1);
  ++lane.answered_ahead;
  RecoverResentHoles(lane, pos_of_[k], now);
  if (pos_of_[k] == lane.una) {
    while (lane.una < lane.order.size() && acked_[lane.order[lane.una]]) {
      ++lane.una;
      --lane.answered_ahead;
    }
    lane.recovered_below = std::max(lane.recovered_below, lane.una);
    // Only the ACK of an original transmission ends a timeout streak: one that acknowledges a
    // retransmission moves UNA through a lost tail one packet at a time, and the next timeout
    // must resend the rest of it at once, not the next packet alone.
    if (!resent_[k]) lane.timeouts_in_row = 0;
    lane.rtt.ResetBackoff();
    lane.deadline = lane.una < lane.next ? now + lane.rtt.rto_ns() : kNever;
  } else {
    RecoverHoles(lane, pos_of_[k], now);
  }
  ArmProbe(lane, now);
  if (header.Has(kAtpFlagEcn) || ce) {
    Halve(lane, true);
  } else {
    Grow(lane);
  }
  if (acked_count_ == call.packets_) {
    call.done_ = true;
    call.finish_ns_ = now;
    ++stats_.calls_completed;
    calls_.pop_front();
    // Lane deadlines belong to the call: none is due until the next call starts.
    for (Lane& l : lanes_) l.deadline = l.probe_at = kNever;
  }
}

// Section 5.3: a packet is lost once three later ones of its lane were answered. Every hole
// gets this once (RFC 6675's rule, packet by packet), not only UNA: with several holes in a
// window, waiting for UNA to move before the next one is resent turned each further loss into
// a timeout. A resent hole lost again is the timeout's to recover; one halving per window.
void AtpWorker::RecoverHoles(Lane& lane, uint32_t answered, TimeNs now) noexcept {
  if (!options_.fast_retransmit) return;
  uint32_t later = 0;  // answered positions above the one looked at, `answered` included
  uint32_t pos = answered + 1;
  while (pos > lane.recovered_below && later < options_.ooo_threshold) {
    if (acked_[lane.order[--pos]]) ++later;
  }
  if (later < options_.ooo_threshold) return;
  // Every position below `pos` has ooo_threshold answered ones after it.
  bool resent = false;
  for (uint32_t q = lane.recovered_below; q < pos; ++q) {
    const uint32_t k = lane.order[q];
    if (acked_[k]) continue;
    ++stats_.fast_retransmits;
    RememberUndo(lane, k, false, now);
    SendPacket(k, true, now);
    TrackResentHole(lane, q);
    resent = true;
  }
  lane.recovered_below = std::max(lane.recovered_below, pos);
  if (resent) Halve(lane, false);
}

void AtpWorker::TrackResentHole(Lane& lane, uint32_t pos) noexcept {
  // Full (never in practice: reserved for every position a lane may have in flight): the
  // timeout recovers an untracked hole.
  if (lane.holes.size() == lane.holes.capacity()) return;
  lane.holes.push_back({pos, lane.next, 0});
}

void AtpWorker::RecoverResentHoles(Lane& lane, uint32_t answered, TimeNs now) noexcept {
  bool resent = false;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < lane.holes.size(); ++i) {
    Lane::ResentHole hole = lane.holes[i];
    const uint32_t k = lane.order[hole.pos];
    if (acked_[k]) continue;  // recovered: dropped from the list
    if (answered >= hole.sent_before && ++hole.later >= options_.ooo_threshold) {
      ++stats_.fast_retransmits;
      SendPacket(k, true, now);
      hole = {hole.pos, lane.next, 0};
      resent = true;
    }
    lane.holes[kept++] = hole;
  }
  lane.holes.resize(kept);
  if (resent) Halve(lane, false);
}

void AtpWorker::ArmProbe(Lane& lane, TimeNs now) const noexcept {
  // A tail: every packet sent and only a few unanswered, too few for three later answers to
  // reveal a loss (a hole resent at the tail is one: nothing is sent after it). More are a
  // burst loss (or a slow peer), the RTO's to judge.
  const uint32_t unanswered = lane.next - lane.una - lane.answered_ahead;
  const bool tail = options_.tail_probe && lane.next == lane.order.size() && lane.una < lane.next &&
                    unanswered <= 2 * options_.ooo_threshold && lane.rtt.has_sample();
  const uint32_t probes = lane.probed_una == lane.una + 1 ? lane.probes : 0;
  const auto srtt = static_cast<TimeNs>(lane.rtt.srtt_ns());
  const auto rttvar = static_cast<TimeNs>(lane.rtt.rttvar_ns());
  const TimeNs wait = std::max(2 * srtt, srtt + 4 * rttvar) << std::min(probes, 20u);
  lane.probe_at = tail && now + wait < lane.deadline ? now + wait : kNever;
}

void AtpWorker::Probe(Lane& lane, TimeNs now) noexcept {
  lane.probe_at = kNever;
  if (lane.una >= lane.next) return;
  if (lane.probed_una != lane.una + 1) lane.probes = 0;
  lane.probed_una = lane.una + 1;
  ++lane.probes;  // the next probe of this UNA waits twice as long
  ++stats_.tail_probes;
  SendPacket(lane.order[lane.una], true, now);
  ArmProbe(lane, now);
}

void AtpWorker::OnTimer(TimeNs now) noexcept {
  if (calls_.empty() || !calls_.front()->started_) return;
  for (Lane& lane : lanes_) {
    if (lane.probe_at <= now) Probe(lane, now);
    if (lane.deadline > now) continue;
    if (lane.una >= lane.next) {
      lane.deadline = kNever;
      continue;
    }
    ++stats_.timeouts;
    RememberUndo(lane, lane.order[lane.una], true, now);
    Halve(lane, false, true);
    // First timeout: resend UNA and the holes below the highest acknowledged position (those
    // are lost, since later packets got through); a timeout that may only be a delay spike
    // then costs few duplicates. A second timeout in a row (a lost tail: nothing later was
    // acknowledged) resends every packet in flight, each of which has timed out by now (the
    // paper's per-packet timeouts). All of them, not just a window's worth: when a worker has
    // died and UNA can never complete, these retransmissions are what frees the switch
    // aggregators the packets beyond the window hold (section 5.3: no switch memory leak).
    const uint32_t window_end = std::min(lane.next, lane.una + WindowPackets(lane));
    const uint32_t end = ++lane.timeouts_in_row > 1
                             ? lane.next
                             : std::max(lane.una + 1, std::min(lane.high, window_end));
    for (uint32_t pos = lane.una; pos < end; ++pos) {
      if (!acked_[lane.order[pos]]) SendPacket(lane.order[pos], true, now);
    }
    lane.rtt.Backoff();
    lane.deadline = now + lane.rtt.rto_ns();
  }
}

TimeNs AtpWorker::NextTimer() const noexcept {
  TimeNs next = kNever;
  for (const Lane& lane : lanes_) next = std::min({next, lane.deadline, lane.probe_at});
  return next;
}

}  // namespace swemu
