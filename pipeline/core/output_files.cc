#include "pipeline/core/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace swemu {
namespace fs = std::filesystem;
namespace {

std::string Pid() { return std::to_string(::getpid()); }

Status Refuse(const std::string& option, const std::string& path, const std::string& why) {
  return Status::Error(option + " " + path + ": " + why);
}

// The nearest existing ancestor of a path that does not exist must be a writable directory
// (the missing ones are made when the output is written).
Status CheckMissing(const std::string& path, const std::string& option) {
  fs::path at = fs::path(path).parent_path();
  for (; !at.empty(); at = at.parent_path()) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return Refuse(option, path, at.string() + " is not a directory");
      if (::access(at.c_str(), W_OK | X_OK) != 0) {
        return Refuse(option, path, "cannot write into " + at.string() + " (" +
                                        std::strerror(errno) + ")");
      }
      return Status::Ok();
    }
    if (errno != ENOENT && errno != ENOTDIR) {
      return Refuse(option, path, "cannot reach " + at.string() + " (" + std::strerror(errno) + ")");
    }
    if (at == at.parent_path()) break;
  }
  if (::access(".", W_OK | X_OK) != 0) {
    return Refuse(option, path, std::string("cannot write into . (") + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

// A symbolic link is written where it points (the link stays a link).
std::string Target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  std::error_code error;
  const fs::path target = fs::weakly_canonical(path, error);
  return error ? path : target.string();
}

Status WriteAll(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Error(std::strerror(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

bool WrittenThrough(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

Status CheckOutputPath(const std::string& path, const std::string& option) {
  if (path.empty()) return Status::Error(option + ": an empty path");
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return Refuse(option, path, "is a directory");
  if (path.back() == '/') return Refuse(option, path, "names a directory (ends in '/')");
  if (!exists) {
    if (errno == ENOENT || errno == ENOTDIR) return CheckMissing(path, option);
    return Refuse(option, path, std::string("cannot write (") + std::strerror(errno) + ")");
  }
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    if (::access(path.c_str(), W_OK) != 0) {
      return Refuse(option, path, std::string("cannot write (") + std::strerror(errno) + ")");
    }
    return Status::Ok();
  }
  if (!S_ISREG(st.st_mode)) {
    return Refuse(option, path, "is not a regular file, a FIFO or a character device");
  }
  const fs::path parent = fs::path(Target(path)).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Refuse(option, path, "cannot write into " + dir + " (" + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

Status CheckOutputDirectory(const std::string& path, const std::string& option) {
  if (path.empty()) return Status::Error(option + ": an empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return CheckMissing(path, option);
    return Refuse(option, path, std::string("cannot reach (") + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) return Refuse(option, path, "is not a directory");
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    return Refuse(option, path, std::string("cannot write into it (") + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

OutputFiles::~OutputFiles() {
  std::error_code ignored;
  for (const Move& m : moves_) {
    if ((!committed_ || m.final_path.empty()) && m.temp != m.final_path) fs::remove(m.temp, ignored);
  }
  for (const auto& [dir, staging] : staging_) fs::remove_all(staging, ignored);
  if (!committed_) {
    for (auto it = made_dirs_.rbegin(); it != made_dirs_.rend(); ++it) fs::remove(*it, ignored);
  }
}

std::string OutputFiles::Aside(const std::string& asked) {
  if (WrittenThrough(asked)) return asked;
  const std::string final_path = Target(asked);
  const fs::path parent = fs::path(final_path).parent_path();
  // Missing directories are made (a failure shows when the file is opened).
  std::vector<fs::path> missing;
  for (fs::path at = parent; !at.empty() && !fs::exists(at); at = at.parent_path()) {
    missing.push_back(at);
    if (at == at.parent_path()) break;
  }
  std::error_code ignored;
  if (!parent.empty()) fs::create_directories(parent, ignored);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) made_dirs_.push_back(it->string());
  moves_.push_back({final_path + ".tmp-" + Pid(), final_path});
  on_interrupt_.emplace_back(moves_.back().temp);
  return moves_.back().temp;
}

Result<std::string> OutputFiles::StagingDirectory(const std::string& dir) {
  for (const auto& [d, staging] : staging_) {
    if (d == dir) return staging;
  }
  std::error_code error;
  if (!fs::exists(dir, error)) made_dirs_.push_back(dir);
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    return Status::Error(dir + ": cannot create directory" +
                         (error ? " (" + error.message() + ")" : ""));
  }
  const std::string staging = (fs::path(dir) / (".swemu-staging-" + Pid())).string();
  fs::remove_all(staging, error);
  if (!fs::create_directory(staging, error) || error) {
    return Status::Error(dir + ": cannot create " + staging +
                         (error ? " (" + error.message() + ")" : ""));
  }
  staging_.emplace_back(dir, staging);
  on_interrupt_.emplace_back(staging);
  return staging;
}

Result<std::string> OutputFiles::Staged(const std::string& dir, const std::string& name) {
  const std::string final_path = (fs::path(dir) / name).string();
  if (WrittenThrough(final_path)) return final_path;
  Result<std::string> staging = StagingDirectory(dir);
  if (!staging.ok()) return staging;
  moves_.push_back({(fs::path(*staging) / name).string(), final_path});
  return moves_.back().temp;
}

std::string OutputFiles::Scratch(const std::string& near, const std::string& tag) {
  moves_.push_back({near + ".tmp-" + Pid() + "-" + tag, ""});
  on_interrupt_.emplace_back(moves_.back().temp);
  return moves_.back().temp;
}

Status OutputFiles::Unstaged(const Status& status) const {
  if (status.ok()) return status;
  std::string message = status.message();
  for (const Move& m : moves_) {
    if (m.final_path.empty() || m.temp == m.final_path) continue;
    for (std::size_t at = message.find(m.temp); at != std::string::npos;
         at = message.find(m.temp, at + m.final_path.size())) {
      message.replace(at, m.temp.size(), m.final_path);
    }
  }
  return Status::Error(message);
}

Status OutputFiles::Commit() {
  for (const Move& m : moves_) {
    if (m.final_path.empty() || m.temp == m.final_path) continue;
    if (::rename(m.temp.c_str(), m.final_path.c_str()) != 0) {
      return Status::Error(m.final_path + ": cannot move into place (" + std::strerror(errno) +
                           ")");
    }
  }
  committed_ = true;
  return Status::Ok();
}

Status OutputFiles::WriteText(const std::string& final_path, const std::string& text) {
  const std::string cannot = "cannot write " + final_path + " (";
  const std::string temp = Aside(final_path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error(cannot + std::strerror(errno) + ")");
  Status written = WriteAll(fd, text);
  if (::close(fd) != 0 && written.ok()) written = Status::Error(std::strerror(errno));
  if (!written.ok()) return Status::Error(cannot + written.message() + ")");
  return Status::Ok();
}

Status WriteTextFile(const std::string& path, const std::string& text, const std::string& option) {
  OutputFiles files;
  Status status = files.WriteText(path, text);
  if (status.ok()) status = files.Commit();
  if (!status.ok() && !option.empty()) return Status::Error(option + ": " + status.message());
  return status;
}

}  // namespace swemu
