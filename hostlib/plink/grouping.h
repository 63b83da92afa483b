#pragma once
// ProbeEmbed's grouping for 2LHA (section 4.1.3): k = round(sqrt(n)) groups (Eq. (2)'s minimum
// of n/k + k), made by constrained k-means (Bradley et al.: every group at least a minimum size,
// the assignment step a min-cost flow) with k-means++ seeding, over the embedded coordinates.
// The balance elasticity e in [1, 2] sets the minimum size to floor(min(n / k, sqrt(n) / e)):
// 1 is perfect balance (sqrt(n) each when n is a square), 2 lets a group shrink to sqrt(n) / 2.
// Several runs (seeds) are made "at once" and the one whose group sizes vary least is kept,
// ties broken at random (seeded), as the paper does. Balanced Random, its baseline: sqrt(n)
// groups of sizes differing by at most one, members drawn uniformly at random.
#include <cstdint>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct Grouping {
  uint32_t k = 0;
  std::vector<uint32_t> group_of;  // per node, 0 .. k-1
  std::vector<uint32_t> Sizes() const;
};

// round(sqrt(n)), at least 1.
uint32_t GroupCount(uint32_t n);

struct GroupingOptions {
  double elasticity = 1.0;  // [1, 2]
  uint32_t runs = 10;       // k-means runs to choose from
  uint32_t max_iterations = 100;
  uint64_t seed = 1;
};

// points: n x dims, row-major. Errors: no points, a ragged array, elasticity outside [1, 2].
Result<Grouping> ConstrainedKMeans(const std::vector<double>& points, uint32_t dims,
                                   const GroupingOptions& options);

Grouping BalancedRandom(uint32_t n, uint64_t seed);

// Adjusted mutual information of two labelings (Vinh et al. 2010; arithmetic-mean
// normalisation, as scikit-learn's default): 1 for identical partitions, about 0 for
// independent ones. Two single-cluster labelings score 1. Labels need not be contiguous.
double AdjustedMutualInformation(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace swemu
