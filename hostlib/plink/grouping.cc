#include "hostlib/plink/grouping.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "pipeline/engine/rng.h"

namespace swemu {
namespace {

double SquaredDistance(const double* a, const double* b, uint32_t dims) {
  double s = 0;
  for (uint32_t k = 0; k < dims; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return s;
}

// k-means++: the first center uniformly, each next with probability proportional to the squared
// distance to the nearest center so far.
std::vector<double> SeedCenters(const std::vector<double>& pts, uint32_t n, uint32_t dims,
                                uint32_t k, SplitMix64& rng) {
  std::vector<double> centers;
  const uint32_t first = static_cast<uint32_t>(rng.Next() % n);
  centers.insert(centers.end(), pts.begin() + first * dims, pts.begin() + (first + 1) * dims);
  std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
  for (uint32_t c = 1; c < k; ++c) {
    double total = 0;
    for (uint32_t i = 0; i < n; ++i) {
      nearest[i] =
          std::min(nearest[i], SquaredDistance(&pts[i * dims], &centers[(c - 1) * dims], dims));
      total += nearest[i];
    }
    uint32_t pick = static_cast<uint32_t>(rng.Next() % n);
    if (total > 0) {
      double r = rng.NextUnit() * total;
      for (uint32_t i = 0; i < n; ++i) {
        r -= nearest[i];
        if (r <= 0) {
          pick = i;
          break;
        }
      }
    }
    centers.insert(centers.end(), pts.begin() + pick * dims, pts.begin() + (pick + 1) * dims);
  }
  return centers;
}

// The assignment step with a minimum size per group: min-cost flow source -> point (1) ->
// group (cost: squared distance) -> sink, where each group's first min_size units are free and
// every further unit costs `big`: the cheapest flow of n units fills every group to min_size
// before any group takes more, and within that is the nearest assignment. All costs are >= 0,
// so successive shortest paths run Dijkstra with potentials (dense: a few dozen nodes).
std::vector<uint32_t> AssignWithMinimum(const std::vector<double>& pts, uint32_t n, uint32_t dims,
                                        const std::vector<double>& centers, uint32_t k,
                                        uint32_t min_size) {
  struct Edge {
    uint32_t to, rev;
    int32_t cap;
    double cost;
  };
  const uint32_t source = n + k, sink = n + k + 1, nodes = n + k + 2;
  std::vector<std::vector<Edge>> g(nodes);
  auto add = [&](uint32_t a, uint32_t b, int32_t cap, double cost) {
    g[a].push_back({b, static_cast<uint32_t>(g[b].size()), cap, cost});
    g[b].push_back({a, static_cast<uint32_t>(g[a].size() - 1), 0, -cost});
  };
  double far = 0;
  for (uint32_t i = 0; i < n; ++i) {
    add(source, i, 1, 0);
    for (uint32_t c = 0; c < k; ++c) {
      const double d = SquaredDistance(&pts[i * dims], &centers[c * dims], dims);
      far = std::max(far, d);
      add(i, n + c, 1, d);
    }
  }
  const double big = 1 + 2 * far * n;
  for (uint32_t c = 0; c < k; ++c) {
    add(n + c, sink, static_cast<int32_t>(min_size), 0);
    add(n + c, sink, static_cast<int32_t>(n), big);
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> potential(nodes, 0.0), dist(nodes);
  std::vector<std::pair<uint32_t, uint32_t>> prev(nodes);
  std::vector<bool> done(nodes);
  for (uint32_t unit = 0; unit < n; ++unit) {
    std::fill(dist.begin(), dist.end(), inf);
    std::fill(done.begin(), done.end(), false);
    dist[source] = 0;
    for (;;) {
      uint32_t u = UINT32_MAX;
      for (uint32_t v = 0; v < nodes; ++v) {
        if (!done[v] && dist[v] < inf && (u == UINT32_MAX || dist[v] < dist[u])) u = v;
      }
      if (u == UINT32_MAX) break;
      done[u] = true;
      for (uint32_t e = 0; e < g[u].size(); ++e) {
        const Edge& edge = g[u][e];
        if (edge.cap <= 0) continue;
        const double nd = dist[u] + edge.cost + potential[u] - potential[edge.to];
        if (nd < dist[edge.to] - 1e-12) {
          dist[edge.to] = nd;
          prev[edge.to] = {u, e};
        }
      }
    }
    if (dist[sink] == inf) break;
    for (uint32_t v = 0; v < nodes; ++v) {
      if (dist[v] < inf) potential[v] += dist[v];
    }
    for (uint32_t v = sink; v != source; v = prev[v].first) {
      Edge& edge = g[prev[v].first][prev[v].second];
      edge.cap -= 1;
      g[v][edge.rev].cap += 1;
    }
  }
  std::vector<uint32_t> group(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (const Edge& edge : g[i]) {
      if (edge.to >= n && edge.to < n + k && edge.cap == 0) group[i] = edge.to - n;
    }
  }
  return group;
}

Grouping OneRun(const std::vector<double>& pts, uint32_t n, uint32_t dims, uint32_t k,
                uint32_t min_size, uint32_t max_iterations, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> centers = SeedCenters(pts, n, dims, k, rng);
  Grouping g;
  g.k = k;
  for (uint32_t it = 0; it < max_iterations; ++it) {
    std::vector<uint32_t> assigned = AssignWithMinimum(pts, n, dims, centers, k, min_size);
    if (assigned == g.group_of) break;
    g.group_of = std::move(assigned);
    std::vector<double> sum(std::size_t{k} * dims, 0.0);
    std::vector<uint32_t> count(k, 0);
    for (uint32_t i = 0; i < n; ++i) {
      ++count[g.group_of[i]];
      for (uint32_t d = 0; d < dims; ++d) sum[g.group_of[i] * dims + d] += pts[i * dims + d];
    }
    for (uint32_t c = 0; c < k; ++c) {
      if (count[c] == 0) continue;
      for (uint32_t d = 0; d < dims; ++d) centers[c * dims + d] = sum[c * dims + d] / count[c];
    }
  }
  return g;
}

double SizeVariance(const Grouping& g) {
  const std::vector<uint32_t> sizes = g.Sizes();
  double mean = 0, var = 0;
  for (uint32_t s : sizes) mean += s;
  mean /= static_cast<double>(sizes.size());
  for (uint32_t s : sizes) var += (s - mean) * (s - mean);
  return var;
}

}  // namespace

std::vector<uint32_t> Grouping::Sizes() const {
  std::vector<uint32_t> sizes(k, 0);
  for (uint32_t g : group_of) ++sizes[g];
  return sizes;
}

uint32_t GroupCount(uint32_t n) {
  return std::max<uint32_t>(1,
                            static_cast<uint32_t>(std::lround(std::sqrt(static_cast<double>(n)))));
}

Result<Grouping> ConstrainedKMeans(const std::vector<double>& points, uint32_t dims,
                                   const GroupingOptions& o) {
  if (dims == 0 || points.empty() || points.size() % dims != 0) {
    return Status::Error("grouping: points must be n x dims with n >= 1");
  }
  if (!(o.elasticity >= 1 && o.elasticity <= 2)) {
    return Status::Error("grouping: balance elasticity must be in [1, 2]");
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i])) {
      return Status::Error("grouping: point " + std::to_string(i / dims) + " is not finite");
    }
  }
  const auto n = static_cast<uint32_t>(points.size() / dims);
  const uint32_t k = GroupCount(n);
  const auto min_size = static_cast<uint32_t>(std::floor(
      std::min(static_cast<double>(n) / k, std::sqrt(static_cast<double>(n)) / o.elasticity)));
  SplitMix64 rng(o.seed);
  std::vector<Grouping> runs;
  for (uint32_t r = 0; r < std::max<uint32_t>(o.runs, 1); ++r) {
    runs.push_back(OneRun(points, n, dims, k, min_size, o.max_iterations, rng.Next()));
  }
  double least = std::numeric_limits<double>::infinity();
  for (const Grouping& g : runs) least = std::min(least, SizeVariance(g));
  std::vector<const Grouping*> best;
  for (const Grouping& g : runs) {
    if (SizeVariance(g) <= least + 1e-12) best.push_back(&g);
  }
  return *best[rng.Next() % best.size()];
}

