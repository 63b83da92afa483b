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

// "/run/swemu.sock" for root, "/tmp/swemu-<uid>.sock" for anyone else.
std::string DefaultControlSocketPath();

// "PORT" or "ADDR:PORT"; ADDR is an IPv4 address or "localhost" and defaults to 127.0.0.1.
Result<sockaddr_in> ParseTcpEndpoint(const std::string& spec);
std::string FormatTcpEndpoint(const sockaddr_in& addr);

// "OK <n>\n<body>" or "ERR <n>\n<body>"; an error body is made one line.
std::string FormatControlReply(bool ok, std::string body);

}  // namespace swemu
