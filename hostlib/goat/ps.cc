#include "hostlib/goat/ps.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "pipeline/wire/byte_order.h"

namespace swemu {
namespace {

uint64_t Key(uint32_t round, uint64_t index) { return (uint64_t{round} << 32) | index; }

}  // namespace

GoatPs::GoatPs(const GoatJob& job, Transport* transport)
    : job_(job), transport_(transport), latest_(job.total_fragments()) {
  for (const GoatHostAddr& w : job.workers) {
    to_worker_.emplace_back(job.ps.mac, w.mac, job.ps.ip, w.ip, job.udp_port,
                            GoatPayloadLen(job.elements), 0);
  }
  for (uint32_t g = 0; g < job.num_submodels(); ++g) first_.push_back(job.first_fragment(g));
  frame_.resize(GoatFrameLen(job.elements));
}

void GoatPs::OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept {
  UdpFrameView udp;
  if (!ParseUdpFrame(frame, kGoatHeaderLen, &udp) || udp.dst_port != job_.udp_port) return;
  const auto* h = HeaderAt<GoatHeader>(udp.payload.data());
  if (h->Version() != kGoatVersion || h->Type() != GoatType::kGradient ||
      h->JobId() != job_.job_id) {
    return;
  }
  if (h->NumElements() != job_.elements || GoatPayloadLen(job_.elements) > udp.payload.size() ||
      h->Submodel() >= first_.size() || h->Fragment() >= job_.fragments[h->Submodel()] ||
      h->Bitmap() == 0 || (h->Bitmap() & ~job_.full_bitmap()) != 0) {
    ++stats_.bad_packets;
    return;
  }
  OnGradient(*h, frame.size());
}

void GoatPs::OnGradient(const GoatHeader& h, std::size_t frame_len) noexcept {
  ++stats_.gradients;
  stats_.gradient_bytes += frame_len;
  ++(h.Has(kGoatFlagAggregate) ? stats_.aggregates : stats_.originals);
  const uint64_t index = first_[h.Submodel()] + h.Fragment();
  const uint32_t round = h.Round();
  const uint64_t bits = h.Bitmap();
  Latest& latest = latest_[index];
  if (latest.valid && round <= latest.round) {
    // The fragment's round is over: answer each sender with the newest result, flagged
    // excluded for a sender it did not count.
    const uint64_t counted = round == latest.round ? bits & latest.bitmap : 0;
    ++(counted == bits ? stats_.result_resends : stats_.late);
    for (uint64_t b = bits; b != 0; b &= b - 1) {
      const uint32_t w = static_cast<uint32_t>(std::countr_zero(b));
      SendResult(index, round, w, (counted >> w & 1) == 0);
    }
    return;
  }
  if (h.Has(kGoatFlagOverflow)) {
    ++stats_.overflow_ignored;
    return;
  }
  Pending& slot = pending_[Key(round, index)];
  if (slot.sums.empty()) slot.sums.assign(job_.elements, 0);
  if ((slot.bitmap & bits) == bits) {
    ++stats_.duplicates;
    return;
  }
  if ((slot.bitmap & bits) != 0) {
    ++stats_.partial_overlaps;
    return;
  }
  if (slot.bitmap == 0 && static_cast<uint32_t>(std::popcount(bits)) >= job_.target()) {
    ++stats_.completed_by_switch;
  }
  slot.bitmap |= bits;
  for (uint16_t e = 0; e < job_.elements; ++e) {
    slot.sums[e] += static_cast<int32_t>(LoadBe32(h.Elements() + 4 * e));
  }
  if (static_cast<uint32_t>(std::popcount(slot.bitmap)) >= job_.target()) {
    Complete(index, round, slot, h);
  }
}

void GoatPs::Complete(uint64_t index, uint32_t round, Pending& slot, const GoatHeader&) noexcept {
  Latest& latest = latest_[index];
  latest.valid = true;
  latest.round = round;
  latest.bitmap = slot.bitmap;
  latest.overflow = false;
  latest.values.resize(job_.elements);
  for (uint16_t e = 0; e < job_.elements; ++e) {
    const int64_t v = slot.sums[e];
    const int64_t clamped = std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                std::numeric_limits<int32_t>::max());
    latest.overflow |= clamped != v;
    latest.values[e] = static_cast<int32_t>(clamped);
  }
  ++stats_.completed;
  const uint64_t bits = slot.bitmap;
  // This round's state, and any older round of the fragment still collecting, are done with.
  for (uint32_t r = round + 1; r-- > 0;) {
    if (pending_.erase(Key(r, index)) == 0 && r + 4 < round) break;
  }
  for (uint64_t b = bits; b != 0; b &= b - 1) {
    SendResult(index, round, static_cast<uint32_t>(std::countr_zero(b)), false);
  }
}

void GoatPs::SendResult(uint64_t index, uint32_t round, uint32_t worker, bool excluded) noexcept {
  const Latest& latest = latest_[index];
  const uint32_t g = static_cast<uint32_t>(std::upper_bound(first_.begin(), first_.end(), index) -
                                           first_.begin() - 1);
  uint8_t* p = to_worker_[worker].Write(frame_.data());
  GoatFields f;
  f.type = GoatType::kResult;
  f.flags = static_cast<uint8_t>((excluded ? kGoatFlagExcluded : 0) |
                                 (latest.overflow ? kGoatFlagOverflow : 0));
  f.job_id = job_.job_id;
  f.node_id = job_.result_node(g);
  f.submodel = static_cast<uint16_t>(g);
  f.fragment = static_cast<uint32_t>(index - first_[g]);
  f.round = round;
  f.num_elements = job_.elements;
  f.count = static_cast<uint16_t>(std::popcount(latest.bitmap));
  f.bitmap = latest.bitmap;
  f.Encode(p);
  for (uint16_t e = 0; e < job_.elements; ++e) {
    StoreBe32(p + kGoatHeaderLen + 4 * e, static_cast<uint32_t>(latest.values[e]));
  }
  ++stats_.results_sent;
  if (!transport_->Send(frame_)) ++stats_.send_failures;
}

}  // namespace swemu
