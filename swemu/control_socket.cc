#include "swemu/control_socket.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace swemu {

std::string DefaultControlSocketPath() {
  const uid_t uid = geteuid();
  if (uid == 0) return kRootControlSocket;
  return "/tmp/swemu-" + std::to_string(uid) + ".sock";
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
