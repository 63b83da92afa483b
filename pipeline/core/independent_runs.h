#pragma once
// Independent runs (a simulation's schemes, seeds, a sweep's points) at once on up to N threads
// of an Intel TBB task arena, each run writing only its own result slot. The caller reads the
// slots in index order, so what it prints is the same whatever the number of threads; only the
// wall time changes.
#include <cstddef>
#include <functional>
#include <memory>

namespace swemu {

// Calls run(i) for every i in [0, count), each exactly once. Runs start in index order (the
// caller puts the longest first): with `threads` <= 1, one after another on this thread; else
// up to `threads` at once. run(i) returns false when it failed: as in a sequential loop that
// stops at its first failure, no run with a larger index starts after that, while every run
// before it does run (so the first failure in index order is the same with any threads).
// Returns the number of runs started.
std::size_t RunIndependent(unsigned threads, std::size_t count,
                           const std::function<bool(std::size_t)>& run);

// A TBB task arena of `threads` threads, also beyond the cores (TBB's own limit is the cores),
// kept for many rounds of work (the partitioned engine's windows).
class ThreadArena {
 public:
  explicit ThreadArena(unsigned threads);
  ~ThreadArena();
  ThreadArena(const ThreadArena&) = delete;
  ThreadArena& operator=(const ThreadArena&) = delete;
  // body(i) for every i in [0, count), at once on the arena's threads; returns when all are done.
  void ForEach(std::size_t count, const std::function<void(std::size_t)>& body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// CPU seconds this thread has used: a run's own CPU time when other runs share the process
// (std::clock() counts every thread's).
double ThreadCpuSeconds();

}  // namespace swemu
