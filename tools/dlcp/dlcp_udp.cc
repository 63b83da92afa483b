// `swemu-dlcp send` and `swemu-dlcp recv` (tools/dlcp/dlcp_udp.h). The host is hostlib's
// DlcpHost on a UdpSocketTransport, driven by hostlib's EventLoop: the same code as in the
// engine and on DPDK ports. The socket sets each datagram's TOS byte from the frame, so a swemu
// `dlcp` switch on the path sees the DSCP classes and ECT/Not-ECT. `--loss` drops that share of
// the frames arriving at this host (seeded), a lossy link for trying the recovery paths.
#include "tools/dlcp/dlcp_udp.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "hostlib/dlcp/host.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/engine/rng.h"
#include "tools/option_values.h"
#include "tools/stop_signal.h"
#include "tools/subcommand.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

// What both ends share.
struct Common {
  Ipv4Addr bind = 0;
  uint16_t port = kDlcpDefaultUdpPort;
  uint32_t tensors = 1;
  double loss = 0;
  TimeNs timeout_ns = 0;
  uint64_t seed = 1;
  bool busy_poll = false;
  TimeNs rate_period_ns = 200'000;
  uint64_t max_tensor_bytes = uint64_t{1} << 30;  // recv's --max-tensor
  std::string json;
};

void AddCommonOptions(po::options_description& options, const char* tensors_help) {
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("bind", po::value<std::string>()->value_name("IP"), "this host's address (required)")
      ("port", po::value<std::string>()->default_value("9800"), "DLCP's UDP port, the same at both ends")
      ("tensors", po::value<std::string>()->default_value("1"), tensors_help)
      ("loss", po::value<std::string>()->default_value("0"), "drop this share of the frames arriving here (a lossy link), e.g. 5%")
      ("timeout", po::value<std::string>()->default_value("30s"), "give up after this long")
      ("seed", po::value<std::string>()->default_value("1"), "seed (gradients, --loss)")
      ("busy-poll", "never sleep between polls (a core to itself; steadier rate reports)")
      ("rate-period", po::value<std::string>()->default_value("auto"), "the rate control's period; auto: the paper's 200 us, "
                                                                        "or 64 full packets' time at --rate when longer (send; recv reports every 200 us)")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the flows as JSON here");
  // clang-format on
}

Status ParseCommon(const po::variables_map& vm, Common* c) {
  if (!vm.count("bind")) return Status::Error("--bind: required");
  SWEMU_RETURN_IF_ERROR(Check("bind", ParseIpv4(Text(vm, "bind")), &c->bind));
  uint64_t v = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "port", 1, 65535, &v));
  c->port = static_cast<uint16_t>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "tensors", 1, 10000, &v));
  c->tensors = static_cast<uint32_t>(v);
  SWEMU_RETURN_IF_ERROR(Check("loss", ParseProbability(Text(vm, "loss")), &c->loss));
  if (c->loss >= 1) return Status::Error("--loss: must be below 100%");
  SWEMU_RETURN_IF_ERROR(Check("timeout", ParseDurationOption(Text(vm, "timeout")), &v));
  if (v == 0) return Status::Error("--timeout: must be > 0");
  c->timeout_ns = static_cast<TimeNs>(v);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &c->seed));
  c->busy_poll = vm.count("busy-poll") != 0;
  if (Text(vm, "rate-period") != "auto") {
    SWEMU_RETURN_IF_ERROR(Check("rate-period", ParseDurationOption(Text(vm, "rate-period")), &v));
    if (v < 10'000 || v > 1'000'000'000) return Status::Error("--rate-period: 10us to 1s");
    c->rate_period_ns = static_cast<TimeNs>(v);
  } else {
    c->rate_period_ns = 0;  // the sender's rate decides
  }
  if (vm.count("json")) {
    c->json = Text(vm, "json");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(c->json, "--json"));
  }
  return Status::Ok();
}

