#pragma once
// Hands control commands from the control thread to the lcore that owns the switch, so tables,
// thresholds, rates and registers change live with no lock on the fast path. One slot: the
// control side posts a line and blocks until the lcore, polling between bursts, has run it.
// The lcore never takes a lock; control callers are serialised among themselves by a mutex.
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "pipeline/control/command_table.h"
#include "pipeline/core/status.h"

namespace swemu {

class ControlMailbox {
 public:
  // Control side: runs `line` on the lcore at its next Poll() and returns the answer. After
  // Close(), answers "switch is shutting down" without waiting.
  Result<std::string> Execute(const std::string& line);
  // Control side: runs `task` on the lcore at its next Poll() (e.g. to copy counters only the
  // lcore may read); false, without running it, after Close().
  bool Call(const std::function<void()>& task);
  // Control side, before any lcore runs (startup script): runs the line directly.
  static Result<std::string> ExecuteNow(const CommandTable& table, const std::string& line) {
    return table.Execute(line);
  }

  // Lcore side, once per loop iteration: one atomic load when nothing is pending.
  void Poll(const CommandTable& table) {
    if (state_.load(std::memory_order_acquire) == kPosted) Run(table);
  }
  // Lcore side, when it stops: answers a pending command and refuses later ones.
  void Close();

 private:
  enum State : int { kIdle, kPosted, kDone, kClosed };
  // With callers_ held: posts line_ or task_ and waits for the lcore's answer.
  Result<std::string> Post();
  void Run(const CommandTable& table);

  std::mutex callers_;  // control threads only
  std::atomic<int> state_{kIdle};
  std::string line_;                             // written by control before kPosted
  const std::function<void()>* task_ = nullptr;  // instead of line_ when set
  std::optional<Result<std::string>> answer_;    // written by the lcore before kDone
};

}  // namespace swemu
