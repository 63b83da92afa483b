#include "hostlib/python/loop_thread.h"

#include <exception>
#include <memory>

namespace swemu::python {

void LoopThread::Start(std::function<Status(LoopThread&)> body, std::function<void()> tick) {
  Stop();
  tick_ = std::move(tick);
  stop_ = false;
  {
    std::lock_guard lock(mu_);
    running_ = true;
    exit_message_.clear();
  }
  thread_ = std::thread([this, body = std::move(body)] { Run(body); });
}

void LoopThread::Run(const std::function<Status(LoopThread&)>& body) {
  std::string message;
  try {
    Status status = body(*this);
    if (!status.ok()) message = status.message();
  } catch (const std::exception& e) {
    message = std::string("host loop failed: ") + e.what();
  }
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    if (!stop_ && message.empty()) message = "host loop ended";
    exit_message_ = stop_ ? std::string() : message;
    dropped.swap(tasks_);
    pending_ = false;
  }
  cv_.notify_all();
  // Dropped tasks are destroyed here, outside the lock (Call's waiters see running_ == false).
}

bool LoopThread::Service() {
  if (pending_.load(std::memory_order_acquire)) {
    std::deque<std::function<void()>> tasks;
    {
      std::lock_guard lock(mu_);
      tasks.swap(tasks_);
      pending_ = false;
    }
    for (auto& task : tasks) task();
  }
  if (tick_) tick_();
  return !stop_.load(std::memory_order_acquire);
}

bool LoopThread::Post(std::function<void()> task) {
  std::lock_guard lock(mu_);
  if (!running_) return false;
  tasks_.push_back(std::move(task));
  pending_.store(true, std::memory_order_release);
  return true;
}

Status LoopThread::Call(const std::function<void()>& task) {
  auto ran = std::make_shared<bool>(false);
  const bool queued = Post([this, ran, &task] {
    task();
    std::lock_guard lock(mu_);
    *ran = true;
    cv_.notify_all();
  });
  if (!queued) {
    const std::string why = exit_message();
    return Status::Error("the host loop is not running" + (why.empty() ? "" : ": " + why));
  }
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return *ran || !running_; });
  if (*ran) return Status::Ok();
  return Status::Error(exit_message_.empty() ? "the host loop stopped" : exit_message_);
}

void LoopThread::Stop() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

bool LoopThread::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

std::string LoopThread::exit_message() const {
  std::lock_guard lock(mu_);
  return exit_message_;
}

void LoopThread::Notify() {
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

}  // namespace swemu::python
