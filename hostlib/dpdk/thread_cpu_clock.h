#pragma once
// The CPU time of a thread of another process, read while it runs. Used to see that a
// busy-polling switch lost its CPU: its answers are then late, not lost (HostRunner).
//
// Neither clock the kernel offers by clock_gettime serves: a thread CPU clock is readable only
// inside its own process, and a process clock (clock_getcpuclockid) is brought up to date only
// at the scheduler tick (every 4 ms here) while its threads run on another CPU, so a polling
// switch would look stalled in three 1 ms checks of four. A perf task-clock counter bound to
// the thread is exact: reading it updates it on the thread's CPU.
#include <sys/types.h>

#include <string>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

namespace swemu {

class ThreadCpuClock {
 public:
  // Errors: "thread 123: perf_event_open: Permission denied" (perf_event_paranoid), or no
  // such thread.
  static Result<ThreadCpuClock> Open(pid_t tid);
  ~ThreadCpuClock();
  ThreadCpuClock(ThreadCpuClock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ThreadCpuClock& operator=(ThreadCpuClock&& other) noexcept;
  ThreadCpuClock(const ThreadCpuClock&) = delete;
  ThreadCpuClock& operator=(const ThreadCpuClock&) = delete;

  static constexpr TimeNs kUnreadable = ~TimeNs{0};
  // Nanoseconds the thread has run since Open; kUnreadable once it cannot be read.
  TimeNs ReadNs() const noexcept;

 private:
  explicit ThreadCpuClock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace swemu
