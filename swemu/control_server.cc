#include "swemu/control_server.h"

#include <netinet/in.h>
#include <pthread.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "swemu/control_socket.h"

namespace swemu {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
// A client's further commands wait while this much of its output is unread (a client that never
// reads cannot make the server buffer without bound).
constexpr std::size_t kMaxPendingOutput = 1 << 20;
constexpr std::size_t kMaxClients = 256;
constexpr int kListenBacklog = 64;
// A client that neither sends nor reads for this long is closed, so idle connections cannot
// hold every slot for good.
constexpr auto kIdleTimeout = std::chrono::seconds(60);
// Commands executed for one client before the others get their turn: one client pipelining
// thousands of commands delays the rest by at most this many commands each round.
constexpr int kCommandsPerTurn = 16;

std::string ErrnoText(int err) { return std::strerror(err); }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

bool IsBlankOrComment(const std::string& line) {
  const std::size_t first = line.find_first_not_of(" \t\r");
  return first == std::string::npos || line[first] == '#';
}

// Closes a client, first reading what it already sent so that TCP does not answer with a reset
// that could discard our last reply.
void DrainAndClose(int fd) {
  char buf[4096];
  for (std::size_t total = 0; total < kMaxPendingOutput;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
  }
  close(fd);
}

// The Unix socket's mode already keeps other users out; the peer's credentials are checked as
// well, so a socket whose mode was widened still answers only its owner (and root).
bool PeerMayControl(int fd) {
  Result<uid_t> peer = PeerUid(fd);
  return peer.ok() && (*peer == 0 || *peer == geteuid());
}

}  // namespace

struct ControlServer::Client {
  int fd = -1;
  std::chrono::steady_clock::time_point last_active = std::chrono::steady_clock::now();
  std::string in;   // received, not yet executed
  std::string out;  // answers, not yet sent from out_pos on
  std::size_t out_pos = 0;
  bool eof = false;      // the client sends nothing more
  bool closing = false;  // no more commands; close once `out` is sent
  std::size_t Pending() const { return out.size() - out_pos; }
};

ControlServer::ControlServer(ControlServerConfig config, ControlExecutor executor)
    : config_(std::move(config)), executor_(std::move(executor)) {}

ControlServer::~ControlServer() { Stop(); }

Status ControlServer::Start() {
  if (thread_.joinable()) return Status::Error("control server is already running");
  if (config_.unix_path.empty() && config_.tcp.empty()) {
    return Status::Error("control server: neither a socket path nor a TCP address given");
  }
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  Status status =
      wake_fd_ < 0 ? Status::Error("control server: eventfd: " + ErrnoText(errno)) : ListenUnix();
  if (status.ok()) status = ListenTcp();
  if (!status.ok()) {
    CloseAll();
    return status;
  }
  thread_ = std::thread(&ControlServer::Run, this);
  pthread_setname_np(thread_.native_handle(), "swemu-control");
  return Status::Ok();
}

void ControlServer::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (write(wake_fd_, &one, sizeof(one)) < 0) {
      // The eventfd cannot be full after one write per Stop; nothing else to do.
    }
    thread_.join();
  }
  CloseAll();
}

