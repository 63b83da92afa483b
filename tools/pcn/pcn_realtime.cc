// `swemu-pcn ddl` and `swemu-pcn ps`: PCN's hosts in real time with kernel sockets, for the
// experiment through a real-time swemu (tools/pcn_experiment.sh). The worker announces each
// burst with hostlib's PcnAnnouncer over a kernel UDP socket (the TOS byte set per datagram),
// then sends the burst as one kernel TCP connection, so real congestion control reacts to the
// switch's marks; the PS answers STARTs with hostlib's PcnResponder and receives the bursts,
// confirming each with one byte so the worker times the burst's completion.
//
// A burst on the wire: 8 bytes of its size (big-endian), then that many bytes; the PS answers
// with one byte once it has them all.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/pcn/handshake.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/wire/byte_order.h"
#include "tools/option_values.h"
#include "tools/pcn/pcn_commands.h"
#include "tools/stop_signal.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

std::atomic<bool>& g_stop = g_stop_requested;  // SIGINT/SIGTERM (tools/stop_signal.h)

TimeNs WallNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SleepUntilWall(TimeNs when) {
  while (!g_stop) {
    const TimeNs now = WallNs();
    if (now >= when) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<TimeNs>(when - now, 50'000'000)));
  }
}

Status ParseIp(const po::variables_map& vm, const char* name, Ipv4Addr* out) {
  if (!vm.count(name)) return Status::Error(std::string("--") + name + ": required");
  Result<Ipv4Addr> ip = ParseIpv4(vm[name].as<std::string>());
  if (!ip.ok()) return Status::Error(std::string("--") + name + ": " + ip.message());
  *out = *ip;
  return Status::Ok();
}

sockaddr_in SockAddr(Ipv4Addr ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  a.sin_port = htons(port);
  return a;
}

// Waits until fd is ready for `events` or the deadline passes (or a signal stops the run).
bool WaitFd(int fd, short events, TimeNs deadline_wall) {
  for (;;) {
    if (g_stop) return false;
    const TimeNs left = deadline_wall - WallNs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<TimeNs>(left / 1'000'000 + 1, 100)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// An Endpoint around the announcer or the responder for hostlib's EventLoop.
class AnnouncerEndpoint final : public Endpoint {
 public:
  explicit AnnouncerEndpoint(PcnAnnouncer& a) : a_(a) {}
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override { a_.OnFrame(now, frame); }
  void OnTimer(TimeNs now) noexcept override { a_.OnTimer(now); }
  TimeNs NextTimer() const noexcept override { return a_.NextTimer(); }
  void Pump(TimeNs) noexcept override {}

 private:
  PcnAnnouncer& a_;
};

class ResponderEndpoint final : public Endpoint {
 public:
  explicit ResponderEndpoint(PcnResponder& r) : r_(r) {}
  void OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept override { r_.OnFrame(frame); }
  void OnTimer(TimeNs) noexcept override {}
  TimeNs NextTimer() const noexcept override { return kNever; }
  void Pump(TimeNs) noexcept override {}

 private:
  PcnResponder& r_;
};

// ---- ddl ----

po::options_description DdlOptions() {
  po::options_description options("swemu-pcn ddl options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("ps", po::value<std::string>()->value_name("IP"), "the PS's address (required)")
      ("bind", po::value<std::string>()->value_name("IP"), "this worker's address (required)")
      ("pcn-port", po::value<std::string>()->default_value("9700"), "UDP port of STARTs and ACKs, here and at the PS")
      ("data-port", po::value<std::string>()->default_value("5000"), "the PS's TCP port for bursts")
      ("burst", po::value<std::string>()->default_value("500KB"), "bytes per burst")
      ("iterations", po::value<std::string>()->default_value("6"), "bursts")
      ("idle", po::value<std::string>()->default_value("7s"), "network-idle period after each burst")
      ("start-at", po::value<std::string>()->default_value("0"), "wall-clock time (ns since the epoch) of the first burst; 0: now")
      ("threshold", po::value<std::string>()->default_value("10"), "the ECN threshold STARTs announce (multiple of 5, 0..75)")
      ("no-pcn", "send the bursts without STARTs (the run without PCN)")
      ("ack-wait", po::value<std::string>()->default_value("50ms"), "longest wait for the ACK; the burst goes then anyway")
      ("retries", po::value<std::string>()->default_value("1"), "STARTs re-sent within the wait")
      ("lead", po::value<std::string>()->default_value("0"), "least time from a START to its burst")
      ("rate", po::value<std::string>()->default_value("0"), "pace each burst at this rate, bits/s (SO_MAX_PACING_RATE); 0: unpaced")
      ("timeout", po::value<std::string>()->default_value("60s"), "a burst that takes longer ends the run (exit 1)")
      ("json", po::value<std::string>()->value_name("FILE"), "write the bursts as JSON here");
  // clang-format on
  return options;
}

struct DdlConfig {
  Ipv4Addr ps = 0, bind = 0;
  uint16_t pcn_port = 0, data_port = 0;
  uint64_t burst = 0, rate_bps = 0;
  uint32_t iterations = 0;
  TimeNs idle = 0, start_at = 0, lead = 0, timeout = 0;
  bool pcn = true;
  PcnAnnouncerOptions announce;
  std::string json;
};

Status ParseDdl(const po::variables_map& vm, DdlConfig* c) {
  SWEMU_RETURN_IF_ERROR(ParseIp(vm, "ps", &c->ps));
  SWEMU_RETURN_IF_ERROR(ParseIp(vm, "bind", &c->bind));
  uint64_t v = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "pcn-port", 1, 65535, &v));
  c->pcn_port = static_cast<uint16_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "data-port", 1, 65535, &v));
  c->data_port = static_cast<uint16_t>(v);
  SWEMU_RETURN_IF_ERROR(Check("burst", ParseBytes(Text(vm, "burst")), &c->burst));
  if (c->burst == 0) return Status::Error("--burst: must be > 0");
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "iterations", 1, 100'000, &v));
  c->iterations = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(Check("idle", ParseDurationOption(Text(vm, "idle")), &v));
  c->idle = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "start-at", 0, INT64_MAX, &v));
  c->start_at = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "threshold", 0, 75, &v));
  c->announce.threshold = static_cast<uint32_t>(v);
  c->pcn = vm.count("no-pcn") == 0;
  SWEMU_RETURN_IF_ERROR(Check("ack-wait", ParseDurationOption(Text(vm, "ack-wait")), &v));
  c->announce.ack_wait_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "retries", 0, 100, &v));
  c->announce.start_retries = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(Check("lead", ParseDurationOption(Text(vm, "lead")), &v));
  c->lead = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &c->rate_bps));
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &v));
  if (v == 0) return Status::Error("--timeout: must be > 0");
  c->timeout = static_cast<TimeNs>(v);
  if (vm.count("json")) c->json = vm["json"].as<std::string>();
  return c->pcn ? c->announce.Validate() : Status::Ok();
}

