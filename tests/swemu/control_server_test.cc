// The control socket server over a real l2l3 switch: the protocol, bad and over-long commands,
// clients that leave early, the socket file's permissions and ownership of its path, TCP.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "swemu/control_socket.h"

#include "tests/swemu/control_fixture.h"

namespace swemu::testing {
namespace {

constexpr const char* kAddB = "table_add dmac forward 00:00:00:00:00:0b => 1";

TEST_F(ControlTest, CommandRoundTrip) {
  StartServer();
  EXPECT_NE(Must(kAddB).find("Entry has been added with handle"), std::string::npos);
  EXPECT_NE(Must("table_dump dmac").find("00:00:00:00:00:0b"), std::string::npos);
}

TEST_F(ControlTest, RawRepliesHaveHeaderAndExactBody) {
  StartServer();
  RawClient raw(path_);
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("\n# a comment\n  \r\ntable_dump dmac\r\n"));
  EXPECT_EQ(raw.ReadReply(), "OK 0\n");
  EXPECT_EQ(raw.ReadReply(), "OK 0\n");
  EXPECT_EQ(raw.ReadReply(), "OK 0\n");
  const std::string dump = raw.ReadReply();
  const std::string body = dump.substr(dump.find('\n') + 1);
  EXPECT_EQ(dump.substr(0, dump.find('\n')), "OK " + std::to_string(body.size()));
  EXPECT_NE(body.find("dmac"), std::string::npos) << body;
}

TEST_F(ControlTest, BadCommandAnswersOneErrorLineAndChangesNothing) {
  StartServer();
  Must(kAddB);
  const std::string counters = Must("show counters");
  const std::string dump = Must("table_dump dmac");
  std::unique_ptr<ControlClient> client = Connect();
  ASSERT_NE(client, nullptr);
  for (const char* bad :
       {"table_add dmac fwd 00:00:00:00:00:0c => 1", "table_add dmac forward 00:00:00:00:00:0c",
        "no_such_command 1 2", "table_add dmac forward 00:00:00:00:00:0b => 2",
        "table_delete dmac 99"}) {
    Result<ControlReply> reply = client->Call(bad);
    ASSERT_TRUE(reply.ok()) << reply.message();
    EXPECT_FALSE(reply->ok) << bad;
    EXPECT_FALSE(reply->body.empty()) << bad;
    EXPECT_EQ(reply->body.find('\n'), std::string::npos) << bad << ": " << reply->body;
  }
  EXPECT_EQ(Must("show counters"), counters);
  EXPECT_EQ(Must("table_dump dmac"), dump);
}

TEST_F(ControlTest, SocketFileIsOwnerOnlyByDefault) {
  StartServer();
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ControlTest, CustomModeIsHonored) {
  StartServer(0660);
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
}

TEST_F(ControlTest, SecondServerOnThePathIsRefusedWhileTheFirstServes) {
  StartServer();
  ControlServer second({path_, 0600, ""}, Executor());
  Status status = second.Start();
  EXPECT_EQ(status.message(), "control socket " + path_ + " is in use by another process");
  second.Stop();  // must not remove the first server's socket
  EXPECT_NE(Must("table_dump dmac").find("dmac"), std::string::npos);
}

TEST_F(ControlTest, StaleSocketFileIsReplaced) {
  {  // A socket file nobody listens on, as a crashed server leaves it.
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);
  }
  StartServer();
  EXPECT_NE(Must("table_dump dmac").find("dmac"), std::string::npos);
}

TEST_F(ControlTest, PathThatIsNotASocketIsRefusedAndKept) {
  std::ofstream(path_) << "precious\n";
  ControlServer server({path_, 0600, ""}, Executor());
  EXPECT_EQ(server.Start().message(), "control socket " + path_ + ": exists and is not a socket");
  server.Stop();
  std::ifstream in(path_);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
}

TEST_F(ControlTest, MissingDirectoryIsNamed) {
  const std::string path = dir_ + "/nope/ctl.sock";
  ControlServer server({path, 0600, ""}, Executor());
  EXPECT_EQ(server.Start().message(),
            "control socket " + path + ": directory " + dir_ + "/nope does not exist");
}

TEST_F(ControlTest, StopRemovesTheSocketFile) {
  StartServer();
  ASSERT_TRUE(std::filesystem::exists(path_));
  server_->Stop();
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(ControlTest, HalfLineThenDisconnectRunsNothing) {
  StartServer();
  {
    RawClient raw(path_);
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send("table_add dmac forward 00:00:00:00:00:0c => 1"));
  }
  const std::string dump = Must("table_dump dmac");
  EXPECT_EQ(dump.find("00:00:00:00:00:0c"), std::string::npos) << dump;
  EXPECT_NE(Must(kAddB).find("handle"), std::string::npos);
}

