#include "pipeline/program/digest.h"

#include <algorithm>

#include "pipeline/core/hash.h"

namespace swemu {
namespace {

uint32_t PowerOfTwoAtLeast(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

DigestChannel::DigestChannel(DigestConfig config)
    : config_(config), filter_(PowerOfTwoAtLeast(std::max<uint32_t>(config.filter_slots, 2)), 0) {
  queue_.reserve(config_.queue);
  tokens_milli_ = uint64_t{config_.burst} * 1000;
}

std::size_t DigestChannel::FilterSlot(uint64_t hash) const noexcept {
  const std::size_t mask = filter_.size() - 1;
  std::size_t i = hash & mask;
  // Kept at most half full, so a probe always meets an empty slot soon.
  while (filter_[i] != 0 && filter_[i] != hash) i = (i + 1) & mask;
  return i;
}

bool DigestChannel::TakeToken(TimeNs now) noexcept {
  if (config_.max_per_second == 0) return true;
  const uint64_t cap = uint64_t{config_.burst} * 1000;
  if (!refilled_) {
    refilled_ = true;
    last_refill_ = now;
  } else if (now > last_refill_) {
    // tokens x 1000 per ns = max_per_second / 1e6; the elapsed time is capped so this never
    // overflows (the bucket is full after burst / rate seconds anyway).
    const uint64_t elapsed = std::min<uint64_t>(now - last_refill_, 1'000'000'000'000ull);
    const uint64_t add = elapsed / 1000 * config_.max_per_second / 1000;  // per us
    if (add > 0) {
      tokens_milli_ = std::min(cap, tokens_milli_ + add);
      last_refill_ = now;
    }
  }
  if (tokens_milli_ < 1000) return false;
  tokens_milli_ -= 1000;
  return true;
}

void DigestChannel::Emit(const DigestRecord& record) noexcept {
  const uint64_t hash = HashPair(record.words[0], record.words[1]) | 1;  // never 0 (empty)
  const std::size_t slot = FilterSlot(hash);
  if (filter_[slot] == hash) {
    ++counters_.deduplicated;
    return;
  }
  // Refused records stay out of the filter, so the next packet may try again.
  if (2 * (filter_used_ + 1) > filter_.size() || pending() >= config_.queue ||
      !TakeToken(record.time)) {
    ++counters_.dropped_by_limit;
    return;
  }
  filter_[slot] = hash;
  ++filter_used_;
  if (queue_.size() == queue_.capacity()) {  // compact in place: no allocation here
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  queue_.push_back(record);
  ++counters_.emitted;
}

TimeNs DigestChannel::NextDue() const noexcept {
  if (pending() == 0) return kNever;
  return queue_[head_].time + config_.latency_ns;
}

std::vector<DigestRecord> DigestChannel::Drain(TimeNs now) {
  std::vector<DigestRecord> out;
  while (head_ < queue_.size() &&
         (now == kNever || queue_[head_].time + config_.latency_ns <= now)) {
    out.push_back(queue_[head_++]);
  }
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  }
  if (!out.empty()) {
    std::fill(filter_.begin(), filter_.end(), 0);
    filter_used_ = 0;
    counters_.delivered += out.size();
  }
  return out;
}

std::string DigestChannel::Summary() const {
  return "digests: emitted " + std::to_string(counters_.emitted) + ", deduplicated " +
         std::to_string(counters_.deduplicated) + ", dropped by limit " +
         std::to_string(counters_.dropped_by_limit) + ", delivered " +
         std::to_string(counters_.delivered);
}

DigestCounters operator+(const DigestCounters& a, const DigestCounters& b) {
  return {a.emitted + b.emitted, a.deduplicated + b.deduplicated,
          a.dropped_by_limit + b.dropped_by_limit, a.delivered + b.delivered};
}

}  // namespace swemu