struct RealBurst {
  uint32_t index = 0;
  TimeNs announced_ns = 0, ack_ns = 0, start_ns = 0, done_ns = 0;  // wall clock; 0: none
  bool acked = false;
};

// One burst over a fresh TCP connection; start and done on the wall clock.
Status SendBurst(const DdlConfig& c, const std::vector<uint8_t>& chunk, RealBurst* b) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Error(std::string("socket: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  const sockaddr_in local = SockAddr(c.bind, 0), remote = SockAddr(c.ps, c.data_port);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
    return Status::Error("bind " + FormatIpv4(c.bind) + ": " + std::strerror(errno));
  }
  if (c.rate_bps != 0) {
    const uint64_t rate = c.rate_bps / 8;  // bytes/s
    setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
  }
  const TimeNs deadline = WallNs() + c.timeout;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&remote), sizeof(remote)) != 0 &&
      errno != EINPROGRESS) {
    return Status::Error("connect to the PS: " + std::string(std::strerror(errno)));
  }
  if (!WaitFd(fd, POLLOUT, deadline)) return Status::Error("connect to the PS: timed out");
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return Status::Error("connect to the PS: " + std::string(std::strerror(err)));
  uint8_t header[8];
  StoreBe32(header, static_cast<uint32_t>(c.burst >> 32));
  StoreBe32(header + 4, static_cast<uint32_t>(c.burst));
  uint64_t left = c.burst + sizeof(header);
  bool first = true;
  while (left > 0) {
    if (!WaitFd(fd, POLLOUT, deadline)) return Status::Error("burst: timed out sending");
    std::vector<uint8_t> scratch;
    const uint8_t* data = chunk.data();
    std::size_t n = std::min<uint64_t>(left, chunk.size());
    if (first) {  // the header leads the first write, so the first segment is a full one
      scratch.assign(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
      std::memcpy(scratch.data(), header, sizeof(header));
      data = scratch.data();
    }
    const ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Status::Error("burst: " + std::string(std::strerror(errno)));
    }
    if (first && w > 0) {
      b->start_ns = WallNs();
      first = false;
    }
    left -= static_cast<uint64_t>(w);
  }
  uint8_t done = 0;
  for (;;) {
    if (!WaitFd(fd, POLLIN, deadline)) return Status::Error("burst: no confirmation from the PS");
    const ssize_t r = recv(fd, &done, 1, 0);
    if (r == 1) break;
    if (r == 0) return Status::Error("burst: the PS closed the connection early");
    if (errno != EAGAIN && errno != EINTR) {
      return Status::Error("burst: " + std::string(std::strerror(errno)));
    }
  }
  b->done_ns = WallNs();
  return Status::Ok();
}

