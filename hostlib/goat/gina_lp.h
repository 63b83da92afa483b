#pragma once
// KRGS's step 1 (Algorithm 1): GINA's LP relaxation (hostlib/goat/gina.h, Eq. 1 with x and y in
// [0, 1]) solved with COIN-OR Clp (primal simplex). Workers of one class (same distances) share
// one set of y: symmetric workers are interchangeable, so averaging any optimum over a class is
// feasible and as good, and the LP shrinks from |G| x |W| x (|S| + 1) to
// |G| x classes x (|S| + 1) y variables. Eq. 4's traffic saving is reported beside Eq. 1, not
// optimised (docs/papers.md, "GOAT": the two are not equivalent).
#include <cstdint>
#include <vector>

#include "hostlib/goat/gina.h"
#include "pipeline/core/status.h"

namespace swemu {

struct GinaLpSolution {
  std::vector<WorkerClass> classes;                 // one per worker when solved without classes
  std::vector<std::vector<double>> x;               // [g][s]
  std::vector<std::vector<std::vector<double>>> y;  // [g][class][s], s = |S| the PS
  double eq1 = 0;                                   // the objective: slot-hops
  double eq4 = 0;  // the traffic Eq. 4 says in-network aggregation saves, at this solution
  int columns = 0, rows = 0;
  double seconds = 0;  // Clp's solve
  // y for worker w (its class's).
  double Y(std::size_t g, uint32_t w, std::size_t s) const { return y[g][class_of[w]][s]; }
  std::vector<uint32_t> class_of;  // [w]
};

Result<GinaLpSolution> SolveGinaLp(const GinaProblem& problem, bool use_classes = true);

// Eq. 4's objective for any x and y (fractional or 0/1): sum_g sum_{s in S} (sum_w y(s,w,g) -
// x(s,g)) D_s(PS) b(g), y given per class.
double GinaEq4(const GinaProblem& problem, const GinaLpSolution& solution);

}  // namespace swemu
