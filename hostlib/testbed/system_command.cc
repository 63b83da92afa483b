#include "hostlib/testbed/system_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace swemu {

Result<std::string> FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    return Status::Error(program + ": not an executable file");
  }
  const char* env = std::getenv("PATH");
  std::string path = std::string(env != nullptr ? env : "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Status::Error(program + ": not found on PATH (install it: apt-get install iproute2)");
}

std::string CommandText(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg.find_first_of(" \t'\"") == std::string::npos ? arg : "'" + arg + "'";
  }
  return text;
}

Status RunProgram(const std::vector<std::string>& argv) {
  Result<std::string> binary = FindProgram(argv.at(0));
  if (!binary.ok()) return binary.status();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return Status::Error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    execv(binary->c_str(), args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string first = output.substr(0, output.find('\n'));
  if (first.empty()) {
    first = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "killed";
  }
  return Status::Error(CommandText(argv) + ": " + first);
}

}  // namespace swemu
