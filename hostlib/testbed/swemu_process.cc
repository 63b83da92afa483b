#include "hostlib/testbed/swemu_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "swemu/control_client.h"

namespace swemu {
namespace {

// Reaps the child if it exited; the exit status (128 + signal for a signal), or -1 if running.
int Reap(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) != pid) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

SwemuProcess::~SwemuProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Forget(on_interrupt_);
}

void SwemuProcess::Reaped() {
  pid_ = -1;
  Forget(on_interrupt_);
  on_interrupt_ = -1;
}

Status SwemuProcess::Start(const std::string& binary, const std::vector<std::string>& args,
                           const std::string& log_path, const std::vector<std::string>& env) {
  if (access(binary.c_str(), X_OK) != 0) {
    return Status::Error("cannot run " + binary + ": " + std::strerror(errno));
  }
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return Status::Error("cannot open " + log_path + ": " + std::strerror(errno));
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_copy = env;  // putenv keeps the pointer
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return Status::Error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A parent killed outright (SIGKILL) cannot stop its switch: the switch stops itself, as
    // after Ctrl-C, when the parent goes away (also if that happened before this line).
    prctl(PR_SET_PDEATHSIG, SIGINT);
    if (getppid() != parent) _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    for (std::string& entry : env_copy) putenv(entry.data());
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(log);
  pid_ = pid;
  on_interrupt_ = StopOnInterrupt(pid);
  log_path_ = log_path;
  return Status::Ok();
}

Status SwemuProcess::WaitForPaths(const std::vector<std::string>& paths,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (const std::string& path : paths) all = all && std::filesystem::exists(path);
    if (all) return Status::Ok();
    const int exited = Reap(pid_);
    if (exited >= 0) {
      Reaped();
      return Status::Error("swemu exited with status " + std::to_string(exited) +
                           " before it was ready (log: " + log_path_ + ")");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Error("swemu not ready after " + std::to_string(timeout.count()) +
                           " ms (log: " + log_path_ + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<std::string> SwemuProcess::Command(const std::string& control_socket,
                                          const std::string& line) const {
  auto client = ControlClient::ConnectUnix(control_socket);
  if (!client.ok()) return client.status();
  auto reply = (*client)->Call(line);
  if (!reply.ok()) return reply.status();
  if (!reply->ok) return Status::Error(line + ": " + reply->body);
  return reply->body;
}

std::optional<int> SwemuProcess::Exited() {
  if (pid_ <= 0) return std::nullopt;
  const int exited = Reap(pid_);
  if (exited < 0) return std::nullopt;
  Reaped();
  return exited;
}

Result<int> SwemuProcess::Stop(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return Status::Error("swemu is not running");
  kill(pid_, SIGINT);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const int exited = Reap(pid_);
    if (exited >= 0) {
      Reaped();
      return exited;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      Reaped();
      return Status::Error("swemu did not stop within " + std::to_string(timeout.count()) +
                           " ms after SIGINT (killed)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string SelfDirectory() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

int64_t SwemuProcess::CpuNs() const {
  if (pid_ <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const std::size_t paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  if (!fields) return -1;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return -1;
  return static_cast<int64_t>((utime + stime) *
                              (1'000'000'000ull / static_cast<unsigned long long>(ticks)));
}

}  // namespace swemu