std::string BurstsJson(const DdlConfig& c, const std::vector<RealBurst>& bursts) {
  std::string out = "{\"worker\": \"" + FormatIpv4(c.bind) + "\", \"pcn\": " +
                    (c.pcn ? "true" : "false") + ", \"burst_bytes\": " + std::to_string(c.burst) +
                    ", \"bursts\": [";
  for (std::size_t i = 0; i < bursts.size(); ++i) {
    const RealBurst& b = bursts[i];
    out += std::string(i ? ", " : "") + "{\"index\": " + std::to_string(b.index) +
           ", \"announced_ns\": " + std::to_string(b.announced_ns) +
           ", \"ack_ns\": " + std::to_string(b.ack_ns) + ", \"start_ns\": " +
           std::to_string(b.start_ns) + ", \"done_ns\": " + std::to_string(b.done_ns) +
           ", \"acked\": " + (b.acked ? "true" : "false") + "}";
  }
  return out + "]}\n";
}

// ---- ps ----

po::options_description PsOptions() {
  po::options_description options("swemu-pcn ps options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("bind", po::value<std::string>()->value_name("IP"), "the PS's address (required)")
      ("pcn-port", po::value<std::string>()->default_value("9700"), "UDP port of STARTs and ACKs")
      ("data-port", po::value<std::string>()->default_value("5000"), "TCP port for bursts")
      ("duration", po::value<std::string>()->default_value("0"), "stop after this long; 0: on SIGINT/SIGTERM");
  // clang-format on
  return options;
}

// Receives one burst on a connection and confirms it.
void ServeBurst(int fd, std::atomic<uint64_t>* bursts, std::atomic<uint64_t>* bytes) {
  uint8_t header[8];
  std::size_t got = 0;
  uint64_t want = UINT64_MAX, total = 0;
  std::vector<uint8_t> buf(1 << 16);
  while (!g_stop) {
    const ssize_t r = recv(fd, buf.data(), buf.size(), 0);
    if (r <= 0) {
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      break;
    }
    std::size_t off = 0;
    while (got < sizeof(header) && off < static_cast<std::size_t>(r)) header[got++] = buf[off++];
    if (got == sizeof(header) && want == UINT64_MAX) {
      want = (uint64_t{LoadBe32(header)} << 32) | LoadBe32(header + 4);
    }
    total += static_cast<uint64_t>(r) - off;
    if (want != UINT64_MAX && total >= want) {
      const uint8_t done = 1;
      if (send(fd, &done, 1, MSG_NOSIGNAL) == 1) {
        ++*bursts;
        *bytes += total;
      }
      break;
    }
  }
  close(fd);
}

}  // namespace

int RunDdlCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParsePcnSubcommand("ddl", "--ps IP --bind IP [options]", DdlOptions(), argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  DdlConfig c;
  Status status = ParseDdl(vm, &c);
  std::unique_ptr<UdpSocketTransport> udp;
  if (status.ok() && c.pcn) {
    Result<std::unique_ptr<UdpSocketTransport>> t =
        UdpSocketTransport::Open({c.bind, c.pcn_port, 0, MacAddr{}});
    if (t.ok()) {
      udp = std::move(*t);
    } else {
      status = t.status();
    }
  }
  if (status.ok() && !c.json.empty()) status = CheckOutputPath(c.json, "--json");
  if (!status.ok()) {
    std::cerr << "swemu-pcn ddl: " << status.message() << "\n";
    return 2;
  }
  CatchStopSignals();
  std::unique_ptr<PcnAnnouncer> announcer;
  std::unique_ptr<AnnouncerEndpoint> endpoint;
  EventLoop loop;
  if (c.pcn) {
    announcer = std::make_unique<PcnAnnouncer>(*udp, TcpEnd{MacAddr{}, c.bind, c.pcn_port},
                                               TcpEnd{MacAddr{}, c.ps, c.pcn_port}, c.announce);
    endpoint = std::make_unique<AnnouncerEndpoint>(*announcer);
    loop.Add(udp.get(), endpoint.get());
  }
  const std::vector<uint8_t> chunk(1 << 16, 0x5A);
  std::vector<RealBurst> bursts;
  TimeNs next = c.start_at != 0 ? c.start_at : WallNs();
  int exit_code = 0;
  for (uint32_t i = 0; i < c.iterations && !g_stop; ++i) {
    SleepUntilWall(next);
    if (g_stop) break;
    RealBurst& b = bursts.emplace_back();
    b.index = i;
    b.announced_ns = WallNs();
    if (c.pcn) {
      const TimeNs announced_mono = loop.Now();  // the announcer runs on the loop's clock
      announcer->Announce(announced_mono, i, c.burst);
      loop.RunUntil([&] { return announcer->ready() || g_stop.load(); },
                    c.announce.ack_wait_ns + 1'000'000'000);
      b.acked = announcer->acked();
      if (b.acked) b.ack_ns = b.announced_ns + (announcer->ack_ns() - announced_mono);
      SleepUntilWall(b.announced_ns + c.lead);
    }
    status = SendBurst(c, chunk, &b);
    if (!status.ok()) {
      std::cerr << "swemu-pcn ddl: burst " << i << ": " << status.message() << "\n";
      exit_code = 1;
      break;
    }
    const double bct_ms = static_cast<double>(b.done_ns - b.start_ns) / 1e6;
    std::cout << "burst " << i << ": " << (c.pcn ? (b.acked ? "ACK" : "no ACK") : "no PCN")
              << ", " << bct_ms << " ms, "
              << static_cast<double>(c.burst) * 8 / 1e3 / (bct_ms > 0 ? bct_ms : 1) << " Mbit/s\n";
    next = b.done_ns + c.idle;
  }
  if (g_stop && exit_code == 0) {
    std::cerr << "swemu-pcn ddl: stopped by a signal after " << bursts.size() << " bursts\n";
    exit_code = 1;
  }
  if (!c.json.empty()) {
    if (Status w = WriteTextFile(c.json, BurstsJson(c, bursts), "--json"); !w.ok()) {
      std::cerr << "swemu-pcn ddl: " << w.message() << "\n";
      exit_code = 1;
    }
  }
  return exit_code;
}

int RunPsCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParsePcnSubcommand("ps", "--bind IP [options]", PsOptions(), argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  Ipv4Addr bind_ip = 0;
  uint64_t pcn_port = 0, data_port = 0, duration = 0;
  Status status = ParseIp(vm, "bind", &bind_ip);
  if (status.ok()) status = CheckUint(vm, "pcn-port", 1, 65535, &pcn_port);
  if (status.ok()) status = CheckUint(vm, "data-port", 1, 65535, &data_port);
  if (status.ok()) status = Check("duration", ParseDurationOption(Text(vm, "duration")), &duration);
  std::unique_ptr<UdpSocketTransport> udp;
  if (status.ok()) {
    Result<std::unique_ptr<UdpSocketTransport>> t =
        UdpSocketTransport::Open({bind_ip, static_cast<uint16_t>(pcn_port), 0, MacAddr{}});
    if (t.ok()) {
      udp = std::move(*t);
    } else {
      status = t.status();
    }
  }
  int listener = -1;
  if (status.ok()) {
    listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    const int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const sockaddr_in a = SockAddr(bind_ip, static_cast<uint16_t>(data_port));
    if (listener < 0 || bind(listener, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0 ||
        listen(listener, 64) != 0) {
      status = Status::Error("TCP port " + FormatIpv4(bind_ip) + ":" + std::to_string(data_port) +
                             ": " + std::strerror(errno));
    }
  }
  if (!status.ok()) {
    if (listener >= 0) close(listener);
    std::cerr << "swemu-pcn ps: " << status.message() << "\n";
    return 2;
  }
  CatchStopSignals();
  const TimeNs end = duration != 0 ? WallNs() + static_cast<TimeNs>(duration) : INT64_MAX;
  PcnResponder responder(*udp, TcpEnd{MacAddr{}, bind_ip, static_cast<uint16_t>(pcn_port)});
  ResponderEndpoint endpoint(responder);
  std::thread answers([&] {
    EventLoop loop;
    loop.Add(udp.get(), &endpoint);
    loop.RunUntil([&] { return g_stop.load() || WallNs() >= end; }, INT64_MAX);
  });
  std::atomic<uint64_t> bursts{0}, bytes{0};
  std::vector<std::thread> connections;
  while (!g_stop && WallNs() < end) {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    connections.emplace_back(ServeBurst, fd, &bursts, &bytes);
  }
  g_stop = true;
  answers.join();
  for (std::thread& t : connections) t.join();
  close(listener);
  std::cout << "ps: answered " << responder.stats().acks_sent << " STARTs ("
            << responder.stats().malformed << " malformed), received " << bursts << " bursts, "
            << FormatSi(static_cast<double>(bytes.load()), "B") << "\n";
  return 0;
}

}  // namespace swemu
