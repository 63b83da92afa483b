#include "swemu/control_mailbox.h"

#include <thread>

namespace swemu {
namespace {

Status ShuttingDown() { return Status::Error("switch is shutting down"); }

}  // namespace

Result<std::string> ControlMailbox::Execute(const std::string& line) {
  std::lock_guard<std::mutex> lock(callers_);
  line_ = line;
  return Post();
}

Result<std::string> ControlMailbox::Post() {
  int expected = kIdle;
  if (state_.load(std::memory_order_acquire) != kIdle) return ShuttingDown();
  // Release publishes line_ to the lcore; fails only when the lcore has closed the mailbox.
  if (!state_.compare_exchange_strong(expected, kPosted, std::memory_order_acq_rel)) {
    return ShuttingDown();
  }
  state_.wait(kPosted, std::memory_order_acquire);
  Result<std::string> answer = std::move(*answer_);
  answer_.reset();
  expected = kDone;
  state_.compare_exchange_strong(expected, kIdle, std::memory_order_acq_rel);
  return answer;
}

bool ControlMailbox::Call(const std::function<void()>& task) {
  std::lock_guard<std::mutex> lock(callers_);
  task_ = &task;
  Result<std::string> done = Post();
  task_ = nullptr;
  return done.ok();
}

void ControlMailbox::Run(const CommandTable& table) {
  if (task_ != nullptr) {
    (*task_)();
    answer_.emplace(std::string());
  } else {
    answer_.emplace(table.Execute(line_));
  }
  state_.store(kDone, std::memory_order_release);
  state_.notify_all();
}

void ControlMailbox::Close() {
  for (;;) {
    int state = state_.load(std::memory_order_acquire);
    if (state == kClosed) return;
    if (state == kPosted) {
      answer_.emplace(ShuttingDown());
      state_.store(kDone, std::memory_order_release);
      state_.notify_all();
    } else if (state == kDone) {
      std::this_thread::yield();  // the caller is collecting its answer
    } else if (state_.compare_exchange_weak(state, kClosed, std::memory_order_acq_rel)) {
      return;
    }
  }
}

}  // namespace swemu