TEST_F(ControlTest, ClientLeavingBeforeReadingALongAnswerHarmsNothing) {
  StartServer();
  {
    RawClient raw(path_);
    ASSERT_TRUE(raw.connected());
    std::string many;
    for (int i = 0; i < 2000; ++i) many += "help\n";  // megabytes of answers, never read
    ASSERT_TRUE(raw.Send(many));
    raw.Read(10);
  }
  EXPECT_NE(Must(kAddB).find("handle"), std::string::npos);
  EXPECT_NE(Must("table_dump dmac").find("00:00:00:00:00:0b"), std::string::npos);
}

TEST_F(ControlTest, OverLongLineGetsAnErrorAndTheConnectionCloses) {
  StartServer();
  RawClient raw(path_);
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send(std::string(70000, 'x')));
  const std::string reply = raw.ReadReply();
  EXPECT_EQ(reply.rfind("ERR ", 0), 0u) << reply.substr(0, 100);
  EXPECT_NE(reply.find("longer than 65536 bytes"), std::string::npos) << reply.substr(0, 100);
  EXPECT_TRUE(raw.AtEof());
  EXPECT_NE(Must("table_dump dmac").find("dmac"), std::string::npos);
}

TEST_F(ControlTest, LineOfExactlyTheLimitIsExecuted) {
  StartServer();
  RawClient raw(path_);
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send(std::string(65536, 'y') + "\n\n"));
  const std::string reply = raw.ReadReply();
  EXPECT_NE(reply.find("unknown command: yyy"), std::string::npos) << reply.substr(0, 100);
  EXPECT_EQ(raw.ReadReply(), "OK 0\n");  // still connected
}

TEST_F(ControlTest, InterleavedClientsEachGetTheirOwnAnswers) {
  StartServer();
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<std::string> lines;
  for (int i = 0; i < 5; ++i) {
    clients.push_back(std::make_unique<RawClient>(path_));
    ASSERT_TRUE(clients.back()->connected());
    lines.push_back("table_add dmac forward 00:00:00:00:01:0" + std::to_string(i) + " => " +
                    std::to_string(i % 4) + "\n");
    ASSERT_TRUE(clients[i]->Send(lines[i].substr(0, 20)));
  }
  for (int i = 4; i >= 0; --i) ASSERT_TRUE(clients[i]->Send(lines[i].substr(20)));
  for (int i = 0; i < 5; ++i) {
    EXPECT_NE(clients[i]->ReadReply().find("Entry has been added"), std::string::npos) << i;
  }
  const std::string dump = Must("table_dump dmac");
  for (int i = 0; i < 5; ++i) {
    EXPECT_NE(dump.find("00:00:00:00:01:0" + std::to_string(i)), std::string::npos) << dump;
  }
}

TEST_F(ControlTest, NoTcpUnlessAsked) {
  StartServer();
  EXPECT_EQ(server_->tcp_endpoint(), "");
}

TEST_F(ControlTest, TcpBindsLoopbackByDefault) {
  StartServer(0600, "0");
  const std::string endpoint = server_->tcp_endpoint();
  EXPECT_EQ(endpoint.rfind("127.0.0.1:", 0), 0u) << endpoint;
  EXPECT_NE(endpoint, "127.0.0.1:0");
  Result<std::unique_ptr<ControlClient>> client = ControlClient::ConnectTcp(endpoint);
  ASSERT_TRUE(client.ok()) << client.message();
  Result<ControlReply> reply = (*client)->Call(kAddB);
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_TRUE(reply->ok) << reply->body;
}

TEST_F(ControlTest, BadTcpAddressIsRefusedAndLeavesNoSocketFile) {
  ControlServer server({path_, 0600, "localhost:http"}, Executor());
  EXPECT_EQ(server.Start().message(),
            "control address \"localhost:http\": \"http\" is not a port (0..65535)");
  EXPECT_FALSE(std::filesystem::exists(path_));
  ControlServer bad_host({"", 0600, "10.0.0.x:80"}, Executor());
  EXPECT_EQ(bad_host.Start().message(),
            "control address \"10.0.0.x:80\": \"10.0.0.x\" is not an IPv4 address");
}

