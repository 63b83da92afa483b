#pragma once
// A swemu switch run as a child process by swemu-atp's real-time demo: started with a config,
// waited for (its vhost-user sockets and its control socket appear), asked for statistics over
// the control socket, and stopped with SIGINT (it drains, prints its counters and checks for
// mbuf leaks; its exit status says whether that went well). A signal that ends the parent stops
// the child too (interrupt.h), and a child whose parent dies stops itself (PR_SET_PDEATHSIG).
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/core/interrupt.h"
#include "pipeline/core/status.h"

namespace swemu {

class SwemuProcess {
 public:
  SwemuProcess() = default;
  ~SwemuProcess();  // kills a child that is still running
  SwemuProcess(const SwemuProcess&) = delete;
  SwemuProcess& operator=(const SwemuProcess&) = delete;

  // Starts `binary args...` with stdout and stderr appended to log_path, and `env` (NAME=VALUE
  // entries) added to its environment.
  Status Start(const std::string& binary, const std::vector<std::string>& args,
               const std::string& log_path, const std::vector<std::string>& env = {});
  // Waits until every path exists (sockets the child creates); fails early if the child exits.
  Status WaitForPaths(const std::vector<std::string>& paths, std::chrono::milliseconds timeout);
  // One command over the control socket; the reply body, or the error line.
  Result<std::string> Command(const std::string& control_socket, const std::string& line) const;
  // SIGINT, then waits up to `timeout` (SIGKILL after); the exit status (0 = clean shutdown).
  Result<int> Stop(std::chrono::milliseconds timeout);

  // The child's exit status once it has ended (reaped here), else nothing; also nothing when
  // it was never started.
  std::optional<int> Exited();

  // CPU time the child has used (user + system, every thread; clock-tick resolution), from
  // /proc/<pid>/stat; -1 when it cannot be read.
  int64_t CpuNs() const;
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

 private:
  void Reaped();  // the child is gone: nothing left to stop after a signal
  pid_t pid_ = -1;
  int on_interrupt_ = -1;  // stopped by the parent's signal cleanup while it runs
  std::string log_path_;
};

// The directory of the running executable (to find build/swemu/swemu next to build/tools/).
std::string SelfDirectory();

}  // namespace swemu