Grouping BalancedRandom(uint32_t n, uint64_t seed) {
  Grouping g;
  g.k = GroupCount(n);
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  SplitMix64 rng(seed);
  for (uint32_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Next() % i]);
  g.group_of.assign(n, 0);
  for (uint32_t p = 0; p < n; ++p) g.group_of[order[p]] = p % g.k;
  return g;
}

double AdjustedMutualInformation(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n == 0) return 1.0;
  std::map<uint32_t, uint32_t> ia, ib;
  for (std::size_t i = 0; i < n; ++i) {
    ia.emplace(a[i], static_cast<uint32_t>(ia.size()));
    ib.emplace(b[i], static_cast<uint32_t>(ib.size()));
  }
  const std::size_t ra = ia.size(), rb = ib.size();
  if (ra == 1 && rb == 1) return 1.0;
  std::vector<double> table(ra * rb, 0.0), sa(ra, 0.0), sb(rb, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t x = ia[a[i]], y = ib[b[i]];
    table[x * rb + y] += 1;
    sa[x] += 1;
    sb[y] += 1;
  }
  const double N = static_cast<double>(n);
  auto entropy = [N](const std::vector<double>& s) {
    double h = 0;
    for (double c : s) {
      if (c > 0) h -= c / N * std::log(c / N);
    }
    return h;
  };
  double mi = 0;
  for (std::size_t x = 0; x < ra; ++x) {
    for (std::size_t y = 0; y < rb; ++y) {
      const double c = table[x * rb + y];
      if (c > 0) mi += c / N * std::log(N * c / (sa[x] * sb[y]));
    }
  }
  // The expected mutual information under the hypergeometric model (Vinh et al., Eq. 24a).
  double emi = 0;
  const double lgN = std::lgamma(N + 1);
  for (double ai : sa) {
    for (double bj : sb) {
      const double lo = std::max(1.0, ai + bj - N), hi = std::min(ai, bj);
      for (double nij = lo; nij <= hi; nij += 1) {
        const double lp = std::lgamma(ai + 1) + std::lgamma(bj + 1) + std::lgamma(N - ai + 1) +
                          std::lgamma(N - bj + 1) - lgN - std::lgamma(nij + 1) -
                          std::lgamma(ai - nij + 1) - std::lgamma(bj - nij + 1) -
                          std::lgamma(N - ai - bj + nij + 1);
        emi += nij / N * std::log(N * nij / (ai * bj)) * std::exp(lp);
      }
    }
  }
  const double mean_h = (entropy(sa) + entropy(sb)) / 2;
  const double denom = mean_h - emi;
  if (std::abs(denom) < 1e-15) return mi - emi >= 0 ? 1.0 : 0.0;
  return (mi - emi) / denom;
}

}  // namespace swemu