// 321 idle connections used to lock everyone out and hang swemu-cli: past 256 a client is told
// so at once, and those within the limit are still served.
TEST_F(ControlTest, ClientsPastTheLimitAreRefusedWithALineNotLeftWaiting) {
  StartServer();
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 256; ++i) {
    idle.push_back(std::make_unique<RawClient>(path_));
    ASSERT_TRUE(idle.back()->connected()) << i;
  }
  ASSERT_TRUE(idle.front()->Send("table_dump dmac\n"));  // the server has taken all 256
  EXPECT_EQ(idle.front()->ReadReply().substr(0, 3), "OK ");
  RawClient extra(path_);
  ASSERT_TRUE(extra.connected());
  const std::string refusal = extra.ReadReply();
  EXPECT_NE(refusal.find("too many control clients (at most 256 connections)"), std::string::npos)
      << refusal;
  EXPECT_TRUE(extra.AtEof());
  idle.pop_back();
  idle.erase(idle.begin());
  std::unique_ptr<ControlClient> again;
  for (int i = 0; i < 100 && again == nullptr; ++i) {  // the server notices the closed ones
    again = Connect();
    if (again != nullptr && !again->Call("table_dump dmac").ok()) again.reset();
    if (again == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(again, nullptr);
}

// One client pipelining 1,000 commands delayed the others by seconds; now the others are
// answered between its turns of 16 commands.
TEST_F(ControlTest, AClientPipeliningThousandsOfCommandsDoesNotHoldOthersUp) {
  std::atomic<int> run{0};
  std::atomic<int> greedy_done_at_other{-1};
  server_ = std::make_unique<ControlServer>(
      ControlServerConfig{path_, 0600, ""}, [&](const std::string& line) -> Result<std::string> {
        if (line == "other") {
          greedy_done_at_other = run.load();
          return std::string("other");
        }
        ++run;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        return std::string("greedy");
      });
  ASSERT_TRUE(server_->Start().ok());
  RawClient greedy(path_);
  ASSERT_TRUE(greedy.connected());
  std::string burst;
  for (int i = 0; i < 1000; ++i) burst += "greedy\n";
  ASSERT_TRUE(greedy.Send(burst));
  while (run.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::unique_ptr<ControlClient> other = Connect();
  ASSERT_NE(other, nullptr);
  Result<ControlReply> reply = other->Call("other");
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(reply->body, "other");
  EXPECT_LT(greedy_done_at_other.load(), 500) << "answered only after the greedy client's burst";
}

// swemu-cli hung for ever on a stopped swemu; a server that accepts and never answers now
// ends it after --timeout with one line.
TEST_F(ControlTest, TheClientGivesUpOnAServerThatNeverAnswers) {
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  Result<std::unique_ptr<ControlClient>> client = ControlClient::ConnectUnix(path_, 200);
  ASSERT_TRUE(client.ok()) << client.message();
  const auto start = std::chrono::steady_clock::now();
  Result<ControlReply> reply = (*client)->Call("show stats");
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.message().find("no answer from " + path_ + " within 200 ms (--timeout)"),
            std::string::npos)
      << reply.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  close(listener);
}

// A socket another user serves (planted where swemu-cli looks) is refused, as swemu refuses
// clients of another user.
TEST_F(ControlTest, ASocketServedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  // Where another user can reach (the fixture's directory is 0700).
  const std::string dir = ::testing::TempDir() + "swemu_planted_" + std::to_string(getpid()) + "/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  chmod(dir.c_str(), 0777);
  const std::string planted = dir + "swemu.sock";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t impostor = fork();
  ASSERT_GE(impostor, 0);
  if (impostor == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, planted.c_str(), sizeof(addr.sun_path) - 1);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 4) != 0) {
      _exit(2);
    }
    chmod(planted.c_str(), 0777);
    if (write(ready[1], "r", 1) != 1) _exit(3);
    pause();
    _exit(0);
  }
  close(ready[1]);  // a child that fails closes the pipe: read() then returns 0, not never
  char byte = 0;
  const bool up = read(ready[0], &byte, 1) == 1;
  close(ready[0]);
  Result<std::unique_ptr<ControlClient>> client = Status::Error("the impostor did not start");
  if (up) client = ControlClient::ConnectUnix(planted, 1000);
  kill(impostor, SIGKILL);
  waitpid(impostor, nullptr, 0);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.message(),
            planted + " is served by uid 65534, not by you or root: refusing to talk to it");
}

// Without root, the default socket lives in a directory only its user can enter; one that
// others can write to (where a socket could be planted) is refused.
TEST(ControlSocketPathTest, ANonRootDefaultSocketNeedsAPrivateDirectory) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  const std::string runtime = ::testing::TempDir() + "swemu_xdg_" + std::to_string(getpid());
  std::filesystem::remove_all(runtime);
  std::filesystem::create_directories(runtime);
  chown(runtime.c_str(), 65534, 65534);
  const pid_t user = fork();
  ASSERT_GE(user, 0);
  if (user == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
    const std::string path = DefaultControlSocketPath();
    if (path != runtime + "/swemu.sock") _exit(11);
    chmod(runtime.c_str(), 0700);
    if (!CheckPrivateSocketDirectory(path, true).ok()) _exit(12);
    chmod(runtime.c_str(), 0777);  // now anyone could plant a socket there
    if (CheckPrivateSocketDirectory(path, true).ok()) _exit(13);
    unsetenv("XDG_RUNTIME_DIR");
    const std::string fallback = DefaultControlSocketPath();
    if (fallback != "/tmp/swemu-65534/swemu.sock") _exit(14);
    if (!CheckPrivateSocketDirectory(fallback, true).ok()) _exit(15);
    struct stat st {};
    if (stat("/tmp/swemu-65534", &st) != 0 || (st.st_mode & 0777) != 0700) _exit(16);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(user, &status, 0), user);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::filesystem::remove_all(runtime);
  std::filesystem::remove_all("/tmp/swemu-65534");
}

}  // namespace
}  // namespace swemu::testing
