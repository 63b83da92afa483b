#pragma once
// What a tool leaves behind when a signal ends it. SIGINT, SIGTERM, SIGHUP and SIGQUIT run a
// handler that stops the child processes the tool started (SIGINT, a bounded wait, then
// SIGKILL), removes the temporary files and directories it registered (outputs written aside,
// staging directories, DPDK runtime directories), prints one line and exits with 128 + the
// signal's number. Registration is cheap and lock-free; the handler only makes system calls.
//
// Tools that run until told (real-time hosts, swemu on DPDK ports) install their own stop
// handlers (tools/stop_signal.h) after this one; their normal shutdown then does the cleanup.
#include <sys/types.h>

#include <string>

namespace swemu {

// Installs the handler; `tool` names the process in the line it prints ("swemu-atp: interrupted
// by SIGINT"). Safe to call more than once.
void InstallInterruptCleanup(const char* tool);

// Registrations; each returns a handle for Forget (-1 when the table is full: the path is then
// not cleaned up after a signal, which is the most that can go wrong).
int RemoveOnInterrupt(const std::string& path);  // a file, or a directory and what it holds
int StopOnInterrupt(pid_t child);
void Forget(int handle);

// Where the handler's line goes; returns the previous one. While stderr is held in memory (a
// DPDK step's output, swemu/dpdk/eal.h), the line still reaches the real stderr.
int SetInterruptMessageFd(int fd);
// Said after the signal's name (a static string: " (why this signal may have come)").
void SetInterruptNote(const char* note);

// The handler's work without exiting (for tests): stops the children, removes the paths.
void RunInterruptCleanup();

// RAII: a path removed after a signal until this is destroyed.
class RemovedOnInterrupt {
 public:
  RemovedOnInterrupt() = default;
  explicit RemovedOnInterrupt(const std::string& path) : handle_(RemoveOnInterrupt(path)) {}
  ~RemovedOnInterrupt() { Forget(handle_); }
  RemovedOnInterrupt(RemovedOnInterrupt&& other) noexcept : handle_(other.handle_) {
    other.handle_ = -1;
  }
  RemovedOnInterrupt& operator=(RemovedOnInterrupt&& other) noexcept {
    if (this != &other) {
      Forget(handle_);
      handle_ = other.handle_;
      other.handle_ = -1;
    }
    return *this;
  }

 private:
  int handle_ = -1;
};

}  // namespace swemu
