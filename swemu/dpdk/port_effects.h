#pragma once
// What the wire does to a port's frames after the TM, for experiments: seeded random loss and a
// constant added delay. Loss draws from a per-port SplitMix64 seeded from [switch] seed, so a
// given seed loses the same positions in each port's frame sequence. The delay is a FIFO of
// mbufs with their release times (a constant delay keeps frames in order), a fixed ring
// allocated at start; the lcore owns all of it, so nothing is atomic. The PRNG is the offline
// engine's SplitMix64 (pipeline/engine/rng.h).
#include <cstdint>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/engine/rng.h"

struct rte_mbuf;  // only stored here; no DPDK header, so tests can use this class

namespace swemu {

class PortEffects {
 public:
  static constexpr uint32_t kMinDelayFrames = 1024;
  static constexpr uint32_t kMaxDelayFrames = 1u << 20;
  // Frames the delay line of a port must hold: everything the port can send in `delay_ns` at
  // `rate_bps` in minimum-size frames (64 + wire overhead), twice over, at least
  // kMinDelayFrames (room for set_port_delay at run time), at most `mbufs` (it cannot hold more
  // frames than exist); rounded up to a power of two. rate 0 (unshaped): `mbufs`.
  static uint32_t DelayLineFrames(uint64_t delay_ns, uint64_t rate_bps, uint32_t overhead_bytes,
                                  uint32_t mbufs);

  PortEffects() = default;
  // Slow path: seeds the loss stream of `port` and allocates a delay line of `frames` (0: none).
  void Init(uint64_t seed, PortId port, uint32_t frames);

  void SetLoss(double probability) noexcept;
  void SetDelay(uint64_t delay_ns, uint64_t delay_cycles) noexcept {
    delay_ns_ = delay_ns;
    delay_cycles_ = delay_cycles;
  }
  double loss() const noexcept { return loss_; }
  uint64_t delay_ns() const noexcept { return delay_ns_; }
  uint32_t delay_line_frames() const noexcept { return static_cast<uint32_t>(slots_.size()); }

  bool lossy() const noexcept { return loss_threshold_ != 0; }
  // One draw: is the next frame lost?
  bool Lose() noexcept { return loss_threshold_ == UINT64_MAX || rng_.Next() < loss_threshold_; }
  // Frames must go through the delay line (also while it drains after the delay was set to 0,
  // so no frame overtakes an older one).
  bool delaying() const noexcept { return delay_cycles_ != 0 || head_ != tail_; }
  uint32_t held() const noexcept { return static_cast<uint32_t>(tail_ - head_); }
  // False when the line is full (the caller drops the frame).
  bool Hold(rte_mbuf* m, uint64_t now_tsc) noexcept {
    if (tail_ - head_ == slots_.size()) return false;
    slots_[tail_ & mask_] = {m, now_tsc + delay_cycles_};
    ++tail_;
    return true;
  }
  // Up to `max` frames whose time has come, oldest first; they leave the line.
  uint16_t Release(uint64_t now_tsc, rte_mbuf** out, uint16_t max) noexcept {
    uint16_t n = 0;
    while (n < max && head_ != tail_ && slots_[head_ & mask_].release_tsc <= now_tsc) {
      out[n++] = slots_[head_ & mask_].mbuf;
      ++head_;
    }
    return n;
  }
  // Shutdown: frees what is still held; how many.
  uint32_t FreeHeld() noexcept;

 private:
  struct Slot {
    rte_mbuf* mbuf;
    uint64_t release_tsc;
  };
  SplitMix64 rng_;
  double loss_ = 0;
  uint64_t loss_threshold_ = 0;  // lose when a draw is below it; UINT64_MAX: lose every frame
  uint64_t delay_ns_ = 0;
  uint64_t delay_cycles_ = 0;
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  uint64_t head_ = 0;  // next to release
  uint64_t tail_ = 0;  // next free
};

}  // namespace swemu
