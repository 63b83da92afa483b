#include "swemu/control_socket.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace swemu {

namespace {

std::string PrivateSocketDirectory() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return xdg;
  return "/tmp/swemu-" + std::to_string(geteuid());
}

}  // namespace

std::string DefaultControlSocketPath() {
  if (geteuid() == 0) return kRootControlSocket;
  return PrivateSocketDirectory() + "/swemu.sock";
}

Status CheckPrivateSocketDirectory(const std::string& socket_path, bool create) {
  if (geteuid() == 0) return Status::Ok();
  const std::string dir = PrivateSocketDirectory();
  if (socket_path != dir + "/swemu.sock") return Status::Ok();
  if (create && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Error("control socket directory " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return Status::Error("control socket directory " + dir + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return Status::Error("control socket directory " + dir +
                         " is not a directory of yours that only you can enter (mode 0700); "
                         "refusing to use it");
  }
  return Status::Ok();
}

Result<uid_t> PeerUid(int fd) {
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return Status::Error(std::string("cannot read the peer's credentials: ") +
                         std::strerror(errno));
  }
  return peer.uid;
}

Result<sockaddr_in> ParseTcpEndpoint(const std::string& spec) {
  std::string host = "127.0.0.1";
  std::string port_text = spec;
  const std::size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    host = spec.substr(0, colon);
    port_text = spec.substr(colon + 1);
    if (host == "localhost") host = "127.0.0.1";
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status::Error("control address \"" + spec + "\": \"" + host +
                         "\" is not an IPv4 address");
  }
  unsigned port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port > 65535) {
    return Status::Error("control address \"" + spec + "\": \"" + port_text +
                         "\" is not a port (0..65535)");
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

std::string FormatTcpEndpoint(const sockaddr_in& addr) {
  char host[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, host, sizeof(host));
  return std::string(host) + ":" + std::to_string(ntohs(addr.sin_port));
}

std::string FormatControlReply(bool ok, std::string body) {
  if (!ok) std::replace(body.begin(), body.end(), '\n', ' ');
  return (ok ? "OK " : "ERR ") + std::to_string(body.size()) + "\n" + body;
}

}  // namespace swemu