// The socket, dropping a share of what arrives when asked.
class LossySource final : public FrameSource {
 public:
  LossySource(FrameSource& inner, double loss, uint64_t seed)
      : inner_(inner), loss_(loss), rng_(seed) {}
  uint32_t Poll(FrameHandler handler, uint32_t max) noexcept override {
    auto keep = [&](std::span<const uint8_t> frame) {
      if (loss_ > 0 && rng_.NextUnit() < loss_) {
        ++dropped_;
      } else {
        handler(frame);
      }
    };
    return inner_.Poll(FrameHandler(keep), max);
  }
  uint64_t dropped() const { return dropped_; }

 private:
  FrameSource& inner_;
  double loss_;
  SplitMix64 rng_;
  uint64_t dropped_ = 0;
};

// The host and its loop, as both ends run them.
struct UdpHost {
  std::unique_ptr<UdpSocketTransport> udp;
  std::unique_ptr<LossySource> source;
  std::unique_ptr<DlcpHost> host;
  std::unique_ptr<EventLoop> loop;
};

Status OpenHost(const Common& c, uint64_t rate_bps, UdpHost* h) {
  const MacAddr mac = MacAddr::FromU64(0x020000000000ull | c.bind);
  Result<std::unique_ptr<UdpSocketTransport>> t = UdpSocketTransport::Open({c.bind, c.port, 0, mac});
  if (!t.ok()) return Status::Error("UDP " + FormatIpv4(c.bind) + ":" + std::to_string(c.port) + ": " + t.message());
  h->udp = std::move(*t);
  h->source = std::make_unique<LossySource>(*h->udp, c.loss, c.seed ^ 0x5A5A);
  DlcpHostOptions opt;
  opt.port = c.port;
  opt.rate.link_bps = rate_bps;
  opt.max_tensor_bytes = c.max_tensor_bytes;
  // auto: 200 us holds ~1700 packets at the paper's 100 Gbit/s but one or two at 100 Mbit/s, too
  // few to compare two rates; keep at least 64 full packets per period.
  opt.rate.period_ns = c.rate_period_ns != 0
                           ? c.rate_period_ns
                           : std::max<TimeNs>(200'000, static_cast<TimeNs>(64 * 1538 * 8 * 1e9 /
                                                                           static_cast<double>(rate_bps)));
  h->host = std::make_unique<DlcpHost>(*h->udp, mac, c.bind, opt);
  EventLoopOptions lo;
  lo.busy_poll = c.busy_poll;
  h->loop = std::make_unique<EventLoop>(lo);
  h->loop->Add(h->source.get(), h->host.get());
  return Status::Ok();
}

double Ms(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

Status WriteJson(const std::string& path, const std::string& text) {
  return path.empty() ? Status::Ok() : WriteTextFile(path, text, "--json");
}

// ---- send ----

po::options_description SendOptions() {
  po::options_description options("swemu-dlcp send options", 100);
  AddCommonOptions(options, "tensors to send, one per layer (layer k of N gets tag floor(7k/N))");
  // clang-format off
  options.add_options()
      ("to", po::value<std::string>()->value_name("IP"), "the receiver's address (required)")
      ("bytes", po::value<std::string>()->default_value("1MB"), "each tensor's size (float32 gradients)")
      ("first-tensor", po::value<std::string>()->default_value("1"), "the first tensor's id; the others follow")
      ("bound", po::value<std::string>()->default_value("10%"), "the loss bound carried in each START")
      ("pull", "mark the flows as the pull stage (the receiver's own bound is the caller's to choose)")
      ("rate", po::value<std::string>()->default_value("1G"), "the line rate the rate control starts at and returns to");
  // clang-format on
  return options;
}

// send's options, checked.
struct SendSettings {
  Common c;
  Ipv4Addr to = 0;
  uint64_t bytes = 0, first = 0, rate = 0;
  double bound = 0;
  bool pull = false;
};

Status ParseSendSettings(const po::variables_map& vm, SendSettings* s) {
  Common& c = s->c;
  SWEMU_RETURN_IF_ERROR(ParseCommon(vm, &c));
  if (!vm.count("to")) return Status::Error("--to: required");
  SWEMU_RETURN_IF_ERROR(Check("to", ParseIpv4(Text(vm, "to")), &s->to));
  SWEMU_RETURN_IF_ERROR(Check("bytes", ParseBytes(Text(vm, "bytes")), &s->bytes));
  if (s->bytes < 4 || s->bytes > (uint64_t{1} << 30)) {
    return Status::Error("--bytes: 4 B to 1 GiB");
  }
  if (s->bytes * c.tensors > (uint64_t{4} << 30)) {
    return Status::Error("--tensors x --bytes: at most 4 GiB in all");
  }
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "first-tensor", 0, UINT32_MAX - c.tensors, &s->first));
  SWEMU_RETURN_IF_ERROR(Check("bound", ParseProbability(Text(vm, "bound")), &s->bound));
  if (s->bound >= 1) return Status::Error("--bound: must be below 100%");
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &s->rate));
  if (s->rate == 0) return Status::Error("--rate: must be > 0");
  s->pull = vm.count("pull") != 0;
  return Status::Ok();
}

