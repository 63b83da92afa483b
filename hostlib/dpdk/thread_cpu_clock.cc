#include "hostlib/dpdk/thread_cpu_clock.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace swemu {

Result<ThreadCpuClock> ThreadCpuClock::Open(pid_t tid) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    return Status::Error("thread " + std::to_string(tid) +
                         ": perf_event_open: " + std::strerror(errno));
  }
  return ThreadCpuClock(static_cast<int>(fd));
}

ThreadCpuClock::~ThreadCpuClock() {
  if (fd_ >= 0) close(fd_);
}

ThreadCpuClock& ThreadCpuClock::operator=(ThreadCpuClock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

TimeNs ThreadCpuClock::ReadNs() const noexcept {
  uint64_t value = 0;
  if (fd_ < 0 || read(fd_, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) {
    return kUnreadable;
  }
  return value;
}

}  // namespace swemu
