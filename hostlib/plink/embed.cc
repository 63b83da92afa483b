#include "hostlib/plink/embed.h"

#include <cmath>

#include "pipeline/engine/rng.h"

namespace swemu {

DistanceMatrix Embedding::Distances() const {
  const auto n = static_cast<uint32_t>(h.size());
  DistanceMatrix m(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < i; ++j) {
      double sq = 0;
      for (uint32_t k = 0; k < dims; ++k) {
        const double diff = coords[i * dims + k] - coords[j * dims + k];
        sq += diff * diff;
      }
      const double v = (std::pow(std::sqrt(sq), alpha) + h[i] + h[j]) * scale;
      m.at(i, j) = m.at(j, i) = v;
    }
  }
  return m;
}

std::vector<double> Embedding::Point(uint32_t i) const {
  return std::vector<double>(coords.begin() + i * dims, coords.begin() + (i + 1) * dims);
}

Result<Embedding> EmbedProbes(const DistanceMatrix& probes, const EmbedOptions& o) {
  SWEMU_RETURN_IF_ERROR(probes.Validate());
  const uint32_t n = probes.n;
  if (n < 2) return Status::Error("embedding: needs at least 2 nodes");
  if (!(o.alpha >= 1 && o.alpha <= 2)) return Status::Error("embedding: alpha must be in [1, 2]");
  if (o.dims == 0) return Status::Error("embedding: dims must be at least 1");
  double mean = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < i; ++j) mean += probes.at(i, j);
  }
  mean /= n * (n - 1) / 2.0;
  if (mean <= 0) return Status::Error("embedding: every probed distance is 0");

  Embedding e;
  e.dims = o.dims;
  e.alpha = o.alpha;
  e.scale = mean;
  e.coords.resize(std::size_t{n} * o.dims);
  e.h.assign(n, 0.0);
  SplitMix64 rng(o.seed);
  for (double& c : e.coords) c = rng.NextUnit() - 0.5;
  // Adam over coords then h (one parameter vector).
  const std::size_t params = e.coords.size() + n;
  std::vector<double> grad(params), m1(params, 0.0), m2(params, 0.0);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double p1 = 1, p2 = 1;
  for (uint32_t it = 0; it < o.iterations; ++it) {
    std::fill(grad.begin(), grad.end(), 0.0);
    double loss = 0;
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j = 0; j < i; ++j) {
        double sq = 0;
        for (uint32_t k = 0; k < o.dims; ++k) {
          const double diff = e.coords[i * o.dims + k] - e.coords[j * o.dims + k];
          sq += diff * diff;
        }
        const double d = std::max(std::sqrt(sq), 1e-9);
        const double r = std::pow(d, o.alpha) + (o.startup_cost ? e.h[i] + e.h[j] : 0.0) -
                         probes.at(i, j) / mean;
        loss += r * r;
        // d(r^2)/dv_i = 2 r alpha d^(alpha - 2) (v_i - v_j)
        const double g = 2 * r * o.alpha * std::pow(d, o.alpha - 2);
        for (uint32_t k = 0; k < o.dims; ++k) {
          const double diff = e.coords[i * o.dims + k] - e.coords[j * o.dims + k];
          grad[i * o.dims + k] += g * diff;
          grad[j * o.dims + k] -= g * diff;
        }
        if (o.startup_cost) {
          grad[e.coords.size() + i] += 2 * r;
          grad[e.coords.size() + j] += 2 * r;
        }
      }
    }
    e.loss = loss;
    p1 *= b1;
    p2 *= b2;
    for (std::size_t q = 0; q < params; ++q) {
      m1[q] = b1 * m1[q] + (1 - b1) * grad[q];
      m2[q] = b2 * m2[q] + (1 - b2) * grad[q] * grad[q];
      const double step =
          o.learning_rate * (m1[q] / (1 - p1)) / (std::sqrt(m2[q] / (1 - p2)) + eps);
      if (q < e.coords.size()) {
        e.coords[q] -= step;
      } else {
        double& h = e.h[q - e.coords.size()];
        h = std::max(0.0, h - step);  // h_i >= 0 (projected)
      }
    }
  }
  return e;
}

}  // namespace swemu
