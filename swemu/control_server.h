#pragma once
// The live control socket: a Unix socket (and, only when asked, a TCP port on loopback by
// default) serving the switch's command table to swemu-cli and scripts. One thread polls the
// listeners and every client with non-blocking I/O; each complete line runs the executor on that
// thread and its answer is queued for the client (protocol in swemu/control_socket.h).
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct ControlServerConfig {
  std::string unix_path;  // empty = no Unix socket
  mode_t mode = 0600;     // permissions of the socket file
  std::string tcp;        // empty = none; "PORT" or "ADDR:PORT" (ADDR defaults to 127.0.0.1)
};

// Runs one command line and returns its output or its one-line error. Called on the server's
// thread, one line at a time.
using ControlExecutor = std::function<Result<std::string>(const std::string& line)>;

class ControlServer {
 public:
  ControlServer(ControlServerConfig config, ControlExecutor executor);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Creates the sockets and starts serving. A one-line error naming the path or address:
  // a live server already on the path, a path that is not a socket, a missing directory, a bad
  // TCP address, a failed bind or listen. A stale socket file (nobody listening) is replaced.
  Status Start();
  // Stops the thread, closes every client and removes the socket file Start created.
  void Stop();

  // "ADDR:PORT" actually bound (useful with port 0); empty without TCP.
  const std::string& tcp_endpoint() const { return tcp_endpoint_; }

 private:
  struct Client;

  Status ListenUnix();
  Status ListenTcp();
  void Run();
  void Accept(int listen_fd);
  // Reads what is available; false when the client is to be dropped at once.
  bool ReadFrom(Client& client);
  void ExecuteLines(Client& client);
  bool WriteTo(Client& client);
  void CloseAll();

  ControlServerConfig config_;
  ControlExecutor executor_;
  int unix_fd_ = -1;
  int tcp_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that tells the thread to stop
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;  // the file we bound, so Stop never unlinks another server's socket
  std::string tcp_endpoint_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::thread thread_;
};

}  // namespace swemu
