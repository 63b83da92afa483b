#include "pipeline/core/independent_runs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace swemu {
namespace {

TEST(IndependentRunsTest, OneThreadRunsThemInIndexOrderOnTheCallersThread) {
  std::vector<std::size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  bool elsewhere = false;
  EXPECT_EQ(RunIndependent(1, 5, [&](std::size_t i) {
              order.push_back(i);
              elsewhere |= std::this_thread::get_id() != caller;
              return true;
            }),
            5u);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(elsewhere);
}

TEST(IndependentRunsTest, EveryRunRunsExactlyOnceWhateverTheThreads) {
  for (unsigned threads : {2u, 4u, 64u}) {
    std::vector<std::atomic<int>> calls(100);
    EXPECT_EQ(RunIndependent(threads, calls.size(), [&](std::size_t i) {
                calls[i].fetch_add(1);
                return true;
              }),
              calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << i;
  }
  EXPECT_EQ(RunIndependent(4, 0, [](std::size_t) { return true; }), 0u);
}

// Runs 0 and 1 each wait for the other to have started: they finish only if both run at once
// (a wait bounded at 20 s, so a sequential helper fails the test instead of hanging it).
TEST(IndependentRunsTest, TwoThreadsRunTwoRunsAtOnce) {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::atomic<int> met{0};
  RunIndependent(2, 2, [&](std::size_t) {
    std::unique_lock<std::mutex> lock(mu);
    ++started;
    cv.notify_all();
    if (cv.wait_for(lock, std::chrono::seconds(20), [&] { return started == 2; })) met++;
    return true;
  });
  EXPECT_EQ(met.load(), 2);
}

TEST(IndependentRunsTest, AFailureStopsTheLaterRunsAndRunsEveryEarlierOne) {
  std::vector<std::atomic<int>> calls(10);
  auto run = [&](std::size_t i) {
    calls[i].fetch_add(1);
    return i != 4;
  };
  EXPECT_EQ(RunIndependent(1, calls.size(), run), 5u);
  for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), i <= 4 ? 1 : 0) << i;
  for (auto& c : calls) c = 0;
  // Two threads: at most the one run the other thread took meanwhile starts after run 4.
  const std::size_t started = RunIndependent(2, calls.size(), run);
  EXPECT_GE(started, 5u);
  EXPECT_LE(started, 6u);
  for (std::size_t i = 0; i <= 4; ++i) EXPECT_EQ(calls[i].load(), 1) << i;
}

TEST(IndependentRunsTest, ThreadCpuSecondsCountsThisThreadOnly) {
  const double before = ThreadCpuSeconds();
  double spun = 0;
  std::thread other([&] {
    const double t0 = ThreadCpuSeconds();
    while (ThreadCpuSeconds() - t0 < 0.2) {
    }
    spun = ThreadCpuSeconds() - t0;
  });
  other.join();
  EXPECT_GE(spun, 0.2);
  EXPECT_LT(ThreadCpuSeconds() - before, 0.1);
}

}  // namespace
}  // namespace swemu
