#pragma once
// Where nodes sit and how far apart they are: the ground truth PLink's ProbeEmbed tries to
// recover (section 4.1), and the PAIA metric that scores a recovery (section 5.5).
//
// A node's location is a tuple from the widest level to the host, the paper's (region,
// datacenter, cluster, row, rack, host); two nodes sharing a longer prefix are closer. The hop
// distance T(a, c) between two hosts is 2 x (levels below their common prefix), up to the
// common ancestor and down again.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

using NodeLocation = std::vector<uint32_t>;  // e.g. {region, dc, cluster, row, rack, host}

uint32_t CommonPrefix(const NodeLocation& a, const NodeLocation& b);
uint32_t HopDistance(const NodeLocation& a, const NodeLocation& b);

// A symmetric n x n matrix of distances, row-major; the diagonal is 0.
struct DistanceMatrix {
  uint32_t n = 0;
  std::vector<double> d;
  explicit DistanceMatrix(uint32_t size = 0) : n(size), d(std::size_t{size} * size, 0.0) {}
  double& at(uint32_t i, uint32_t j) { return d[std::size_t{i} * n + j]; }
  double at(uint32_t i, uint32_t j) const { return d[std::size_t{i} * n + j]; }
  // One line naming the problem: not square, asymmetric, negative, NaN, a non-zero diagonal.
  Status Validate() const;
};

struct PaiaScore {
  uint64_t triplets =
      0;  // comparable (a, b, c): a and b share prefixes of different lengths with c
  uint64_t agreeing = 0;  // M orders a and b as T does (a tie in M scores 0)
  double paia() const { return triplets == 0 ? 0.0 : static_cast<double>(agreeing) / triplets; }
};

// Section 5.5: over every observer c and unordered pair {a, b} of other nodes comparable to c,
// A(a, b, c) = 1 when M(a, c) and M(b, c) are ordered as T(a, c) and T(b, c) are. M is any
// measured distance (raw probes, or the embedding's). Locations and M must agree in size.
Result<PaiaScore> Paia(const std::vector<NodeLocation>& where, const DistanceMatrix& measured);

}  // namespace swemu
