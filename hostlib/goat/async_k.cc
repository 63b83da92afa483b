#include "hostlib/goat/async_k.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace swemu {

double GoatPsi(double k, double noise) {
  if (k <= noise) return std::numeric_limits<double>::infinity();
  const double ratio = k / (k - noise);
  return ratio * ratio;
}

Result<KSearchResult> ChooseK(const std::vector<double>& p, const KSearchOptions& o) {
  const std::size_t n = p.size();
  if (n == 0) return Status::Error("K search: no workers");
  for (double v : p) {
    if (!std::isfinite(v) || v < 0) return Status::Error("K search: intervals must be finite and >= 0");
  }
  if (!(o.noise >= 0) || o.noise >= static_cast<double>(n)) {
    return Status::Error("K search: noise r = sigma^2/eps must be in [0, " + std::to_string(n) +
                         "): no K converges otherwise");
  }
  const uint32_t rounds = o.rounds != 0 ? o.rounds : static_cast<uint32_t>(n);
  KSearchResult r;
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> sorted(n);
  for (uint32_t k = 1; k <= n; ++k) {
    std::vector<double> est = p;
    double sum_h = 0;
    for (uint32_t m = 0; m < rounds; ++m) {
      sorted = est;
      std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end());
      const double h = sorted[k - 1];
      sum_h += h;
      for (std::size_t w = 0; w < n; ++w) est[w] = est[w] > h ? est[w] - h : p[w];
    }
    const double mean = sum_h / rounds;
    const double epochs = GoatPsi(k, o.noise);
    r.mean_epoch.push_back(mean);
    r.epochs.push_back(epochs);
    r.total.push_back(epochs * mean);
    if (r.total.back() < best) {  // the smallest K wins a tie
      best = r.total.back();
      r.k = k;
    }
  }
  if (r.k == 0) r.k = static_cast<uint32_t>(n);  // every total infinite or NaN: wait for all
  return r;
}

std::vector<uint32_t> FastestWorkers(const std::vector<double>& intervals, uint32_t k) {
  std::vector<uint32_t> order(intervals.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return intervals[a] < intervals[b]; });
  order.resize(std::min<std::size_t>(k, order.size()));
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<std::vector<uint32_t>> AsyncFanIn(const GinaPlan& plan,
                                              const std::vector<uint32_t>& participants) {
  std::vector<std::vector<uint32_t>> k(plan.fan_in.size());
  for (std::size_t g = 0; g < plan.fan_in.size(); ++g) {
    k[g].assign(plan.fan_in[g].size(), 0);
    for (uint32_t w : participants) {
      const int32_t n = w < plan.node[g].size() ? plan.node[g][w] : kGinaPs;
      if (n != kGinaPs) ++k[g][n];
    }
  }
  return k;
}

}  // namespace swemu
