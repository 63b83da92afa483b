#include "hostlib/workload/synthetic_gradients.h"

#include <cmath>

#include "pipeline/core/hash.h"

namespace swemu {

void FillGradients(const GradientSource& source, uint32_t worker, uint32_t iteration,
                   uint32_t layer, std::span<float> out) {
  uint64_t state = HashPair(HashPair(source.seed, worker), (uint64_t{iteration} << 32) | layer);
  // Box-Muller on splitmix64 draws: two normals per pair of uniforms.
  auto uniform = [&state] {
    state += 0x9e3779b97f4a7c15ULL;
    return (static_cast<double>(Mix64(state) >> 11) + 0.5) * 0x1.0p-53;  // (0, 1)
  };
  constexpr double kTwoPi = 6.283185307179586;
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform())) * source.stddev;
    const double theta = kTwoPi * uniform();
    out[i] = static_cast<float>(r * std::cos(theta));
    if (i + 1 < out.size()) out[i + 1] = static_cast<float>(r * std::sin(theta));
  }
}

}  // namespace swemu
