// swemu-cli: the client of a running swemu's control socket. With command words it runs that one
// command (one-shot); without, it reads commands from stdin, with a prompt when stdin is a
// terminal. Exit status: 0 ok, 1 a command failed, 2 a usage or connection problem.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/control/units.h"
#include "swemu/control_client.h"
#include "swemu/control_socket.h"
#include "swemu/version.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {

namespace po = boost::program_options;

constexpr int kExitFailed = 1;
constexpr int kExitTrouble = 2;

po::options_description Options() {
  po::options_description options("swemu-cli options", 100);
  // clang-format off
  options.add_options()
      ("socket,s", po::value<std::string>()->value_name("PATH"),
       ("control socket of the swemu to talk to (default " + DefaultControlSocketPath() + ")")
           .c_str())
      ("tcp", po::value<std::string>()->value_name("ADDR:PORT"),
       "talk over TCP instead (PORT alone means 127.0.0.1:PORT)")
      ("timeout", po::value<std::string>()->value_name("DURATION")->default_value("10s"),
       "give up when swemu does not answer within this (a plain number means seconds)")
      ("version", "print the version and exit")
      ("help,h", "print this help and exit");
  // clang-format on
  return options;
}

void PrintBody(const std::string& body) {
  std::cout << body;
  if (!body.empty() && body.back() != '\n') std::cout << '\n';
  std::cout.flush();
}

// Reads commands from stdin until EOF, "quit" or "exit".
int Interactive(ControlClient& client, const std::string& peer) {
  const bool tty = isatty(STDIN_FILENO) != 0;
  if (tty) {
    std::cout << "swemu-cli " << kSwemuVersion << ", connected to " << peer
              << ". 'help' lists the commands, 'quit' leaves.\n";
  }
  bool failed = false;
  std::string line;
  for (int line_no = 1;; ++line_no) {
    if (tty) std::cout << "swemu> " << std::flush;
    if (!std::getline(std::cin, line)) {
      if (tty) std::cout << '\n';
      break;
    }
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::size_t last = line.find_last_not_of(" \t\r");
    const std::string word = line.substr(first, last - first + 1);
    if (word == "quit" || word == "exit") break;
    Result<ControlReply> reply = client.Call(line);
    if (!reply.ok()) {
      std::cerr << "swemu-cli: " << reply.message() << '\n';
      return kExitTrouble;
    }
    if (reply->ok) {
      PrintBody(reply->body);
    } else {
      failed = true;
      std::cerr << "swemu-cli: " << (tty ? "" : "line " + std::to_string(line_no) + ": ")
                << reply->body << '\n';
    }
  }
  return failed && !tty ? kExitFailed : 0;
}

int Main(int argc, char** argv) {
  po::positional_options_description positional;
  positional.add("command", -1);
  po::options_description all = Options();
  all.add_options()("command", po::value<std::vector<std::string>>());
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-cli: " << e.what() << '\n';
    return kExitTrouble;
  }
  if (vm.count("help")) {
    std::cout << "usage: swemu-cli [--socket PATH | --tcp ADDR:PORT] [COMMAND WORDS...]\n"
                 "  with COMMAND WORDS: run that command and print its output;\n"
                 "  without: read commands from stdin, one per line.\n\n"
              << Options()
              << "\nexamples:\n"
                 "  swemu-cli show stats\n"
                 "  swemu-cli table_add dmac forward 00:00:00:00:00:0b '=>' 1\n"
                 "  swemu-cli --tcp 127.0.0.1:9090 counter_read drop\n"
                 "  swemu-cli help            (every command of the running switch)\n";
    return 0;
  }
  if (vm.count("version")) {
    std::cout << "swemu-cli " << kSwemuVersion << '\n';
    return 0;
  }
  if (vm.count("socket") && vm.count("tcp")) {
    std::cerr << "swemu-cli: --socket and --tcp exclude each other\n";
    return kExitTrouble;
  }
  const bool tcp = vm.count("tcp") != 0;
  const std::string peer = tcp                  ? vm["tcp"].as<std::string>()
                           : vm.count("socket") ? vm["socket"].as<std::string>()
                                                : DefaultControlSocketPath();
  Result<uint64_t> timeout_ns = ParseDurationOption(vm["timeout"].as<std::string>());
  if (!timeout_ns.ok() || *timeout_ns < 1'000'000 || *timeout_ns > 86400ull * 1'000'000'000) {
    std::cerr << "swemu-cli: --timeout: "
              << (timeout_ns.ok() ? vm["timeout"].as<std::string>() + " is not in [1ms, 1 day]"
                                  : timeout_ns.message())
              << '\n';
    return kExitTrouble;
  }
  const int timeout_ms = static_cast<int>(*timeout_ns / 1'000'000);
  Result<std::unique_ptr<ControlClient>> client =
      tcp ? ControlClient::ConnectTcp(peer, timeout_ms) : ControlClient::ConnectUnix(peer, timeout_ms);
  if (!client.ok()) {
    std::cerr << "swemu-cli: " << client.message() << '\n';
    return kExitTrouble;
  }
  if (!vm.count("command")) return Interactive(**client, peer);

  std::string line;
  for (const std::string& word : vm["command"].as<std::vector<std::string>>()) {
    line += (line.empty() ? "" : " ") + word;
  }
  Result<ControlReply> reply = (*client)->Call(line);
  if (!reply.ok()) {
    std::cerr << "swemu-cli: " << reply.message() << '\n';
    return kExitTrouble;
  }
  if (!reply->ok) {
    std::cerr << "swemu-cli: " << reply->body << '\n';
    return kExitFailed;
  }
  PrintBody(reply->body);
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-cli", [&] { return swemu::Main(argc, argv); });
}
