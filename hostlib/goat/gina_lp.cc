#include "hostlib/goat/gina_lp.h"

#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include <chrono>

namespace swemu {

double GinaEq4(const GinaProblem& p, const GinaLpSolution& sol) {
  double saving = 0;
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    for (std::size_t s = 0; s < p.num_switches(); ++s) {
      double sum_y = 0;
      for (std::size_t c = 0; c < sol.classes.size(); ++c) {
        sum_y += sol.y[g][c][s] * static_cast<double>(sol.classes[c].workers.size());
      }
      saving += (sum_y - sol.x[g][s]) * p.switch_to_ps[s] * static_cast<double>(p.submodels[g]);
    }
  }
  return saving;
}

Result<GinaLpSolution> SolveGinaLp(const GinaProblem& p, bool use_classes) {
  SWEMU_RETURN_IF_ERROR(p.Validate());
  GinaLpSolution sol;
  if (use_classes) {
    sol.classes = WorkerClasses(p);
  } else {
    for (uint32_t w = 0; w < p.num_workers(); ++w) sol.classes.push_back({{w}});
  }
  sol.class_of.assign(p.num_workers(), 0);
  for (uint32_t c = 0; c < sol.classes.size(); ++c) {
    for (uint32_t w : sol.classes[c].workers) sol.class_of[w] = c;
  }
  const int G = static_cast<int>(p.submodels.size());
  const int S = static_cast<int>(p.num_switches());
  const int C = static_cast<int>(sol.classes.size());
  auto xi = [&](int g, int s) { return g * S + s; };
  auto yi = [&](int g, int c, int s) { return G * S + (g * C + c) * (S + 1) + s; };
  const int columns = G * S + G * C * (S + 1);
  std::vector<double> obj(columns, 0), lo(columns, 0), hi(columns, 1);
  std::vector<int> rows_of, cols_of;
  std::vector<double> values, row_lo, row_hi;
  auto entry = [&](int row, int col, double v) {
    rows_of.push_back(row);
    cols_of.push_back(col);
    values.push_back(v);
  };
  for (int g = 0; g < G; ++g) {
    const double b = static_cast<double>(p.submodels[g]);
    for (int s = 0; s < S; ++s) obj[xi(g, s)] = b * p.switch_to_ps[s];
    for (int c = 0; c < C; ++c) {
      const uint32_t w = sol.classes[c].workers.front();
      const double n = static_cast<double>(sol.classes[c].workers.size());
      for (int s = 0; s < S; ++s) obj[yi(g, c, s)] = b * n * p.worker_to_switch[w][s];
      obj[yi(g, c, S)] = b * n * p.worker_to_ps[w];
      // Every worker's sub-model goes to exactly one node.
      const int row = static_cast<int>(row_lo.size());
      for (int s = 0; s <= S; ++s) entry(row, yi(g, c, s), 1);
      row_lo.push_back(1);
      row_hi.push_back(1);
      // Only to a switch that holds the sub-model: y - x <= 0.
      for (int s = 0; s < S; ++s) {
        const int r = static_cast<int>(row_lo.size());
        entry(r, yi(g, c, s), 1);
        entry(r, xi(g, s), -1);
        row_lo.push_back(-COIN_DBL_MAX);
        row_hi.push_back(0);
      }
    }
  }
  for (int s = 0; s < S; ++s) {  // memory
    const int r = static_cast<int>(row_lo.size());
    for (int g = 0; g < G; ++g) entry(r, xi(g, s), static_cast<double>(p.submodels[g]));
    row_lo.push_back(-COIN_DBL_MAX);
    row_hi.push_back(static_cast<double>(p.memory[s]));
  }
  const CoinPackedMatrix matrix(true, rows_of.data(), cols_of.data(), values.data(),
                                static_cast<CoinBigIndex>(values.size()));
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(matrix, lo.data(), hi.data(), obj.data(), row_lo.data(), row_hi.data());
  const auto t0 = std::chrono::steady_clock::now();
  model.primal();  // 1.4x faster than dual() on the 100 x 20 x 64 benchmark
  sol.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (model.status() != 0) {
    return Status::Error("GINA LP: Clp ended with status " + std::to_string(model.status()) +
                         " (1 infeasible, 2 unbounded, 3 stopped)");
  }
  const double* v = model.primalColumnSolution();
  auto clamp = [](double a) { return a < 1e-9 ? 0.0 : (a > 1 - 1e-9 ? 1.0 : a); };
  sol.x.assign(G, std::vector<double>(S, 0));
  sol.y.assign(G, std::vector<std::vector<double>>(C, std::vector<double>(S + 1, 0)));
  for (int g = 0; g < G; ++g) {
    for (int s = 0; s < S; ++s) sol.x[g][s] = clamp(v[xi(g, s)]);
    for (int c = 0; c < C; ++c) {
      for (int s = 0; s <= S; ++s) sol.y[g][c][s] = clamp(v[yi(g, c, s)]);
    }
  }
  sol.eq1 = model.objectiveValue();
  sol.eq4 = GinaEq4(p, sol);
  sol.columns = columns;
  sol.rows = static_cast<int>(row_lo.size());
  return sol;
}

}  // namespace swemu
