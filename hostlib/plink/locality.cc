#include "hostlib/plink/locality.h"

#include <algorithm>
#include <cmath>

namespace swemu {

uint32_t CommonPrefix(const NodeLocation& a, const NodeLocation& b) {
  const std::size_t n = std::min(a.size(), b.size());
  uint32_t k = 0;
  while (k < n && a[k] == b[k]) ++k;
  return k;
}

uint32_t HopDistance(const NodeLocation& a, const NodeLocation& b) {
  const auto depth = static_cast<uint32_t>(std::max(a.size(), b.size()));
  return 2 * (depth - CommonPrefix(a, b));
}

Status DistanceMatrix::Validate() const {
  if (d.size() != std::size_t{n} * n) return Status::Error("distance matrix: not n x n");
  for (uint32_t i = 0; i < n; ++i) {
    if (at(i, i) != 0)
      return Status::Error("distance matrix: a non-zero diagonal at " + std::to_string(i));
    for (uint32_t j = 0; j < n; ++j) {
      const double v = at(i, j);
      if (!std::isfinite(v) || v < 0) {
        return Status::Error("distance matrix: entry " + std::to_string(i) + "," +
                             std::to_string(j) + " is not a finite distance >= 0");
      }
      if (v != at(j, i)) {
        return Status::Error("distance matrix: asymmetric at " + std::to_string(i) + "," +
                             std::to_string(j));
      }
    }
  }
  return Status::Ok();
}

Result<PaiaScore> Paia(const std::vector<NodeLocation>& where, const DistanceMatrix& measured) {
  if (where.size() != measured.n) {
    return Status::Error("PAIA: " + std::to_string(where.size()) + " locations for a " +
                         std::to_string(measured.n) + "-node distance matrix");
  }
  SWEMU_RETURN_IF_ERROR(measured.Validate());
  PaiaScore score;
  const auto n = static_cast<uint32_t>(where.size());
  for (uint32_t c = 0; c < n; ++c) {
    for (uint32_t a = 0; a < n; ++a) {
      if (a == c) continue;
      const uint32_t pa = CommonPrefix(where[a], where[c]);
      for (uint32_t b = a + 1; b < n; ++b) {
        if (b == c) continue;
        const uint32_t pb = CommonPrefix(where[b], where[c]);
        if (pa == pb) continue;  // not comparable
        ++score.triplets;
        // A longer common prefix is the nearer node (fewer hops).
        const double ma = measured.at(a, c), mb = measured.at(b, c);
        if ((pa > pb && ma < mb) || (pa < pb && ma > mb)) ++score.agreeing;
      }
    }
  }
  return score;
}

}  // namespace swemu
