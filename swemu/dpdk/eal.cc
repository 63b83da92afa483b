#include "swemu/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "pipeline/core/interrupt.h"

namespace swemu {
namespace {

std::string ReadProcFile(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool HasArg(const std::vector<std::string>& args, const std::string& name) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == name || arg.rfind(name + "=", 0) == 0;
  });
}

void WriteAll(int fd, std::string_view text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The line of EAL's output that names what was wrong with the arguments: getopt's complaint
// or EAL's own "invalid ..." line; empty if there is none.
std::string ArgumentComplaint(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* mark : {"unrecognized option", "invalid option", "requires an argument",
                             "doesn't allow an argument", "nvalid", "cannot ", "Cannot "}) {
      if (line.find(mark) != std::string::npos) return line;
    }
  }
  return "";
}

// DPDK's log stream in a quiet run: what rte_log writes (one message per write: it flushes after
// each) goes to stderr unless it is a routine line.
ssize_t WriteUnlessRoutine(void*, const char* data, std::size_t size) {
  const std::string message(data, size);
  if (!IsRoutineDpdkLine(message)) WriteAll(STDERR_FILENO, message);
  return static_cast<ssize_t>(size);
}

void DropRoutineDpdkLines() {
  static FILE* const stream = fopencookie(
      nullptr, "w", cookie_io_functions_t{nullptr, WriteUnlessRoutine, nullptr, nullptr});
  if (stream != nullptr) rte_openlog_stream(stream);
}

}  // namespace

bool IsRoutineDpdkLine(const std::string& line) {
  static constexpr std::array<std::string_view, 2> kRoutine = {
      "No legacy callbacks, legacy socket not created",  // EAL's telemetry, at every start
      "No valid MAC in devargs or device, use random"};  // virtio_user, once per port
  return std::any_of(kRoutine.begin(), kRoutine.end(), [&](std::string_view routine) {
    return line.find(routine) != std::string::npos;
  });
}

std::vector<std::string> SplitWords(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

bool HugepagesUsable(const std::string& meminfo, const std::string& mounts) {
  std::istringstream lines(meminfo);
  std::string line;
  long free_pages = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("HugePages_Free:", 0) == 0) free_pages = std::atol(line.c_str() + 15);
  }
  // A mount line is "source mountpoint fstype options ...".
  std::istringstream mount_lines(mounts);
  bool mounted = false;
  while (std::getline(mount_lines, line)) {
    std::vector<std::string> fields = SplitWords(line);
    if (fields.size() > 2 && fields[2] == "hugetlbfs") mounted = true;
  }
  return free_pages > 0 && mounted;
}

EalArgs MakeEalArgs(const std::string& file_args, const std::vector<std::string>& cli_args,
                    bool hugepages_usable) {
  EalArgs eal;
  eal.args = SplitWords(file_args);
  eal.args.insert(eal.args.end(), cli_args.begin(), cli_args.end());
  if (!hugepages_usable && !HasArg(eal.args, "--no-huge")) {
    eal.args.push_back("--no-huge");
    if (!HasArg(eal.args, "-m") && !HasArg(eal.args, "--socket-mem")) {
      eal.args.push_back("-m");
      eal.args.push_back("256");
    }
    eal.added_no_huge = true;
  }
  if (!HasArg(eal.args, "--log-level")) {
    eal.args.push_back("--log-level=notice");
    eal.quiet = true;
  }
  return eal;
}

bool HostHugepagesUsable() {
  return HugepagesUsable(ReadProcFile("/proc/meminfo"), ReadProcFile("/proc/mounts"));
}

CapturedFd::CapturedFd(int fd) : fd_(fd) {
  std::fflush(nullptr);
  memfd_ = memfd_create("swemu-dpdk", MFD_CLOEXEC);
  saved_ = memfd_ < 0 ? -1 : dup(fd_);
  if (saved_ >= 0 && dup2(memfd_, fd_) < 0) {
    close(saved_);
    saved_ = -1;
  }
  // A signal meanwhile still says so on the real stderr.
  if (saved_ >= 0 && fd_ == STDERR_FILENO) message_fd_ = SetInterruptMessageFd(saved_);
}

