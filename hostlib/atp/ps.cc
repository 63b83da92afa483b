#include "hostlib/atp/ps.h"

#include <bit>
#include <cstring>

#include "hostlib/atp/quantize.h"

namespace swemu {
namespace {

uint32_t PowerOfTwoAtLeast(uint32_t v) { return std::bit_ceil(std::max<uint32_t>(v, 1)); }

}  // namespace

AtpPs::AtpPs(const AtpJobConfig& job, Transport* transport, AtpPsOptions options)
    : job_(job),
      transport_(transport),
      slot_mask_(PowerOfTwoAtLeast(options.slots) - 1),
      history_mask_(PowerOfTwoAtLeast(options.history) - 1),
      elements_(job.spec.elements),
      tmpl_(job.spec.ps.mac, job.group_mac, job.spec.ps.ip, job.spec.group_ip, job.spec.udp_port,
            job.spec.elements, /*tos=*/0),
      slots_(slot_mask_ + 1),
      sums_(std::size_t{slot_mask_ + 1} * elements_),
      fsums_(std::size_t{slot_mask_ + 1} * elements_),
      done_seq_(history_mask_ + 1),
      overflowed_seq_(history_mask_ + 1),
      done_frames_(std::size_t{history_mask_ + 1} * tmpl_.frame_len()) {
  for (const AtpHost& worker : job.spec.workers) {
    unicast_.emplace_back(job.spec.ps.mac, worker.mac, job.spec.ps.ip, worker.ip, job.spec.udp_port,
                          job.spec.elements, /*tos=*/0);
  }
  resend_.resize(tmpl_.frame_len());
}

void AtpPs::OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept {
  AtpFrameView view;
  if (!ParseAtpFrame(frame, &view) || view.header->Has(kAtpFlagParam) ||
      view.header->JobId() != job_id() || !AtpFrameOnPort(view, udp_port())) {
    return;
  }
  OnGradient(*view.header, view.ce);
}

void AtpPs::OnGradient(const AtpHeader& header, bool ce) noexcept {
  const uint32_t bitmap = header.Bitmap();
  if (header.NumElements() != elements_ || bitmap == 0 || (bitmap & ~job_.full_bitmap) != 0) {
    ++stats_.bad_packets;
    return;
  }
  ++stats_.gradients;
  const int bits = std::popcount(bitmap);
  if (bitmap == job_.full_bitmap) {
    ++stats_.full;
  } else if (bits == 1) {
    ++stats_.originals;
  } else {
    ++stats_.partials;
  }
  if (header.Has(kAtpFlagFloat)) ++stats_.float_packets;

  const uint32_t seq = header.Seq();
  const uint32_t index = seq & slot_mask_;
  Slot& slot = slots_[index];
  const bool active = slot.bitmap != 0 && slot.seq == seq;
  if (!active) {
    const uint32_t h = seq & history_mask_;
    if (done_seq_[h] == seq + 1) {  // its parameter packet was lost on the way to someone
      ++stats_.param_resends;
      // An original names its worker; a partial result (several bits) goes to the group.
      if (bits == 1) {
        ResendParam(h, static_cast<uint32_t>(std::countr_zero(bitmap)));
      } else {
        SendParam(h);
      }
      return;
    }
    if (uint64_t{seq} + history_mask_ + 1 < newest_done_) {
      ++stats_.history_misses;
      return;
    }
  }
  if (header.Has(kAtpFlagOverflow)) {
    ++stats_.overflow_ignored;
    overflowed_seq_[seq & history_mask_] = seq + 1;  // its parameter packet will say so
    return;
  }
  if (!active) {
    if (slot.bitmap != 0) {
      ++stats_.slot_busy;
      return;
    }
    slot = Slot{seq, 0, 0, false, false};
    std::memset(&sums_[std::size_t{index} * elements_], 0, elements_ * sizeof(int64_t));
  }
  const uint32_t common = bitmap & slot.bitmap;
  if (common == bitmap) {
    ++stats_.duplicates;
    return;
  }
  if (common != 0 && common == slot.bitmap) {
    // A superset: start the seq again from this packet alone.
    ++stats_.replaced;
    slot = Slot{seq, 0, 0, slot.ecn, false};
    std::memset(&sums_[std::size_t{index} * elements_], 0, elements_ * sizeof(int64_t));
  } else if (common != 0) {
    ++stats_.partial_overlaps;
    return;
  }
  Accumulate(slot, index, header);
  slot.bitmap |= bitmap;
  slot.ecn |= header.Has(kAtpFlagEcn) || ce;
  ++slot.packets;
  if (slot.bitmap == job_.full_bitmap) Complete(slot, index);
}

void AtpPs::Accumulate(Slot& slot, uint32_t index, const AtpHeader& header) noexcept {
  const uint8_t* in = header.Elements();
  if (header.Has(kAtpFlagFloat)) {
    double* f = &fsums_[std::size_t{index} * elements_];
    if (!slot.has_float) std::memset(f, 0, elements_ * sizeof(double));  // zeroed on first use
    for (uint32_t i = 0; i < elements_; ++i) f[i] += LoadAtpFloat(in, i);
    slot.has_float = true;
    return;
  }
  int64_t* s = &sums_[std::size_t{index} * elements_];
  for (uint32_t i = 0; i < elements_; ++i) s[i] += LoadAtpInt(in, i);
}

void AtpPs::Complete(Slot& slot, uint32_t index) noexcept {
  const uint32_t seq = slot.seq;
  const uint32_t h = seq & history_mask_;
  uint8_t* frame = &done_frames_[std::size_t{h} * tmpl_.frame_len()];
  uint8_t* atp = tmpl_.Write(frame);
  AtpFields fields;
  const bool redone = overflowed_seq_[h] == seq + 1;
  fields.flags = static_cast<uint8_t>(kAtpFlagParam | kAtpFlagFloat | (slot.ecn ? kAtpFlagEcn : 0) |
                                      (redone ? kAtpFlagOverflow : 0));
  fields.job_id = job_.spec.job_id;
  fields.num_elements = elements_;
  fields.seq = seq;
  fields.bitmap = job_.full_bitmap;
  fields.Encode(atp);
  uint8_t* out = atp + kAtpHeaderLen;
  const int64_t* s = &sums_[std::size_t{index} * elements_];
  const double scale = job_.spec.scale;
  if (slot.has_float) {
    const double* f = &fsums_[std::size_t{index} * elements_];
    for (uint32_t i = 0; i < elements_; ++i) {
      StoreAtpFloat(out, i, static_cast<float>(static_cast<double>(s[i]) / scale + f[i]));
    }
  } else {
    for (uint32_t i = 0; i < elements_; ++i) StoreAtpFloat(out, i, DequantizeSum(s[i], scale));
  }
  done_seq_[h] = seq + 1;
  if (seq + 1 > newest_done_) newest_done_ = seq + 1;
  ++stats_.completed;
  if (slot.packets == 1 && job_.num_workers() > 1) {
    ++stats_.completed_by_switch;
    stats_.elements_by_switch += elements_;
  } else {
    stats_.elements_at_ps += elements_;
  }
  slot.bitmap = 0;  // free
  SendParam(h);
}

void AtpPs::SendParam(uint32_t history_index) noexcept {
  const std::size_t len = tmpl_.frame_len();
  const uint8_t* frame = &done_frames_[std::size_t{history_index} * len];
  ++stats_.params_sent;
  if (transport_ == nullptr || !transport_->Send({frame, len})) ++stats_.send_failures;
}

void AtpPs::ResendParam(uint32_t history_index, uint32_t worker) noexcept {
  const std::size_t len = tmpl_.frame_len();
  const uint8_t* stored = &done_frames_[std::size_t{history_index} * len];
  uint8_t* atp = unicast_[worker].Write(resend_.data());
  std::memcpy(atp, stored + kAtpHeaderOffset, len - kAtpHeaderOffset);
  ++stats_.params_sent;
  if (transport_ == nullptr || !transport_->Send(resend_)) ++stats_.send_failures;
}

}  // namespace swemu
