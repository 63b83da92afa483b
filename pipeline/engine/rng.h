#pragma once
// The engine's only source of randomness: splitmix64, seeded explicitly, so a run with the same
// seed draws the same numbers on every machine.
#include <cstdint>

#include "pipeline/core/hash.h"

namespace swemu {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}

  uint64_t Next() noexcept {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  // Uniform in [0, 1) with 53 random bits.
  double NextUnit() noexcept { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // True with probability p; draws nothing when p <= 0 so loss-free links leave the stream alone.
  bool Bernoulli(double p) noexcept { return p > 0 && NextUnit() < p; }

 private:
  uint64_t state_;
};

}  // namespace swemu