std::string CapturedFd::Restore() {
  std::string text;
  if (saved_ < 0) return text;
  std::fflush(nullptr);
  dup2(saved_, fd_);
  if (message_fd_ >= 0) SetInterruptMessageFd(message_fd_);
  message_fd_ = -1;
  close(saved_);
  saved_ = -1;
  char buffer[4096];
  for (off_t at = 0;;) {
    const ssize_t n = pread(memfd_, buffer, sizeof buffer, at);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    at += n;
  }
  close(memfd_);
  memfd_ = -1;
  return text;
}

void CapturedFd::Release() { WriteAll(fd_, Restore()); }

HeldOutput::HeldOutput() : out_(STDOUT_FILENO), err_(STDERR_FILENO) {}

void HeldOutput::Release() {
  err_.Release();
  out_.Release();
}

void HeldOutput::Drop() {
  err_.Restore();
  out_.Restore();
}

std::string DriverReason(const std::string& printed) {
  std::istringstream lines(printed);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("EAL: ", 0) == 0 || line.rfind("swemu: ", 0) == 0) continue;
    // Drivers prefix their lines with the function that logs them: "probe_fn(): ".
    const std::size_t call = line.find("(): ");
    if (call != std::string::npos && line.find(' ') > call) line.erase(0, call + 4);
    return line;
  }
  return "";
}

Status QuietDpdkStep(const std::function<Status()>& step) {
  CapturedFd out(STDOUT_FILENO);
  CapturedFd errs(STDERR_FILENO);
  Status status = step();
  const std::string printed_err = errs.Restore();
  const std::string printed_out = out.Restore();
  if (!status.ok()) {
    const std::string reason = DriverReason(printed_err + printed_out);
    return reason.empty() ? status : Status::Error(status.message() + " (" + reason + ")");
  }
  WriteAll(STDOUT_FILENO, printed_out);
  WriteAll(STDERR_FILENO, printed_err);
  return status;
}

namespace {
int g_runtime_dir = -1;  // its RemoveOnInterrupt handle
}  // namespace

Status InitEal(const EalArgs& eal, std::ostream& err) {
  // EAL may keep pointers into argv for the life of the process.
  static std::vector<std::string> storage;
  static std::vector<char*> argv;
  storage.clear();
  storage.push_back("swemu");
  storage.insert(storage.end(), eal.args.begin(), eal.args.end());
  argv.clear();
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (eal.quiet) DropRoutineDpdkLines();
  CapturedFd out(STDOUT_FILENO);
  CapturedFd errs(STDERR_FILENO);
  const int rc = rte_eal_init(static_cast<int>(storage.size()), argv.data());
  const int error = rte_errno;
  const std::string printed_err = errs.Restore();
  const std::string printed_out = out.Restore();
  if (rc < 0) {
    std::string complaint = ArgumentComplaint(printed_err + printed_out);
    if (complaint.rfind("swemu: ", 0) == 0) complaint.erase(0, 7);
    if (complaint.rfind("EAL: ", 0) == 0) complaint.erase(0, 5);
    return Status::Error("EAL: " + (complaint.empty() ? std::string(rte_strerror(error))
                                                      : complaint + " (" + rte_strerror(error) +
                                                            "; EAL's options: docs/cli.md, [eal])"));
  }
  WriteAll(STDOUT_FILENO, printed_out);
  WriteAll(STDERR_FILENO, printed_err);
  // A signal that ends the process before CleanupEal still removes the runtime directory.
  if (rte_eal_process_type() == RTE_PROC_PRIMARY) {
    const std::string runtime = rte_eal_get_runtime_dir();
    if (runtime.find("/dpdk/") != std::string::npos) g_runtime_dir = RemoveOnInterrupt(runtime);
  }
  // Said once EAL is up, so that a failure stays one line.
  if (eal.added_no_huge) err << "swemu: no free hugepages; running with --no-huge\n" << std::flush;
  return Status::Ok();
}

// rte_eal_cleanup leaves the process's runtime directory (/var/run/dpdk/<file-prefix>: its
// config, memseg fbarrays and mp socket, several MB in tmpfs) behind; every run with a new
// --file-prefix would add one for good. The primary process removes its own after cleanup.
void CleanupEal() {
  Forget(g_runtime_dir);
  g_runtime_dir = -1;
  const std::string runtime = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  if (rte_eal_process_type() == RTE_PROC_PRIMARY && runtime.find("/dpdk/") != std::string::npos) {
    std::error_code ignored;
    std::filesystem::remove_all(runtime, ignored);
  }
}

}  // namespace swemu