// Starts every tensor's flow: seeded gradients, layer k of N tagged as the host tags it.
Status StartTensors(const SendSettings& s, UdpHost& h) {
  SplitMix64 rng(s.c.seed);
  const TcpEnd dst{MacAddr{}, s.to, s.c.port};
  for (uint32_t k = 0; k < s.c.tensors; ++k) {
    std::vector<float> g(s.bytes / 4);
    for (float& e : g) e = static_cast<float>(rng.NextUnit() * 2 - 1);
    Status sent = h.host->Send(h.loop->Now(), dst, static_cast<uint32_t>(s.first + k), g,
                               LayerPriority(k, s.c.tensors), s.bound, s.pull);
    if (!sent.ok()) {
      return Status::Error("tensor " + std::to_string(s.first + k) + ": " + sent.message());
    }
  }
  return Status::Ok();
}

// Runs until every flow is done (or the timeout, or a signal), then lets the CONFIRMs be
// acknowledged (a lost one is sent again), for at most 2 s.
void RunSends(const SendSettings& s, UdpHost& h) {
  auto all_done = [&] {
    for (const auto& f : h.host->send_flows()) {
      if (!f->done()) return false;
    }
    return true;
  };
  const bool done =
      h.loop->RunUntil([&] { return all_done() || g_stop_requested.load(); }, s.c.timeout_ns);
  if (done && !g_stop_requested) {
    h.loop->RunUntil([&] { return h.host->control().idle() || g_stop_requested.load(); },
                     2'000'000'000);
  }
}

// What became of the flows: printed a line each, and as JSON.
struct SendOutcome {
  std::string json;
  uint32_t finished = 0, refused = 0;
};

SendOutcome ReportSends(const UdpHost& h) {
  SendOutcome o;
  o.json = "[";
  for (const auto& f : h.host->send_flows()) {
    char line[400];
    if (f->refused) {
      ++o.refused;
      std::snprintf(
          line, sizeof(line),
          "tensor %u: refused by the receiver (larger than it takes, or no buffer left)\n",
          f->tensor);
    } else if (f->done()) {
      ++o.finished;
      std::snprintf(line, sizeof(line),
                    "tensor %u: %.3f ms, %llu packets (%llu resent), %llu retransmission requests, "
                    "rate halved %u times\n",
                    f->tensor, Ms(f->finish_ns - f->start_ns),
                    static_cast<unsigned long long>(f->packets),
                    static_cast<unsigned long long>(f->resent_packets),
                    static_cast<unsigned long long>(f->retransmit_requests), f->halvings);
    } else {
      std::snprintf(line, sizeof(line), "tensor %u: not finished (%llu packets sent)\n", f->tensor,
                    static_cast<unsigned long long>(f->packets));
    }
    std::cout << line;
    std::snprintf(line, sizeof(line),
                  "%s\n  {\"tensor\": %u, \"finished\": %s, \"refused\": %s, \"fct_ms\": %.6f, "
                  "\"packets\": %llu, \"resent\": %llu, \"retransmit_requests\": %llu, "
                  "\"halvings\": %u}",
                  o.json.size() > 1 ? "," : "", f->tensor,
                  f->done() && !f->refused ? "true" : "false", f->refused ? "true" : "false",
                  f->done() ? Ms(f->finish_ns - f->start_ns) : 0.0,
                  static_cast<unsigned long long>(f->packets),
                  static_cast<unsigned long long>(f->resent_packets),
                  static_cast<unsigned long long>(f->retransmit_requests), f->halvings);
    o.json += line;
  }
  o.json += "\n]\n";
  return o;
}

}  // namespace

int RunDlcpSendCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParseSubcommand("swemu-dlcp", "send", "--bind IP --to IP [options]",
                                       SendOptions(), argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  SendSettings s;
  UdpHost h;
  Status status = ParseSendSettings(vm, &s);
  if (status.ok()) status = OpenHost(s.c, s.rate, &h);
  if (!status.ok()) {
    std::cerr << "swemu-dlcp send: " << status.message() << "\n";
    return 2;
  }
  CatchStopSignals();
  if (Status started = StartTensors(s, h); !started.ok()) {
    std::cerr << "swemu-dlcp send: " << started.message() << "\n";
    return 2;
  }
  RunSends(s, h);
  const SendOutcome o = ReportSends(h);
  const Common& c = s.c;
  std::cout << "send: " << o.finished << " of " << c.tensors << " tensors finished; "
            << h.udp->counters().datagrams_sent << " datagrams sent ("
            << h.udp->counters().send_errors << " refused by the socket), " << h.source->dropped()
            << " arriving frames dropped by --loss, control signals resent "
            << h.host->control().stats().resent << "\n";
  int exit_code = 0;
  if (Status w = WriteJson(c.json, o.json); !w.ok()) {
    std::cerr << "swemu-dlcp send: " << w.message() << "\n";
    exit_code = 1;
  }
  if (o.refused != 0) {
    std::cerr << "swemu-dlcp send: the receiver refused " << o.refused << " of " << c.tensors
              << " tensors\n";
    exit_code = 1;
  } else if (o.finished != c.tensors) {
    std::cerr << "swemu-dlcp send: " << (g_stop_requested ? "stopped by a signal" : "timed out")
              << " with " << o.finished << " of " << c.tensors << " tensors finished\n";
    exit_code = 1;
  }
  return exit_code;
}

namespace {

po::options_description RecvOptions() {
  po::options_description options("swemu-dlcp recv options", 100);
  AddCommonOptions(options, "flows to receive (from any senders) before exiting");
  options.add_options()("max-tensor", po::value<std::string>()->default_value("1GiB"),
                        "refuse a tensor larger than this (the sender is told and stops)");
  return options;
}

}  // namespace

