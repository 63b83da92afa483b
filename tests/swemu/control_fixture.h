#pragma once
// A real l2l3 switch served by a ControlServer on a socket in a fresh temporary directory, and a
// raw client that speaks the wire protocol byte by byte (half lines, early disconnects).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "swemu/control_client.h"
#include "swemu/control_server.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu::testing {

// Connected to a Unix socket; every read gives up after a few seconds so a bug cannot hang.
class RawClient {
 public:
  explicit RawClient(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    connected_ = connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { Close(); }

  bool connected() const { return connected_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Up to `n` bytes, fewer at EOF or after the timeout.
  std::string Read(std::size_t n) {
    std::string out;
    char buf[8192];
    while (out.size() < n) {
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, kTimeoutMs) <= 0) break;
      const ssize_t got = recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (got <= 0) break;
      out.append(buf, static_cast<std::size_t>(got));
    }
    return out;
  }
  // One whole answer: the header line and its body.
  std::string ReadReply() {
    std::string header;
    while (header.empty() || header.back() != '\n') {
      std::string byte = Read(1);
      if (byte.empty()) return header;
      header += byte;
    }
    const std::size_t size = std::strtoull(header.c_str() + header.find(' ') + 1, nullptr, 10);
    return header + Read(size);
  }
  // True when the server closed the connection (EOF with nothing more to read).
  bool AtEof() {
    pollfd pfd{fd_, POLLIN, 0};
    char byte;
    return poll(&pfd, 1, kTimeoutMs) == 1 && recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  static constexpr int kTimeoutMs = 5000;
  int fd_ = -1;
  bool connected_ = false;
};

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(harness_.ok()) << harness_.error();
    std::string pattern = ::testing::TempDir() + "swemu_ctl_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/ctl.sock";
  }
  void TearDown() override {
    server_.reset();  // stops the thread before the switch goes away
    std::filesystem::remove_all(dir_);
  }

  ControlExecutor Executor() {
    return [this](const std::string& line) { return harness_.sw().commands().Execute(line); };
  }
  // Starts the fixture's server on `path_` (plus TCP when asked).
  void StartServer(mode_t mode = 0600, const std::string& tcp = "") {
    server_ = std::make_unique<ControlServer>(ControlServerConfig{path_, mode, tcp}, Executor());
    Status status = server_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
  }
  std::unique_ptr<ControlClient> Connect() {
    Result<std::unique_ptr<ControlClient>> client = ControlClient::ConnectUnix(path_);
    EXPECT_TRUE(client.ok()) << client.message();
    return client.ok() ? std::move(*client) : nullptr;
  }
  // The output of a command that must succeed.
  std::string Must(const std::string& line) {
    std::unique_ptr<ControlClient> client = Connect();
    if (client == nullptr) return "";
    Result<ControlReply> reply = client->Call(line);
    EXPECT_TRUE(reply.ok()) << reply.message();
    if (!reply.ok()) return "";
    EXPECT_TRUE(reply->ok) << line << ": " << reply->body;
    return reply->body;
  }

  SwitchHarness harness_{SwitchConfig{}};
  std::string dir_;
  std::string path_;
  std::unique_ptr<ControlServer> server_;
};

}  // namespace swemu::testing
