#include "hostlib/goat/krgs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pipeline/engine/rng.h"

namespace swemu {

void GinaPlan::Derive(const GinaProblem& p) {
  const std::size_t G = p.submodels.size(), S = p.num_switches();
  fan_in.assign(G, std::vector<uint32_t>(S, 0));
  base.assign(G, std::vector<uint64_t>(S, 0));
  used.assign(S, 0);
  for (std::size_t g = 0; g < G; ++g) {
    for (int32_t n : node[g]) {
      if (n != kGinaPs) ++fan_in[g][n];
    }
    for (std::size_t s = 0; s < S; ++s) {
      if (fan_in[g][s] == 0) continue;
      base[g][s] = used[s];
      used[s] += p.submodels[g];
    }
  }
}

namespace {

// Traffic the workers of (g, s) save by aggregating at s instead of sending to the PS.
double Saving(const GinaProblem& p, const GinaPlan& plan, std::size_t g, std::size_t s) {
  double saving = -static_cast<double>(p.switch_to_ps[s]);
  for (uint32_t w = 0; w < p.num_workers(); ++w) {
    if (plan.node[g][w] == static_cast<int32_t>(s)) {
      saving += static_cast<double>(p.worker_to_ps[w]) - p.worker_to_switch[w][s];
    }
  }
  return saving * static_cast<double>(p.submodels[g]);
}

// Sends to the PS, while switch s is over its memory, the sub-model saving least per slot.
uint32_t Repair(const GinaProblem& p, GinaPlan& plan) {
  uint32_t demoted = 0;
  plan.Derive(p);
  for (std::size_t s = 0; s < p.num_switches(); ++s) {
    while (plan.used[s] > p.memory[s]) {
      std::size_t worst = p.submodels.size();
      double worst_rate = 0;
      for (std::size_t g = 0; g < p.submodels.size(); ++g) {
        if (plan.fan_in[g][s] == 0) continue;
        const double rate = Saving(p, plan, g, s) / static_cast<double>(p.submodels[g]);
        if (worst == p.submodels.size() || rate < worst_rate) {
          worst = g;
          worst_rate = rate;
        }
      }
      for (int32_t& n : plan.node[worst]) {
        if (n == static_cast<int32_t>(s)) n = kGinaPs;
      }
      ++demoted;
      plan.Derive(p);
    }
  }
  return demoted;
}

}  // namespace

Result<GinaPlan> RoundKrgs(const GinaProblem& p, const GinaLpSolution& lp, uint64_t seed,
                           KrgsStats* stats) {
  SWEMU_RETURN_IF_ERROR(p.Validate());
  const std::size_t G = p.submodels.size(), S = p.num_switches(), W = p.num_workers();
  if (lp.x.size() != G || lp.class_of.size() != W) {
    return Status::Error("KRGS: the LP solution is of another problem");
  }
  KrgsStats local;
  KrgsStats& st = stats != nullptr ? *stats : local;
  st = KrgsStats{};
  st.min_bin_sum = std::numeric_limits<double>::infinity();
  SplitMix64 rng(seed);
  GinaPlan plan;
  plan.node.assign(G, std::vector<int32_t>(W, kGinaPs));
  for (std::size_t g = 0; g < G; ++g) {
    // Step 2: k(g) bins of x by LPT, one switch drawn from each.
    const double total = std::accumulate(lp.x[g].begin(), lp.x[g].end(), 0.0);
    const auto k = static_cast<std::size_t>(std::floor(total + 1e-9));
    if (k == 0) continue;  // the whole sub-model at the PS
    std::vector<std::size_t> order;
    for (std::size_t s = 0; s < S; ++s) {
      if (lp.x[g][s] > 0) order.push_back(s);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return lp.x[g][a] > lp.x[g][b]; });
    std::vector<std::vector<std::size_t>> bins(k);
    std::vector<double> sums(k, 0);
    for (std::size_t s : order) {
      const std::size_t a = static_cast<std::size_t>(std::min_element(sums.begin(), sums.end()) - sums.begin());
      bins[a].push_back(s);
      sums[a] += lp.x[g][s];
    }
    std::vector<std::size_t> chosen;
    for (std::size_t a = 0; a < k; ++a) {
      ++st.bins;
      st.min_bin_sum = std::min(st.min_bin_sum, sums[a]);
      if (sums[a] <= 0.5) ++st.bins_at_most_half;
      double r = rng.NextUnit() * sums[a];
      std::size_t pick = bins[a].back();
      for (std::size_t s : bins[a]) {
        if (r < lp.x[g][s]) {
          pick = s;
          break;
        }
        r -= lp.x[g][s];
      }
      chosen.push_back(pick);
    }
    // Step 3: each worker's node among S(g) and the PS.
    for (uint32_t w = 0; w < W; ++w) {
      std::vector<double> prob;
      double sum = 0;
      for (std::size_t s : chosen) {
        prob.push_back(lp.Y(g, w, s) / lp.x[g][s]);
        sum += prob.back();
      }
      if (sum > 1 + 1e-9) {
        ++st.normalised;
        for (double& q : prob) q /= sum;
        sum = 1;
      }
      double r = rng.NextUnit();
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (r < prob[i]) {
          plan.node[g][w] = static_cast<int32_t>(chosen[i]);
          break;
        }
        r -= prob[i];
      }
    }
  }
  if (st.bins == 0) st.min_bin_sum = 0;
  plan.Derive(p);
  st.used_before_repair = plan.used;
  for (std::size_t s = 0; s < S; ++s) {
    if (p.memory[s] == 0) continue;
    const double ratio = static_cast<double>(plan.used[s]) / static_cast<double>(p.memory[s]);
    st.max_overuse = std::max(st.max_overuse, ratio);
    if (plan.used[s] > p.memory[s]) ++st.switches_over_before_repair;
  }
  st.demoted = Repair(p, plan);
  return plan;
}

