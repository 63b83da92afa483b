#pragma once
// KRGS (Algorithm 1, steps 2 and 3): rounds GINA's fractional LP solution (gina_lp.h) to a plan.
//   Step 2, per sub-model g: k(g) = floor(sum_s x(s,g)) bins (k = 0: the whole sub-model goes to
//   the PS); the switches' x(s,g) go into the k bins by LPT (largest first into the bin with
//   the least sum: a min-max heuristic, as the exact partition is NP-hard); from each bin one
//   switch s with probability x(s,g) / S_a. Lemma 3 needs S_a > 0.5: checked and counted.
//   Step 3, per worker w and sub-model g: switch s of S(g) with probability y(s,w,g) / x(s,g),
//   the PS with the rest; where these sum past 1 (the paper's Theorem 2 does not rule it out)
//   they are normalised over S(g) and the PS gets none.
//   Repair (the paper bounds memory only in expectation): while a switch's sub-models exceed
//   B(s), the one saving the least traffic per slot is demoted to the PS (its workers send
//   there); each demotion is counted.
// Seeded: the same problem, solution and seed give the same plan.
#include <cstdint>
#include <vector>

#include "hostlib/goat/gina.h"
#include "hostlib/goat/gina_lp.h"

namespace swemu {

inline constexpr int32_t kGinaPs = -1;

struct GinaPlan {
  std::vector<std::vector<int32_t>> node;  // [g][w]: a switch index, or kGinaPs
  // Derived from node: workers aggregated per (g, s) (the fan-in a switch needs), and the memory
  // base of sub-model g on switch s (consecutive in g order; only where fan-in > 0).
  std::vector<std::vector<uint32_t>> fan_in;  // [g][s]
  std::vector<std::vector<uint64_t>> base;    // [g][s]
  std::vector<uint64_t> used;                 // [s]: slots
  void Derive(const GinaProblem& problem);
};

struct KrgsStats {
  uint32_t bins = 0;
  double min_bin_sum = 0;  // the least S_a over all bins (Lemma 3 wants > 0.5)
  uint32_t bins_at_most_half = 0;
  uint32_t normalised = 0;                   // worker draws whose y / x summed past 1
  std::vector<uint64_t> used_before_repair;  // [s]: slots
  uint32_t switches_over_before_repair = 0;
  double max_overuse = 0;  // the largest used / B(s) before repair
  uint32_t demoted = 0;    // (sub-model, switch) pairs the repair sent to the PS
};

Result<GinaPlan> RoundKrgs(const GinaProblem& problem, const GinaLpSolution& lp, uint64_t seed,
                           KrgsStats* stats = nullptr);

// What the authors' public code does instead (LINA.py): every LP value truncated to an integer
// before rounding, so a fractional x or y becomes 0 and its workers go to the PS. Kept to show
// the difference (tests, docs/papers.md); not used for plans.
GinaPlan TruncatedPlan(const GinaProblem& problem, const GinaLpSolution& lp);

// Eq. 1's traffic of a plan (slot-hops) and Eq. 4's saving for it.
double GinaPlanEq1(const GinaProblem& problem, const GinaPlan& plan);
double GinaPlanEq4(const GinaProblem& problem, const GinaPlan& plan);
// Slots that reach the PS: each switch aggregate once per (g, s), every worker sending to the
// PS its sub-model (the paper's "PS aggregation traffic").
uint64_t GinaPlanPsSlots(const GinaProblem& problem, const GinaPlan& plan);

}  // namespace swemu
