#pragma once
// A background thread that drives host endpoints in real time (a HostRunner or an EventLoop)
// while the Python thread that owns them submits work and reads their state. Endpoints are not
// thread-safe, so everything that touches them runs on this thread: the body's driver calls
// Service() after every round, which runs the tasks other threads queued (Post, Call) and then
// the tick (e.g. "did a call complete?"). State that other threads wait for is changed under
// mutex() and announced on cv() (Notify()).
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "pipeline/core/status.h"

namespace swemu::python {

class LoopThread {
 public:
  LoopThread() = default;
  ~LoopThread() { Stop(); }
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  // Runs body(*this) on a new thread. The body calls Service() after every round of its driver
  // and returns once Service() returns false; an error it returns is kept (exit_message()).
  void Start(std::function<Status(LoopThread&)> body, std::function<void()> tick = nullptr);
  // On the loop thread: runs the queued tasks, then the tick. False once Stop() was asked.
  bool Service();
  // Queues a task for the loop thread; false when it is not running (the task is dropped).
  bool Post(std::function<void()> task);
  // Runs task on the loop thread and waits until it ran. Error when the thread stopped first.
  Status Call(const std::function<void()>& task);
  // Asks the body to return and joins the thread; queued tasks are dropped. Idempotent.
  void Stop();

  bool running() const;
  // The same, for a caller that holds mutex() (a wait predicate).
  bool running_locked() const { return running_; }
  // Why the body returned by itself ("" while it runs or when Stop() ended it).
  std::string exit_message() const;

  std::mutex& mutex() { return mu_; }
  std::condition_variable& cv() { return cv_; }
  // notify_all on cv() under mutex(): after changing what waiters look at.
  void Notify();

 private:
  void Run(const std::function<Status(LoopThread&)>& body);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // under mu_
  bool running_ = false;                     // under mu_
  std::string exit_message_;                 // under mu_
  std::atomic<bool> pending_{false};         // tasks_ is not empty
  std::atomic<bool> stop_{false};
  std::function<void()> tick_;  // loop thread only
  std::thread thread_;
};

}  // namespace swemu::python
