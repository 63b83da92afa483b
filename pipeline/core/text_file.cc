#include "pipeline/core/text_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swemu {
namespace {

constexpr int kFifoWriterWaitMs = 10'000;

// "PATH: config is a directory", "PATH: cannot open config (No such file or directory)".
Status Refuse(const std::string& path, const std::string& what, const std::string& why) {
  return Status::Error(path + ": " + what + " " + why);
}

Status CannotOpen(const std::string& path, const std::string& what, int error) {
  return Status::Error(path + ": cannot open " + what + " (" + std::strerror(error) + ")");
}

// The kinds of file a text input may be; the error says what else it was.
Status CheckKind(const std::string& path, const std::string& what, const struct stat& st) {
  if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) return Status::Ok();
  if (S_ISDIR(st.st_mode)) return Refuse(path, what, "is a directory");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return Refuse(path, what, "is a device");
  return Refuse(path, what, "is not a regular file");
}

}  // namespace

Status CheckTextFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return CannotOpen(path, what, errno);
  SWEMU_RETURN_IF_ERROR(CheckKind(path, what, st));
  if (S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) != 0) {
    return CannotOpen(path, what, errno);
  }
  return Status::Ok();
}

Result<std::string> ReadTextFile(const std::string& path, const std::string& what,
                                 std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return CannotOpen(path, what, errno);
  struct stat st {};
  Status kind = ::fstat(fd, &st) != 0 ? CannotOpen(path, what, errno) : CheckKind(path, what, st);
  if (!kind.ok()) {
    ::close(fd);
    return kind;
  }
  // A pipe is read blocking (O_NONBLOCK only kept open() from waiting for a writer), once a
  // writer has come: a FIFO nobody writes to is an error, not an empty input.
  if (S_ISFIFO(st.st_mode)) {
    pollfd waiting{fd, POLLIN, 0};
    int ready = 0;
    do {
      ready = ::poll(&waiting, 1, kFifoWriterWaitMs);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      ::close(fd);
      return Refuse(path, what, "is a FIFO that nobody wrote to within " +
                                    std::to_string(kFifoWriterWaitMs / 1000) + " s");
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return Status::Error(path + ": reading " + what + " failed (" + std::strerror(error) + ")");
    }
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return Refuse(path, what, "is longer than " + std::to_string(max_bytes >> 20) + " MiB");
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace swemu
