// GOAT's planner at the size the issue names: 100 sub-models x 20 switches x 64 workers (a
// leaf-spine of 10 spines and 10 leaves, every switch programmable, 65 servers: 64 workers and
// the PS), memory tight enough that the LP is fractional. The LP with worker classes (workers
// under one leaf are one class) against the full LP, and KRGS's rounding.
//   build/bench/hostlib_goat_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include "hostlib/goat/gina.h"
#include "hostlib/goat/gina_lp.h"
#include "hostlib/goat/krgs.h"

namespace swemu {
namespace {

const GinaProblem& Problem() {
  static const GinaProblem problem = [] {
    std::vector<std::string> all;
    for (int i = 0; i < 10; ++i) {
      all.push_back("spine" + std::to_string(i));
      all.push_back("leaf" + std::to_string(i));
    }
    // AlexNet's 221 MB in 100 sub-models (8,633 slots each); 30,000 slots (7.3 MB) per switch.
    Result<GinaProblem> p = BuildGinaProblem(LeafSpineGraph(10, 10, 65, all, 30'000),
                                             std::vector<uint64_t>(100, 8'633));
    if (!p.ok()) std::abort();
    return *p;
  }();
  return problem;
}

void BM_GinaLp(benchmark::State& state) {
  const bool classes = state.range(0) == 1;
  for (auto _ : state) {
    Result<GinaLpSolution> lp = SolveGinaLp(Problem(), classes);
    if (!lp.ok()) state.SkipWithError(lp.message().c_str());
    state.counters["columns"] = lp->columns;
    state.counters["rows"] = lp->rows;
    state.counters["classes"] = static_cast<double>(lp->classes.size());
  }
}
BENCHMARK(BM_GinaLp)->Arg(1)->Unit(benchmark::kMillisecond)->ArgName("classes");
BENCHMARK(BM_GinaLp)->Arg(0)->Unit(benchmark::kMillisecond)->ArgName("classes")->Iterations(1);

void BM_KrgsRounding(benchmark::State& state) {
  Result<GinaLpSolution> lp = SolveGinaLp(Problem(), true);
  if (!lp.ok()) std::abort();
  uint64_t seed = 1;
  for (auto _ : state) {
    Result<GinaPlan> plan = RoundKrgs(Problem(), *lp, seed++);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_KrgsRounding)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace swemu