Status ControlServer::ListenUnix() {
  const std::string& path = config_.unix_path;
  if (path.empty()) return Status::Ok();
  const std::string where = "control socket " + path;
  SWEMU_RETURN_IF_ERROR(CheckPrivateSocketDirectory(path, true));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::Error(where + ": path longer than " + std::to_string(sizeof(addr.sun_path) - 1) +
                         " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr);

  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return Status::Error(where + ": exists and is not a socket");
    // A socket file nobody listens on is left over from a server that died: replace it.
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int rc = probe < 0 ? -1 : connect(probe, sa, sizeof(addr));
    const int err = errno;
    if (probe >= 0) close(probe);
    if (rc == 0 || err == EAGAIN) return Status::Error(where + " is in use by another process");
    if (err != ECONNREFUSED) return Status::Error(where + ": " + ErrnoText(err));
    if (unlink(path.c_str()) != 0) {
      return Status::Error(where + ": cannot remove the stale socket: " + ErrnoText(errno));
    }
  } else if (errno != ENOENT) {
    return Status::Error(where + ": " + ErrnoText(errno));
  } else {
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    struct stat dir_st {};
    if (stat(dir.c_str(), &dir_st) != 0) {
      return Status::Error(where + ": directory " + dir +
                           (errno == ENOENT ? " does not exist" : ": " + ErrnoText(errno)));
    }
    if (!S_ISDIR(dir_st.st_mode)) return Status::Error(where + ": " + dir + " is not a directory");
  }

  unix_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (unix_fd_ < 0) return Status::Error(where + ": socket: " + ErrnoText(errno));
  // Created with no permissions at all, then opened up to `mode`: never briefly more open.
  // (The umask is process-wide; the server starts before anything else creates files.)
  const mode_t old_umask = umask(0777);
  const int rc = bind(unix_fd_, sa, sizeof(addr));
  const int bind_errno = errno;
  umask(old_umask);
  if (rc != 0) return Status::Error(where + ": cannot bind: " + ErrnoText(bind_errno));
  if (lstat(path.c_str(), &st) == 0) {
    socket_dev_ = st.st_dev;
    socket_ino_ = st.st_ino;
  }
  if (chmod(path.c_str(), config_.mode) != 0) {
    return Status::Error(where + ": cannot set its mode: " + ErrnoText(errno));
  }
  if (listen(unix_fd_, kListenBacklog) != 0) {
    return Status::Error(where + ": cannot listen: " + ErrnoText(errno));
  }
  return Status::Ok();
}

Status ControlServer::ListenTcp() {
  if (config_.tcp.empty()) return Status::Ok();
  Result<sockaddr_in> addr = ParseTcpEndpoint(config_.tcp);
  if (!addr.ok()) return addr.status();
  const std::string where = "control address " + FormatTcpEndpoint(*addr);
  tcp_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (tcp_fd_ < 0) return Status::Error(where + ": socket: " + ErrnoText(errno));
  const int one = 1;
  setsockopt(tcp_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(tcp_fd_, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    return Status::Error(where + ": cannot bind: " + ErrnoText(errno));
  }
  if (listen(tcp_fd_, kListenBacklog) != 0) {
    return Status::Error(where + ": cannot listen: " + ErrnoText(errno));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof(bound);
  getsockname(tcp_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  tcp_endpoint_ = FormatTcpEndpoint(bound);
  return Status::Ok();
}

void ControlServer::CloseAll() {
  for (const std::unique_ptr<Client>& client : clients_) close(client->fd);
  clients_.clear();
  CloseFd(unix_fd_);
  CloseFd(tcp_fd_);
  CloseFd(wake_fd_);
  // Remove the socket file only if it is still the one we bound.
  struct stat st {};
  if (socket_ino_ != 0 && lstat(config_.unix_path.c_str(), &st) == 0 && st.st_dev == socket_dev_ &&
      st.st_ino == socket_ino_) {
    unlink(config_.unix_path.c_str());
  }
  socket_ino_ = 0;
  tcp_endpoint_.clear();
}

void ControlServer::Run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    // Always accepting: a client past the limit is answered and closed (Accept).
    for (int fd : {unix_fd_, tcp_fd_}) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    const std::size_t first_client = fds.size();
    bool more_queued = false;  // a client has complete commands waiting for its next turn
    for (const std::unique_ptr<Client>& c : clients_) {
      short events = 0;
      if (!c->eof && !c->closing && c->Pending() < kMaxPendingOutput) events |= POLLIN;
      if (c->Pending() > 0) events |= POLLOUT;
      more_queued = more_queued || (!c->closing && c->Pending() < kMaxPendingOutput &&
                                    c->in.find('\n') != std::string::npos);
      fds.push_back({c->fd, events, 0});
    }
    const int timeout_ms = more_queued ? 0 : clients_.empty() ? -1 : 1000;
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot happen with valid descriptors; Stop still cleans up
    }
    if (fds[0].revents != 0) return;

    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      Client& c = *clients_[i];
      const short revents = fds[first_client + i].revents;
      if (revents != 0) c.last_active = now;
      if (revents == 0) {
        if (now - c.last_active > kIdleTimeout) {
          DrainAndClose(c.fd);
          c.fd = -1;
          continue;
        }
        if (c.closing || c.in.find('\n') == std::string::npos) continue;
      }
      // The peer is gone and nothing is readable: its answers can never be delivered.
      bool keep = (revents & POLLIN) ? ReadFrom(c) : !(revents & (POLLHUP | POLLERR));
      if (keep) ExecuteLines(c);
      if (keep && c.Pending() > 0) keep = WriteTo(c);
      if (!keep || (c.closing && c.Pending() == 0)) {
        DrainAndClose(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(clients_, [](const std::unique_ptr<Client>& c) { return c->fd < 0; });
    for (std::size_t i = 1; i < first_client; ++i) {
      if (fds[i].revents & POLLIN) Accept(fds[i].fd);
    }
  }
}

void ControlServer::Accept(int listen_fd) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: no more pending; anything else: retried on the next poll
    }
    // Past the limit a client is told so at once instead of waiting in the backlog.
    const char* refusal = clients_.size() >= kMaxClients ? "too many control clients" : nullptr;
    if (refusal == nullptr && listen_fd == unix_fd_ && !PeerMayControl(fd)) {
      refusal = "permission denied (another user)";
    }
    if (refusal != nullptr) {
      const std::string reply = FormatControlReply(
          false, std::string(refusal) + " (at most " + std::to_string(kMaxClients) +
                     " connections); closing the connection");
      if (send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        // The client is gone already; closing is all that is left.
      }
      DrainAndClose(fd);
      continue;
    }
    auto client = std::make_unique<Client>();
    client->fd = fd;
    clients_.push_back(std::move(client));
  }
}

