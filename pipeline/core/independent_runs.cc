#include "pipeline/core/independent_runs.h"

#include <time.h>

#include <atomic>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace swemu {

struct ThreadArena::Impl {
  explicit Impl(unsigned threads)
      : allowed(tbb::global_control::max_allowed_parallelism, threads),
        arena(static_cast<int>(threads)) {}
  tbb::global_control allowed;
  tbb::task_arena arena;
};

ThreadArena::ThreadArena(unsigned threads)
    : impl_(std::make_unique<Impl>(threads < 1 ? 1 : threads)) {}

ThreadArena::~ThreadArena() = default;

// What the caller wrote before and what the bodies wrote are ordered by these two atomics (a
// release before, an acquire in each body, an acquire-release at each body's end, an acquire
// after), not only by the arena's internals, which a thread sanitizer that does not see into
// libtbb cannot check.
void ThreadArena::ForEach(std::size_t count, const std::function<void(std::size_t)>& body) {
  std::atomic<bool> go;
  std::atomic<std::size_t> done{0};
  go.store(true, std::memory_order_release);
  impl_->arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
      (void)go.load(std::memory_order_acquire);
      body(i);
      done.fetch_add(1, std::memory_order_acq_rel);
    });
  });
  (void)done.load(std::memory_order_acquire);
}

std::size_t RunIndependent(unsigned threads, std::size_t count,
                           const std::function<bool(std::size_t)>& run) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failed{count};
  std::atomic<std::size_t> started{0};
  // Each worker takes the next index until none is left or a run before it failed.
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count || i > first_failed.load()) return;
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
  ThreadArena(static_cast<unsigned>(width)).ForEach(width, [&](std::size_t) { worker(); });
  return started.load();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace swemu
