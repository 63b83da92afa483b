#include "swemu/control_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "swemu/control_socket.h"

namespace swemu {
namespace {

// Longest header line: "ERR " + a 20-digit size.
constexpr std::size_t kMaxHeaderBytes = 32;

// SO_RCVTIMEO and SO_SNDTIMEO bound connect(), send() and recv() alike.
void SetTimeouts(int fd, int timeout_ms) {
  if (timeout_ms <= 0) return;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

std::string Failure(const std::string& peer, int err, int timeout_ms) {
  if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS) {
    return "no answer from " + peer + " within " + std::to_string(timeout_ms) +
           " ms (--timeout)";
  }
  // Nobody listens there: say what would.
  if (err == ENOENT || err == ECONNREFUSED) {
    return std::string(std::strerror(err)) +
           " (is swemu running in real time with this control socket? --offline runs have none)";
  }
  return std::string(std::strerror(err));
}

}  // namespace

ControlClient::~ControlClient() {
  if (fd_ >= 0) close(fd_);
}

Result<std::unique_ptr<ControlClient>> ControlClient::ConnectUnix(const std::string& path,
                                                                 int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::Error("cannot connect to " + path + ": path too long");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  SWEMU_RETURN_IF_ERROR(CheckPrivateSocketDirectory(path, false));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) SetTimeouts(fd, timeout_ms);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    return Status::Error("cannot connect to " + path + ": " + Failure(path, err, timeout_ms));
  }
  Result<uid_t> server = PeerUid(fd);
  if (!server.ok() || (*server != 0 && *server != geteuid())) {
    close(fd);
    return Status::Error(path + " is served by " +
                         (server.ok() ? "uid " + std::to_string(*server) : server.message()) +
                         ", not by you or root: refusing to talk to it");
  }
  auto client = std::unique_ptr<ControlClient>(new ControlClient(fd, path));
  client->timeout_ms_ = timeout_ms;
  return client;
}

Result<std::unique_ptr<ControlClient>> ControlClient::ConnectTcp(const std::string& endpoint,
                                                                int timeout_ms) {
  Result<sockaddr_in> addr = ParseTcpEndpoint(endpoint);
  if (!addr.ok()) return addr.status();
  const std::string peer = FormatTcpEndpoint(*addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) SetTimeouts(fd, timeout_ms);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    return Status::Error("cannot connect to " + peer + ": " + Failure(peer, err, timeout_ms));
  }
  auto client = std::unique_ptr<ControlClient>(new ControlClient(fd, peer));
  client->timeout_ms_ = timeout_ms;
  return client;
}

Status ControlClient::ReadMore() {
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      buffer_.append(buf, static_cast<std::size_t>(n));
      return Status::Ok();
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Status::Error("connection to " + peer_ + " closed by swemu");
    return Status::Error("connection to " + peer_ + ": " + Failure(peer_, errno, timeout_ms_));
  }
}

Result<ControlReply> ControlClient::Call(const std::string& line) {
  if (line.find('\n') != std::string::npos) {
    return Status::Error("a command is one line; this one contains a newline");
  }
  const std::string message = line + "\n";
  for (std::size_t sent = 0; sent < message.size();) {
    const ssize_t n = send(fd_, message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::Error("connection to " + peer_ + ": " + Failure(peer_, errno, timeout_ms_));
    }
    sent += static_cast<std::size_t>(n);
  }
  std::size_t newline;
  while ((newline = buffer_.find('\n')) == std::string::npos) {
    if (buffer_.size() > kMaxHeaderBytes) break;
    SWEMU_RETURN_IF_ERROR(ReadMore());
  }
  ControlReply reply;
  std::size_t size = 0;
  const std::string header = buffer_.substr(0, std::min(newline, buffer_.size()));
  const std::size_t space = header.find(' ');
  const char* end = header.data() + header.size();
  bool valid = newline != std::string::npos && space != std::string::npos;
  if (valid) {
    const std::string word = header.substr(0, space);
    reply.ok = word == "OK";
    auto [ptr, ec] = std::from_chars(header.data() + space + 1, end, size);
    valid = (reply.ok || word == "ERR") && ec == std::errc() && ptr == end;
  }
  if (!valid) return Status::Error("connection to " + peer_ + ": not a swemu control socket");
  buffer_.erase(0, newline + 1);
  while (buffer_.size() < size) SWEMU_RETURN_IF_ERROR(ReadMore());
  reply.body = buffer_.substr(0, size);
  buffer_.erase(0, size);
  return reply;
}

}  // namespace swemu