bool ControlServer::ReadFrom(Client& c) {
  char buf[kReadChunk];
  const ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
  if (n > 0) {
    c.in.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  if (n == 0) {
    c.eof = true;
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

void ControlServer::ExecuteLines(Client& c) {
  std::size_t pos = 0;
  bool too_long = false;
  for (int turn = 0; turn < kCommandsPerTurn && !c.closing && c.Pending() < kMaxPendingOutput;
       ++turn) {
    const std::size_t newline = c.in.find('\n', pos);
    if (newline == std::string::npos) break;
    if (newline - pos > kMaxControlLineBytes) {
      too_long = true;
      break;
    }
    std::string line = c.in.substr(pos, newline - pos);
    pos = newline + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (IsBlankOrComment(line)) {
      c.out += FormatControlReply(true, "");
      continue;
    }
    Result<std::string> result = executor_(line);
    c.out += FormatControlReply(result.ok(), result.ok() ? std::move(*result) : result.message());
  }
  c.in.erase(0, pos);
  const bool has_line = c.in.find('\n') != std::string::npos;
  if (too_long || (!has_line && c.in.size() > kMaxControlLineBytes)) {
    c.out += FormatControlReply(false, "command line longer than " +
                                           std::to_string(kMaxControlLineBytes) +
                                           " bytes; closing the connection");
    c.closing = true;
  }
  // After end of input a partial last line is discarded, never executed (the complete ones
  // still queued get their turns first).
  if (c.closing || (c.eof && !has_line)) {
    c.in.clear();
    c.closing = true;
  }
}

bool ControlServer::WriteTo(Client& c) {
  while (c.Pending() > 0) {
    const ssize_t n =
        send(c.fd, c.out.data() + c.out_pos, c.Pending(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      // EAGAIN: wait for POLLOUT; anything else (EPIPE, ECONNRESET): the client left.
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    c.out_pos += static_cast<std::size_t>(n);
  }
  c.out.clear();
  c.out_pos = 0;
  return true;
}

}  // namespace swemu
