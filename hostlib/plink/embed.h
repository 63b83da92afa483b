#pragma once
// ProbeEmbed's denoising (section 4.1.2): coordinates v_i in a Euclidean space of `dims`
// dimensions, and optional non-negative per-node startup costs h_i, that minimise Eq. (1)
//   sum_{i<j} ( ||v_i - v_j||^alpha + 1_h (h_i + h_j) - p_ij )^2
// with Adam. alpha in [1, 2]: 1 fits the probed distances as they are, 2 "compacts" the long
// ones (the paper's default, more consistent clusters). The probes are scaled to a mean of 1
// before fitting (so one learning rate suits any unit) and the result back.
#include <cstdint>
#include <vector>

#include "hostlib/plink/locality.h"

namespace swemu {

struct EmbedOptions {
  // The paper leaves it open ("a lower number strengthens this effect"); 3 fitted swemu's
  // three-tier emulated datacenters better than 2 (docs/papers.md, "PLink").
  uint32_t dims = 3;
  double alpha = 2.0;
  bool startup_cost = false;  // fit h_i (Eq. (1)'s 1_h)
  uint32_t iterations = 3000;
  double learning_rate = 0.05;
  uint64_t seed = 1;
};

struct Embedding {
  uint32_t dims = 0;
  std::vector<double> coords;  // n x dims, row-major, in the scaled unit
  std::vector<double> h;       // n, scaled unit; 0 unless startup_cost
  double alpha = 2.0;
  double scale = 1.0;  // the probes' mean: scaled unit -> probe unit
  double loss = 0;     // Eq. (1) at the end, in the scaled unit
  // The model's distance between i and j (||v_i - v_j||^alpha + h_i + h_j), in the probes' unit:
  // what PAIA and the grouping use as M.
  DistanceMatrix Distances() const;
  std::vector<double> Point(uint32_t i) const;
};

// Errors: an invalid matrix, fewer than 2 nodes, alpha outside [1, 2], dims 0, all probes 0.
Result<Embedding> EmbedProbes(const DistanceMatrix& probes, const EmbedOptions& options);

}  // namespace swemu
