#include "swemu/dpdk/port_effects.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>

namespace swemu {

uint32_t PortEffects::DelayLineFrames(uint64_t delay_ns, uint64_t rate_bps, uint32_t overhead_bytes,
                                      uint32_t mbufs) {
  uint64_t frames = mbufs;
  if (rate_bps != 0) {
    const uint64_t bits_per_frame = (64 + uint64_t{overhead_bytes}) * 8;
    // delay_ns * rate_bps may overflow: work in double, then clamp.
    const double in_flight = double(delay_ns) * 1e-9 * double(rate_bps) / double(bits_per_frame);
    frames = static_cast<uint64_t>(std::min(2 * in_flight + 1, double(kMaxDelayFrames)));
    frames = std::min<uint64_t>(std::max<uint64_t>(frames, kMinDelayFrames), mbufs);
  }
  frames = std::clamp<uint64_t>(frames, 1, kMaxDelayFrames);
  return static_cast<uint32_t>(std::bit_ceil(frames));
}

void PortEffects::Init(uint64_t seed, PortId port, uint32_t frames) {
  // Mix the port in through one SplitMix64 step, so neighbouring ports' streams are unrelated.
  rng_ = SplitMix64(SplitMix64(seed ^ (uint64_t{port} << 32)).Next());
  slots_.assign(frames, Slot{nullptr, 0});
  mask_ = frames == 0 ? 0 : frames - 1;
  head_ = tail_ = 0;
}

void PortEffects::SetLoss(double probability) noexcept {
  loss_ = probability;
  constexpr double kTwoTo64 = 18446744073709551616.0;
  const double threshold = probability * kTwoTo64;
  if (!(probability > 0)) {
    loss_threshold_ = 0;
  } else if (threshold >= kTwoTo64) {
    loss_threshold_ = UINT64_MAX;
  } else {
    loss_threshold_ = std::max<uint64_t>(static_cast<uint64_t>(threshold), 1);
  }
}

uint32_t PortEffects::FreeHeld() noexcept {
  const uint32_t n = held();
  for (; head_ != tail_; ++head_) rte_pktmbuf_free(slots_[head_ & mask_].mbuf);
  return n;
}

}  // namespace swemu