GinaPlan TruncatedPlan(const GinaProblem& p, const GinaLpSolution& lp) {
  GinaPlan plan;
  plan.node.assign(p.submodels.size(), std::vector<int32_t>(p.num_workers(), kGinaPs));
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    for (uint32_t w = 0; w < p.num_workers(); ++w) {
      for (std::size_t s = 0; s < p.num_switches(); ++s) {
        // int(x) and int(y): only values of exactly 1 survive.
        if (static_cast<int>(lp.x[g][s]) == 1 && static_cast<int>(lp.Y(g, w, s)) == 1) {
          plan.node[g][w] = static_cast<int32_t>(s);
        }
      }
    }
  }
  plan.Derive(p);
  return plan;
}

double GinaPlanEq1(const GinaProblem& p, const GinaPlan& plan) {
  double cost = 0;
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    double hops = 0;
    for (uint32_t w = 0; w < p.num_workers(); ++w) {
      const int32_t n = plan.node[g][w];
      hops += n == kGinaPs ? p.worker_to_ps[w] : p.worker_to_switch[w][n];
    }
    for (std::size_t s = 0; s < p.num_switches(); ++s) {
      if (plan.fan_in[g][s] > 0) hops += p.switch_to_ps[s];
    }
    cost += hops * static_cast<double>(p.submodels[g]);
  }
  return cost;
}

double GinaPlanEq4(const GinaProblem& p, const GinaPlan& plan) {
  double saving = 0;
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    for (std::size_t s = 0; s < p.num_switches(); ++s) {
      if (plan.fan_in[g][s] == 0) continue;
      saving += (static_cast<double>(plan.fan_in[g][s]) - 1) * p.switch_to_ps[s] *
                static_cast<double>(p.submodels[g]);
    }
  }
  return saving;
}

uint64_t GinaPlanPsSlots(const GinaProblem& p, const GinaPlan& plan) {
  uint64_t slots = 0;
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    uint64_t messages = 0;
    for (int32_t n : plan.node[g]) messages += n == kGinaPs;
    for (std::size_t s = 0; s < p.num_switches(); ++s) messages += plan.fan_in[g][s] > 0;
    slots += messages * p.submodels[g];
  }
  return slots;
}

}  // namespace swemu
