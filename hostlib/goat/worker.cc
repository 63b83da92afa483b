#include "hostlib/goat/worker.h"

#include <algorithm>

#include "pipeline/wire/byte_order.h"

namespace swemu {

GoatWorker::GoatWorker(const GoatJob& job, uint32_t worker, Transport* transport,
                       GoatWorkerOptions options)
    : job_(job),
      worker_(worker),
      transport_(transport),
      options_(options),
      tmpl_(job.workers[worker].mac, job.ps.mac, job.workers[worker].ip, job.ps.ip, job.udp_port,
            GoatPayloadLen(job.elements), 0),
      refs_(GoatFragmentTable(job)),
      frags_(refs_.size()),
      frame_(tmpl_.frame_len()),
      buffer_(job.elements) {
  for (uint32_t g = 0; g < job.num_submodels(); ++g) first_.push_back(job.first_fragment(g));
  options_.window = std::max<uint32_t>(options_.window, 1);
}

Status GoatWorker::StartRound(uint32_t round, std::span<const int32_t> gradient,
                              std::span<int32_t> out, TimeNs start_ns) {
  if (started_ && !done()) {
    return Status::Error("goat worker " + std::to_string(worker_) + ": round " +
                         std::to_string(round_) + " is still running");
  }
  const uint64_t need = job_.total_elements();
  if (gradient.size() != need || out.size() != need) {
    return Status::Error("goat worker: gradient and output need " + std::to_string(need) +
                         " values, got " + std::to_string(gradient.size()) + " and " +
                         std::to_string(out.size()));
  }
  spans_ = SpanValues(job_.elements, gradient, out);
  return StartRound(round, &spans_, start_ns);
}

Status GoatWorker::StartRound(uint32_t round, GoatRoundValues* values, TimeNs start_ns) {
  if (started_ && !done()) {
    return Status::Error("goat worker " + std::to_string(worker_) + ": round " +
                         std::to_string(round_) + " is still running");
  }
  round_ = round;
  values_ = values;
  std::fill(frags_.begin(), frags_.end(), Fragment());
  deadlines_ = {};
  next_unsent_ = in_flight_ = done_count_ = 0;
  start_ns_ = start_ns;
  pacer_.Restart(start_ns);
  finish_ns_ = sent_all_ns_ = 0;
  started_ = true;
  return Status::Ok();
}

void GoatWorker::Send(uint64_t index, bool resend, TimeNs now) noexcept {
  Fragment& frag = frags_[index];
  const GoatFragmentRef ref = refs_[index];
  uint8_t* p = tmpl_.Write(frame_.data());
  GoatFields f;
  f.flags = resend ? kGoatFlagResend : 0;
  f.job_id = job_.job_id;
  f.node_id = job_.node[worker_][ref.submodel];
  f.submodel = static_cast<uint16_t>(ref.submodel);
  f.fragment = ref.fragment;
  f.round = round_;
  f.num_elements = job_.elements;
  f.count = 1;
  f.bitmap = uint64_t{1} << worker_;
  f.Encode(p);
  values_->Gradient(index, buffer_.data());
  for (uint16_t e = 0; e < job_.elements; ++e) {
    StoreBe32(p + kGoatHeaderLen + 4 * e, static_cast<uint32_t>(buffer_[e]));
  }
  ++stats_.fragments_sent;
  if (resend) ++stats_.retransmissions;
  if (!transport_->Send(frame_)) ++stats_.send_failures;  // recovered by the RTO
  const TimeNs rto = std::min(options_.max_rto_ns, options_.rto_ns << std::min<int>(frag.tries, 6));
  frag.tries = static_cast<uint8_t>(std::min(frag.tries + 1, 255));
  frag.deadline = now + rto;
  deadlines_.emplace(frag.deadline, index);
}

void GoatWorker::Pump(TimeNs now) noexcept {
  if (!started_ || now < start_ns_) return;
  const auto rate = static_cast<double>(options_.rate_bps);  // 0: unpaced, no gap
  while (in_flight_ < options_.window && next_unsent_ < frags_.size() && pacer_.Ready(now)) {
    frags_[next_unsent_].state = kInFlight;
    ++in_flight_;
    Send(next_unsent_++, false, now);
    pacer_.OnSend(now, frame_.size(), rate);
    if (next_unsent_ == frags_.size()) sent_all_ns_ = now;
  }
}

void GoatWorker::OnTimer(TimeNs now) noexcept {
  while (!deadlines_.empty() && deadlines_.top().first <= now) {
    const auto [deadline, index] = deadlines_.top();
    deadlines_.pop();
    const Fragment& frag = frags_[index];
    if (frag.state == kInFlight && frag.deadline == deadline) Send(index, true, now);
  }
}

TimeNs GoatWorker::NextTimer() const noexcept {
  if (!started_ || done()) return kNever;
  TimeNs next = deadlines_.empty() ? kNever : deadlines_.top().first;
  if (next_unsent_ < frags_.size() && in_flight_ < options_.window) {
    next = std::min(next, pacer_.next_ns());
  }
  return next;
}

void GoatWorker::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  UdpFrameView udp;
  if (!ParseUdpFrame(frame, kGoatHeaderLen, &udp) || udp.dst_port != job_.udp_port) return;
  const auto* h = HeaderAt<GoatHeader>(udp.payload.data());
  if (h->Version() != kGoatVersion || h->Type() != GoatType::kResult || h->JobId() != job_.job_id ||
      h->NumElements() != job_.elements || GoatPayloadLen(job_.elements) > udp.payload.size() ||
      h->Submodel() >= first_.size() || h->Fragment() >= job_.fragments[h->Submodel()] ||
      !started_ || h->Round() != round_) {
    ++stats_.stale_results;
    return;
  }
  const uint64_t index = first_[h->Submodel()] + h->Fragment();
  Fragment& frag = frags_[index];
  if (frag.state != kInFlight) {
    ++stats_.duplicate_results;
    return;
  }
  for (uint16_t e = 0; e < job_.elements; ++e) {
    buffer_[e] = static_cast<int32_t>(LoadBe32(h->Elements() + 4 * e));
  }
  frag.state = kDone;
  frag.contributors = h->Bitmap();
  values_->Result(index, buffer_.data(), frag.contributors);
  --in_flight_;
  ++done_count_;
  ++stats_.results;
  if (h->Has(kGoatFlagExcluded)) ++stats_.excluded;
  if (h->Has(kGoatFlagOverflow)) ++stats_.overflow_results;
  if (done()) {
    finish_ns_ = now;
    ++stats_.rounds_completed;
  }
}

void GoatWorker::SpanValues::Gradient(uint64_t fragment, int32_t* values) {
  std::copy_n(gradient_.data() + fragment * elements_, elements_, values);
}

void GoatWorker::SpanValues::Result(uint64_t fragment, const int32_t* values, uint64_t) {
  std::copy_n(values, elements_, out_.data() + fragment * elements_);
}

}  // namespace swemu
