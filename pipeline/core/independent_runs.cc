#include "pipeline/core/independent_runs.h"

#include <time.h>

#include <atomic>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace swemu {

std::size_t RunIndependent(unsigned threads, std::size_t count,
                           const std::function<bool(std::size_t)>& run) {
  std::atomic<std::size_t> next;
  std::atomic<std::size_t> first_failed{count};
  std::atomic<std::size_t> started{0};
  std::atomic<std::size_t> workers_done{0};
  // The caller's writes before, and the runs' writes after, are ordered by these atomics alone
  // (a release here, acquire-release at each worker's end, an acquire below), not only by the
  // arena's internals, which a thread sanitizer that does not see into libtbb cannot check.
  next.store(0, std::memory_order_release);
  // Each worker takes the next index until none is left or a run before it failed.
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count || i > first_failed.load()) {
        workers_done.fetch_add(1, std::memory_order_acq_rel);
        return;
      }
      started.fetch_add(1);
      if (run(i)) continue;
      std::size_t seen = first_failed.load();
      while (i < seen && !first_failed.compare_exchange_weak(seen, i)) {
      }
    }
  };
  const std::size_t width = threads < count ? threads : count;
  if (width <= 1) {
    worker();
    return started.load();
  }
  // As many threads as asked, also beyond the cores (TBB's own limit is the cores).
  tbb::global_control allowed(tbb::global_control::max_allowed_parallelism, width);
  tbb::task_arena arena(static_cast<int>(width));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, width, [&](std::size_t) { worker(); });
  });
  (void)workers_done.load(std::memory_order_acquire);
  return started.load();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace swemu