int RunDlcpRecvCommand(int argc, char** argv) {
  po::variables_map vm;
  const int exit_now = ParseSubcommand("swemu-dlcp", "recv", "--bind IP [options]", RecvOptions(),
                                       argc, argv, &vm);
  if (exit_now >= 0) return exit_now;
  Common c;
  Status status = ParseCommon(vm, &c);
  uint64_t max_tensor = 0;
  if (status.ok()) status = Check("max-tensor", ParseBytes(Text(vm, "max-tensor")), &max_tensor);
  if (status.ok() && max_tensor == 0) status = Status::Error("--max-tensor: must be > 0");
  c.max_tensor_bytes = max_tensor;
  UdpHost h;
  if (c.rate_period_ns == 0) c.rate_period_ns = 200'000;  // auto: report every 200 us
  if (status.ok()) status = OpenHost(c, 1'000'000'000, &h);
  if (!status.ok()) {
    std::cerr << "swemu-dlcp recv: " << status.message() << "\n";
    return 2;
  }
  CatchStopSignals();
  auto confirmed = [&] {
    uint32_t n = 0;
    for (const auto& [key, f] : h.host->recv_flows()) n += f.confirm_ns != kNever;
    return n;
  };
  const bool done = h.loop->RunUntil(
      [&] { return confirmed() >= c.tensors || g_stop_requested.load(); }, c.timeout_ns);
  // Answer a repeated CONFIRM (its ACK lost) for a while before going.
  if (done && !g_stop_requested) {
    const TimeNs until = h.loop->Now() + 100'000'000;
    h.loop->RunUntil([&] { return h.loop->Now() >= until || g_stop_requested.load(); }, 200'000'000);
  }
  std::string json = "[";
  uint32_t met = 0;
  for (const auto& [key, f] : h.host->recv_flows()) {
    const bool ok = f.bound_met_ns != kNever;
    met += ok;
    const uint64_t size = f.buffer ? f.buffer->size() : 0;
    const double held = size == 0 ? 0 : static_cast<double>(f.bytes_at_bound) / static_cast<double>(size);
    char line[400];
    std::snprintf(line, sizeof(line),
                  "tensor %u from %s: %llu bytes, %s, %llu packets (%llu CE-marked), %llu duplicates%s\n",
                  f.tensor, FormatIpv4(f.src.ip).c_str(), static_cast<unsigned long long>(size),
                  ok ? ("bound met after " + std::to_string(Ms(f.bound_met_ns - f.start_ns)) +
                        " ms holding " + std::to_string(held * 100) + "%")
                           .c_str()
                     : "bound not met",
                  static_cast<unsigned long long>(f.packets),
                  static_cast<unsigned long long>(f.ecn_packets),
                  static_cast<unsigned long long>(f.duplicates),
                  f.confirm_ns != kNever ? ", confirmed" : ", no confirm");
    std::cout << line;
    std::snprintf(line, sizeof(line),
                  "%s\n  {\"tensor\": %u, \"src\": \"%s\", \"bytes\": %llu, \"bound_met\": %s, "
                  "\"bound_met_ms\": %.6f, \"held\": %.6f, \"packets\": %llu, \"ce\": %llu, "
                  "\"duplicates\": %llu, \"confirmed\": %s}",
                  json.size() > 1 ? "," : "", f.tensor, FormatIpv4(f.src.ip).c_str(),
                  static_cast<unsigned long long>(size), ok ? "true" : "false",
                  ok ? Ms(f.bound_met_ns - f.start_ns) : 0.0, held,
                  static_cast<unsigned long long>(f.packets),
                  static_cast<unsigned long long>(f.ecn_packets),
                  static_cast<unsigned long long>(f.duplicates),
                  f.confirm_ns != kNever ? "true" : "false");
    json += line;
  }
  json += "\n]\n";
  std::cout << "recv: " << confirmed() << " of " << c.tensors << " flows confirmed (" << met
            << " met their bound); " << h.host->stats().starts_refused << " refused; "
            << h.host->stats().discarded_early
            << " packets before their START discarded, " << h.source->dropped()
            << " arriving frames dropped by --loss\n";
  int exit_code = 0;
  if (Status s = WriteJson(c.json, json); !s.ok()) {
    std::cerr << "swemu-dlcp recv: " << s.message() << "\n";
    exit_code = 1;
  }
  if (!done || g_stop_requested) {
    std::cerr << "swemu-dlcp recv: " << (g_stop_requested ? "stopped by a signal" : "timed out")
              << " with " << confirmed() << " of " << c.tensors << " flows confirmed\n";
    exit_code = 1;
  }
  return exit_code;
}

}  // namespace swemu
