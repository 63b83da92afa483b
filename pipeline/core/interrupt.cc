#include "pipeline/core/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace swemu {
namespace {

constexpr int kPathSlots = 4096;
constexpr int kChildSlots = 256;
constexpr int kStopWaitMs = 3000;  // a swemu drains and exits well within this after SIGINT

// Slots hold owned copies (new[]); the handler reads them without locks.
std::atomic<char*> g_paths[kPathSlots];
std::atomic<pid_t> g_children[kChildSlots];
std::atomic<const char*> g_tool{"swemu"};
std::atomic<const char*> g_note{""};
std::atomic<int> g_message_fd{STDERR_FILENO};

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void WriteStderr(const char* text) {
  const std::size_t n = std::strlen(text);
  for (std::size_t done = 0; done < n;) {
    const ssize_t w = ::write(g_message_fd.load(), text + done, n - done);
    if (w <= 0) return;
    done += static_cast<std::size_t>(w);
  }
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "a signal";
  }
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// linux_dirent64 (getdents64 is async-signal-safe; opendir is not).
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Removes `name` under `dirfd`: a file, or a directory with what it holds (depth-bounded).
void RemoveTree(int dirfd, const char* name, int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > 8) return;
  const int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buffer[4096];
  for (int pass = 0; pass < 64; ++pass) {  // entries removed while listed: list again
    ::lseek(fd, 0, SEEK_SET);
    bool any = false;
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const Dirent64*>(buffer + at);
        at += entry->reclen;
        if (std::strcmp(entry->name, ".") == 0 || std::strcmp(entry->name, "..") == 0) continue;
        any = true;
        RemoveTree(fd, entry->name, depth + 1);
      }
    }
    if (!any) break;
  }
  ::close(fd);
  ::unlinkat(dirfd, name, AT_REMOVEDIR);
}

// SIGINT to every child, a bounded wait for each to exit, SIGKILL to those that did not.
void StopChildren() {
  bool any = false;
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) {
      ::kill(pid, SIGINT);
      any = true;
    }
  }
  if (!any) return;
  for (int waited = 0; waited <= kStopWaitMs; waited += 10) {
    bool running = false;
    for (auto& slot : g_children) {
      const pid_t pid = slot.load();
      if (pid <= 0) continue;
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r == pid || (r < 0 && errno == ECHILD)) {
        slot.store(0);
      } else {
        running = true;
      }
    }
    if (!running) return;
    SleepMs(10);
  }
  for (auto& slot : g_children) {
    const pid_t pid = slot.exchange(0);
    if (pid <= 0) continue;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

void OnSignal(int sig) {
  RunInterruptCleanup();
  WriteStderr(g_tool.load());
  WriteStderr(": interrupted by ");
  WriteStderr(SignalName(sig));
  WriteStderr(g_note.load());
  WriteStderr("\n");
  ::_exit(128 + sig);
}

}  // namespace

int SetInterruptMessageFd(int fd) { return g_message_fd.exchange(fd); }

void SetInterruptNote(const char* note) { g_note.store(note); }

void InstallInterruptCleanup(const char* tool) {
  g_tool.store(tool);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kSignals) sigaddset(&sa.sa_mask, sig);  // one cleanup at a time
  for (int sig : kSignals) ::sigaction(sig, &sa, nullptr);
}

int RemoveOnInterrupt(const std::string& path) {
  for (int i = 0; i < kPathSlots; ++i) {
    if (g_paths[i].load(std::memory_order_relaxed) != nullptr) continue;
    char* copy = new char[path.size() + 1];
    std::memcpy(copy, path.c_str(), path.size() + 1);
    char* expected = nullptr;
    if (g_paths[i].compare_exchange_strong(expected, copy)) return i;
    delete[] copy;
  }
  return -1;
}

int StopOnInterrupt(pid_t child) {
  for (int i = 0; i < kChildSlots; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, child)) return kPathSlots + i;
  }
  return -1;
}

void Forget(int handle) {
  if (handle < 0) return;
  if (handle < kPathSlots) {
    delete[] g_paths[handle].exchange(nullptr);
  } else if (handle < kPathSlots + kChildSlots) {
    g_children[handle - kPathSlots].store(0);
  }
}

void RunInterruptCleanup() {
  // Children first: a switch may still write into a directory about to be removed.
  StopChildren();
  for (auto& slot : g_paths) {
    // Left allocated: another thread may be reading it; the process is about to end anyway.
    if (const char* path = slot.load()) RemoveTree(AT_FDCWD, path, 0);
  }
}

}  // namespace swemu
