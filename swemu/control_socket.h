#pragma once
// What the control server and swemu-cli share: the default socket path, the TCP endpoint syntax
// and the wire protocol. The protocol: one command per '\n'-terminated line (at most
// kMaxControlLineBytes); each line is answered by "OK <n>\n" or "ERR <n>\n" and n bytes of body
// (the command's output, or its one-line error).
#include <netinet/in.h>

#include <cstddef>
#include <string>

#include "pipeline/core/status.h"

namespace swemu {

inline constexpr std::size_t kMaxControlLineBytes = 64 * 1024;
// Per-user so that two users never collide; root gets a system path.
inline constexpr const char* kRootControlSocket = "/run/swemu.sock";

// "/run/swemu.sock" for root; for anyone else a socket in a directory only they can enter:
// "$XDG_RUNTIME_DIR/swemu.sock", or "/tmp/swemu-<uid>/swemu.sock" without XDG_RUNTIME_DIR.
std::string DefaultControlSocketPath();
// Checks (and with `create`, makes) the directory of a non-root default socket: it must be a
// real directory owned by this user with no access for anyone else, so no other user can
// plant a socket there. Any other path: nothing to check.
Status CheckPrivateSocketDirectory(const std::string& socket_path, bool create);
// The uid of the process on the other end of a Unix socket, or an error.
Result<uid_t> PeerUid(int fd);

// "PORT" or "ADDR:PORT"; ADDR is an IPv4 address or "localhost" and defaults to 127.0.0.1.
Result<sockaddr_in> ParseTcpEndpoint(const std::string& spec);
std::string FormatTcpEndpoint(const sockaddr_in& addr);

// "OK <n>\n<body>" or "ERR <n>\n<body>"; an error body is made one line.
std::string FormatControlReply(bool ok, std::string body);

}  // namespace swemu
