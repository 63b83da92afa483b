#pragma once
// Deterministic synthetic gradients: what a worker would push for one layer in one iteration.
// Values follow a normal distribution (mean 0, the given standard deviation), seeded by
// (seed, worker, iteration, layer) so every run and every transport sees the same numbers.
#include <cstdint>
#include <span>

namespace swemu {

struct GradientSource {
  uint64_t seed = 1;
  float stddev = 1e-2f;  // typical of SGD gradients of a conv layer
};

void FillGradients(const GradientSource& source, uint32_t worker, uint32_t iteration,
                   uint32_t layer, std::span<float> out);

}  // namespace swemu
