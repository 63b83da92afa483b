#pragma once
// The client side of the control socket (swemu-cli and tests): connect to a Unix socket or a
// TCP endpoint, send one command line, read its answer. Blocking I/O.
#include <memory>
#include <string>

#include "pipeline/core/status.h"

namespace swemu {

struct ControlReply {
  bool ok = false;
  std::string body;  // the command's output, or its one-line error
};

class ControlClient {
 public:
  ControlClient() = default;
  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // One-line errors: "cannot connect to PATH: No such file or directory". A Unix socket must be
  // served by this user (or root): a socket another user planted is refused. Connecting,
  // sending and each wait for an answer give up after `timeout_ms` (0: wait for ever).
  static Result<std::unique_ptr<ControlClient>> ConnectUnix(const std::string& path,
                                                            int timeout_ms = kDefaultTimeoutMs);
  static Result<std::unique_ptr<ControlClient>> ConnectTcp(const std::string& endpoint,
                                                           int timeout_ms = kDefaultTimeoutMs);
  static constexpr int kDefaultTimeoutMs = 10'000;

  // Sends `line` (without its '\n') and waits for the answer. An error Status means the
  // connection failed or closed; a command that failed is a reply with ok == false.
  Result<ControlReply> Call(const std::string& line);

 private:
  explicit ControlClient(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}
  Status ReadMore();

  int fd_ = -1;
  int timeout_ms_ = 0;
  std::string peer_;    // for messages
  std::string buffer_;  // received, not yet consumed
};

}  // namespace swemu
