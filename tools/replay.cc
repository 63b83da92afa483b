// swemu-replay: replays a pcap into one port the way tcpreplay does, and captures what comes
// back. The port is a DPDK device from devargs (--port: net_virtio_user on a socket of swemu's
// net_vhost port, any vdev, a NIC) or a kernel interface (--iface: a veth or TAP end, through an
// AF_PACKET socket, without EAL). Frames go at the pcap's own pace (or --pps, --mbps,
// --multiplier, --topspeed), each against a deadline measured from the first frame, and the run
// ends with how well the schedule was kept. A DPDK peer is a separate DPDK process: give it its
// own --file-prefix.
#include <rte_ethdev.h>
#include <sys/prctl.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_fixlen.h"
#include "pipeline/core/output_files.h"
#include "pipeline/engine/pcap_io.h"
#include "swemu/dpdk/eal.h"
#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/ports.h"
#include "tools/replay/frame_source.h"
#include "tools/replay/output.h"
#include "tools/replay/pacer.h"
#include "tools/replay/sender.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using replay::Pace;

constexpr uint32_t kMbufs = 4095;  // a few rings' worth; small enough for a few hugepages
constexpr TimeNs kLinkWaitNs = 3'000'000'000;
constexpr double kMaxPps = 1e9;
constexpr double kMaxMbps = 1e7;  // 10 Tbit/s

struct ReplaySpec {
  std::string devargs;  // --port
  std::string iface;    // --iface
  std::string in;
  std::string out;
  std::string ready_file;
  replay::PaceSpec pace;
  std::string pace_text;  // for the report: "as captured", "10000 pps", ...
  replay::SenderOptions send;
  bool preload = false;
  Fixlen fixlen = Fixlen::kNone;
  std::vector<std::string> eal_args;
};

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

po::options_description Options() {
  po::options_description options("swemu-replay options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("port", po::value<std::string>()->value_name("DEVARGS"),
       "a DPDK port: net_virtio_user0,path=SOCK | any vdev | a PCI address (or --iface)")
      ("iface", po::value<std::string>()->value_name("NAME"),
       "a kernel interface (veth, TAP, NIC) through an AF_PACKET socket, no EAL (or --port)")
      ("in", po::value<std::string>()->value_name("FILE"), "pcap to send (default: send nothing)")
      ("out", po::value<std::string>()->value_name("FILE"), "pcap of the frames received")
      ("timing", "send at the pcap's own gaps: the default (kept for old scripts)")
      ("multiplier", po::value<std::string>()->value_name("X"),
       "scale the pcap's own timing: 2 replays twice as fast, 0.5 half as fast (default 1)")
      ("topspeed", "send as fast as the port takes frames")
      ("pps", po::value<std::string>()->value_name("N"), "send N packets per second (e.g. 10000, 0.5)")
      ("mbps", po::value<std::string>()->value_name("N"), "send N Mbit/s of frame bytes")
      ("loop", po::value<std::string>()->default_value("1")->value_name("N"),
       "send the pcap N times; 0: until --duration or SIGINT")
      ("duration", po::value<std::string>()->value_name("D"),
       "stop sending D after the first frame (seconds: 10, 0.5; or 500ms)")
      ("preload", "read every frame into memory before sending (default: stream the file, "
                  "reading it again for each loop)")
      ("fixlen", po::value<std::string>()->value_name("MODE"),
       "frames cut short by the capture's snap length: pad (zeros to the wire length), trunc "
       "(rewrite IPv4/UDP lengths and checksums to the captured bytes) or none (send as "
       "captured; the default)")
      ("wait", po::value<std::string>()->default_value("1s")->value_name("D"),
       "after sending, receive until no frame arrived for this long (0: stop at once)")
      ("expect", po::value<std::string>()->value_name("N"), "stop once N frames arrived")
      ("ready-file", po::value<std::string>()->value_name("FILE"),
       "create FILE once the port is up, before sending (to order peers in scripts)");
  // clang-format on
  return options;
}

// A number > 0 and <= max: "10000", "0.5", "1e6".
Result<double> ParsePositive(const std::string& text, double max) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || !(value > 0) ||
      value > max) {
    char bound[32];
    std::snprintf(bound, sizeof(bound), "%g", max);
    return Status::Error("\"" + text + "\" is not a number in (0, " + bound + "]");
  }
  return value;
}

// Seconds as a plain number ("10", "0.5") as tcpreplay takes them, or a duration ("500ms").
// A positive duration up to 1e6 s; a plain number means seconds ("0.5", "500ms").
Result<uint64_t> ParseSeconds(const std::string& text) {
  Result<uint64_t> ns = ParseDurationOption(text);
  if (!ns.ok()) return ns;
  if (*ns == 0 || *ns > 1'000'000ull * 1'000'000'000) {
    return Status::Error(text + " is not in (0, 1000000]");
  }
  return ns;
}

std::string FormatNumber(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

Status ParseSpec(const po::variables_map& vm, ReplaySpec& spec) {
  auto str = [&](const char* name) { return vm[name].as<std::string>(); };
  if (vm.count("port") && vm.count("iface")) {
    return Status::Error("--port and --iface: give only one of them");
  }
  if (!vm.count("port") && !vm.count("iface")) return Status::Error("give --port DEVARGS (a DPDK port) or --iface NAME (a kernel interface); --help lists the options");
  if (vm.count("port")) spec.devargs = str("port");
  if (vm.count("iface")) {
    spec.iface = str("iface");
    if (!spec.eal_args.empty()) {
      return Status::Error("--iface: runs without EAL; EAL arguments (after --) need --port");
    }
  }
  if (vm.count("in")) spec.in = str("in");
  if (vm.count("out")) {
    spec.out = str("out");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(spec.out, "--out"));
  }
  if (vm.count("ready-file")) spec.ready_file = str("ready-file");
  const int paces = static_cast<int>(vm.count("topspeed") + vm.count("pps") + vm.count("mbps") +
                                     vm.count("timing"));
  if (paces > 1) return Status::Error("--topspeed, --pps, --mbps and --timing exclude each other");
  spec.pace_text = "as captured";
  if (vm.count("topspeed")) {
    spec.pace.pace = Pace::kTopSpeed;
    spec.pace_text = "top speed";
  }
  if (vm.count("pps")) {
    Result<double> pps = ParsePositive(str("pps"), kMaxPps);
    if (!pps.ok()) return Status::Error("--pps: " + pps.message());
    spec.pace.pace = Pace::kPps;
    spec.pace.micro_pps = std::max<uint64_t>(1, std::llround(*pps * 1e6));
    spec.pace_text = str("pps") + " pps";
  }
  if (vm.count("mbps")) {
    Result<double> mbps = ParsePositive(str("mbps"), kMaxMbps);
    if (!mbps.ok()) return Status::Error("--mbps: " + mbps.message());
    spec.pace.pace = Pace::kMbps;
    spec.pace.bits_per_sec = std::max<uint64_t>(1, std::llround(*mbps * 1e6));
    spec.pace_text = str("mbps") + " Mbps";
  }
  if (vm.count("multiplier")) {
    if (spec.pace.pace != Pace::kCaptured) {
      return Status::Error(
          "--multiplier: scales the pcap's timing; not with --topspeed, --pps or "
          "--mbps");
    }
    Result<double> multiplier = ParsePositive(str("multiplier"), 1e6);
    if (!multiplier.ok()) return Status::Error("--multiplier: " + multiplier.message());
    // Below 1e-6 a gap of a microsecond becomes days: the deadlines overflow to top speed.
    if (*multiplier < 1e-6) return Status::Error("--multiplier: " + str("multiplier") + " is below 1e-6");
    spec.pace.multiplier = *multiplier;
    spec.pace_text += " x" + str("multiplier");
  }
  Result<uint64_t> loops = ParseUint(str("loop"), 0, 1'000'000'000'000);
  if (!loops.ok()) return Status::Error("--loop: " + loops.message());
  spec.send.loops = *loops;
  if (vm.count("duration")) {
    Result<uint64_t> duration = ParseSeconds(str("duration"));
    if (!duration.ok()) return Status::Error("--duration: " + duration.message());
    spec.send.duration_ns = *duration;
  }
  spec.preload = vm.count("preload") != 0;
  if (vm.count("fixlen")) {
    Result<Fixlen> fixlen = ParseFixlen(str("fixlen"));
    if (!fixlen.ok()) return Status::Error("--fixlen: " + fixlen.message());
    spec.fixlen = *fixlen;
  }
  Result<uint64_t> wait = ParseDurationOption(str("wait"));
  if (!wait.ok()) return Status::Error("--wait: " + wait.message());
  spec.send.wait_ns = static_cast<TimeNs>(*wait);
  if (vm.count("expect")) {
    Result<uint64_t> expect = ParseUint(str("expect"), 1, UINT64_MAX);
    if (!expect.ok()) return Status::Error("--expect: " + expect.message());
    spec.send.expect = *expect;
  }
  return Status::Ok();
}

std::string Micros(uint64_t ns) { return FormatNumber(static_cast<double>(ns) / 1e3, 3) + " us"; }

// The run's timing report (stderr: stdout keeps its one summary line for scripts).
void PrintReport(const ReplaySpec& spec, const replay::SendReport& report,
                 const replay::FrameSource& source, std::ostream& err) {
  const double seconds = static_cast<double>(report.last_sent) / 1e9;
  // Bytes for people: exact below a megabyte, then "7.21 GB".
  const std::string bytes = report.bytes < 1'000'000
                                ? std::to_string(report.bytes) + " bytes"
                                : FormatSi(static_cast<double>(report.bytes), "B");
  err << "sent " << report.packets << " packets, " << bytes << " in " << FormatNumber(seconds, 6)
      << " s (pace: " << spec.pace_text << ")\n";
  if (report.packets >= 2) {
    auto rates = [](uint64_t packets, uint64_t bytes_before_last, TimeNs span) {
      if (span == 0) return std::string("- pps, - Mbps (no time passed)");
      const double s = static_cast<double>(span) / 1e9;
      return FormatNumber(static_cast<double>(packets - 1) / s, 1) + " pps, " +
             FormatNumber(static_cast<double>(bytes_before_last) * 8 / s / 1e6, 3) + " Mbps";
    };
    const bool top = spec.pace.pace == Pace::kTopSpeed;
    err << "rate: requested "
        << (top ? std::string("top speed")
                : rates(report.packets, report.bytes_before_last, report.last_due))
        << "; achieved " << rates(report.packets, report.bytes_before_last, report.last_sent)
        << "\n";
    const NsHistogram<6>& gaps = report.gap_error;
    err << "gap error (|sent gap - intended gap|" << (top ? ", intended 0 at top speed" : "")
        << ") over " << gaps.count() << " gaps: p50 " << Micros(gaps.Percentile(0.5)) << ", p99 "
        << Micros(gaps.Percentile(0.99)) << ", max " << Micros(gaps.max()) << "\n";
    const NsHistogram<6>& late = report.lateness;
    if (!top) {  // at top speed every deadline is the start
      err << "late (sent - deadline): p50 " << Micros(late.Percentile(0.5)) << ", p99 "
          << Micros(late.Percentile(0.99)) << ", max " << Micros(late.max()) << "\n";
    }
  }
  const std::string fixlen = FixlenSummary(source.fixlen(), source.fixlen_counts());
  if (!fixlen.empty()) err << fixlen << "\n";
  err << std::flush;
}

// The summary line scripts read: "sent N, received M" and what was not sent.
void PrintSummary(const replay::Sender& sender, const replay::FrameSource* source, uint32_t max_len,
                  std::ostream& out) {
  const replay::SendReport& report = sender.report();
  out << "sent " << report.packets << ", received " << sender.received();
  if (report.unsent > 0) out << ", not sent " << report.unsent << " (port full)";
  if (report.failed > 0) out << ", not sent " << report.failed << " (" << report.failure << ")";
  if (source != nullptr && source->too_long() > 0) {
    out << ", skipped " << source->too_long() << " (longer than " << max_len << " bytes)";
  }
  out << "\n" << std::flush;
}

// The port's link comes up when the peer attaches (virtio_user to a vhost socket).
void WaitForLink(uint16_t port) {
  const TimeNs deadline = replay::MonotonicNs() + kLinkWaitNs;
  rte_eth_link link;
  while (!g_stop && replay::MonotonicNs() < deadline) {
    std::memset(&link, 0, sizeof(link));
    if (rte_eth_link_get_nowait(port, &link) != 0 || link.link_status == RTE_ETH_LINK_UP) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// --out is written aside and moved into place once closed (CloseCapture).
Result<std::unique_ptr<PcapWriter>> OpenCapture(const ReplaySpec& spec, OutputFiles& files) {
  if (spec.out.empty()) return std::unique_ptr<PcapWriter>();
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(files.Aside(spec.out));
  if (!writer.ok()) return files.Unstaged(writer.status());
  return writer;
}

Status CloseCapture(PcapWriter* writer, OutputFiles& files) {
  if (writer == nullptr) return Status::Ok();
  SWEMU_RETURN_IF_ERROR(files.Unstaged(writer->Close()));
  return files.Commit();
}

// Runs the sender on an output that is up; prints the summary and the report.
Status SendAndReport(const ReplaySpec& spec, replay::ReplayOutput& output,
                     replay::FrameSource* source, std::ostream& out, std::ostream& err,
                     bool* short_of_expect) {
  if (!spec.ready_file.empty()) std::ofstream(spec.ready_file) << "ready\n";
  replay::Sender sender(spec.send, spec.pace, source, output, g_stop);
  Status status = sender.Run();
  PrintSummary(sender, source, output.max_frame_len(), out);
  if (source != nullptr) PrintReport(spec, sender.report(), *source, err);
  *short_of_expect = spec.send.expect > 0 && sender.received() < spec.send.expect;
  return status;
}

Status ReplayOnIface(const ReplaySpec& spec, std::ostream& out, std::ostream& err,
                     bool* short_of_expect) {
  Result<std::unique_ptr<replay::IfaceOutput>> output =
      replay::IfaceOutput::Open(spec.iface, !spec.out.empty() || spec.send.expect > 0);
  if (!output.ok()) return output.status();
  std::unique_ptr<replay::FrameSource> source;
  if (!spec.in.empty()) {
    Result<std::unique_ptr<replay::FrameSource>> opened =
        replay::FrameSource::Open(spec.in, spec.preload, spec.fixlen, (*output)->max_frame_len());
    if (!opened.ok()) return opened.status();
    source = std::move(*opened);
  }
  OutputFiles files;
  Result<std::unique_ptr<PcapWriter>> writer = OpenCapture(spec, files);
  if (!writer.ok()) return writer.status();
  (*output)->set_capture(writer->get());
  Status status = SendAndReport(spec, **output, source.get(), out, err, short_of_expect);
  return status.ok() ? CloseCapture(writer->get(), files) : status;
}

Status ReplayOnPort(const ReplaySpec& spec, std::ostream& out, std::ostream& err,
                    bool* short_of_expect) {
  std::unique_ptr<replay::FrameSource> source;
  if (!spec.in.empty()) {
    Result<std::unique_ptr<replay::FrameSource>> opened = replay::FrameSource::Open(
        spec.in, spec.preload, spec.fixlen, replay::DpdkOutput::MaxFrameLen());
    if (!opened.ok()) return opened.status();
    source = std::move(*opened);
  }
  EalArgs eal = MakeEalArgs("", spec.eal_args, HostHugepagesUsable());
  const bool added_no_huge = eal.added_no_huge;
  eal.added_no_huge = false;
  // What EAL and the driver print is held until the port is up: a failed set-up is one line.
  HeldOutput held;
  SWEMU_RETURN_IF_ERROR(InitEal(eal, err));
  Status status;
  OutputFiles files;
  std::unique_ptr<PcapWriter> writer;
  {  // the pool and the port go before EAL does
    Result<MbufPool> pool = MbufPool::Create(kMbufs, 128, static_cast<int>(rte_socket_id()));
    DpdkPorts ports;
    status = pool.status();
    if (status.ok()) status = ports.Open(1, {{0, spec.devargs}}, pool->mempool());
    Result<std::unique_ptr<PcapWriter>> opened = std::unique_ptr<PcapWriter>();
    if (status.ok()) opened = OpenCapture(spec, files);  // only once the port is up
    if (status.ok()) status = opened.status();
    if (!status.ok()) held.Drop();
    if (status.ok()) {
      held.Release();
      if (added_no_huge) err << "swemu-replay: no free hugepages; running with --no-huge\n";
      writer = std::move(*opened);
      WaitForLink(ports.dpdk_port(0));
      replay::DpdkOutput output(ports.dpdk_port(0), pool->mempool());
      output.set_capture(writer.get());
      status = SendAndReport(spec, output, source.get(), out, err, short_of_expect);
    }
  }
  CleanupEal();
  return status.ok() ? CloseCapture(writer.get(), files) : status;
}

int Main(int argc, char** argv) {
  // Everything after "--" is EAL's.
  int ours = 1;
  while (ours < argc && std::string(argv[ours]) != "--") ++ours;
  ReplaySpec spec;
  for (int i = ours + 1; i < argc; ++i) spec.eal_args.emplace_back(argv[i]);
  po::variables_map vm;
  try {
    po::positional_options_description none;
    po::store(po::command_line_parser(ours, argv).options(Options()).positional(none).run(), vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-replay: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout
        << "usage: swemu-replay (--port DEVARGS | --iface NAME) [--in FILE] [--out FILE]\n"
           "         [--topspeed | --pps N | --mbps N | --multiplier X] [--loop N] [--duration D]\n"
           "         [--preload] [--fixlen pad|trunc|none] [--wait D] [--expect N]\n"
           "         [--ready-file FILE] [-- EAL ARGS...]\n\n"
           "Sends at the pcap's own pace unless told otherwise. Prints \"sent N, received M\" on\n"
           "stdout, and on stderr the bytes, the requested and achieved rates and the error of\n"
           "the gaps between frames (p50, p99, max).\n\n"
        << Options()
        << "\nexamples:\n"
           "  swemu-replay --iface veth0 --in trace.pcap --pps 100000 --loop 5\n"
           "  swemu-replay --port net_null0 --in trace.pcap --topspeed --preload --duration 2 "
           "-- -l 1 --no-pci --no-huge -m 256 --file-prefix replay\n"
           "  (a host on port 0 of configs/ci_vhost.ini, swemu running)\n"
           "  swemu-replay --port net_virtio_user0,path=/tmp/swemu-vhost0.sock,queue_size=256 "
           "--in to_b.pcap -- -l 1 --no-pci --no-huge -m 128 --file-prefix peer-a\n"
           "every option: docs/cli.md\n";
    return 0;
  }
  Status status = ParseSpec(vm, spec);
  bool short_of_expect = false;
  if (status.ok()) {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    // Sleeps end when asked, not up to the default 50 us later.
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    status = spec.iface.empty() ? ReplayOnPort(spec, std::cout, std::cerr, &short_of_expect)
                                : ReplayOnIface(spec, std::cout, std::cerr, &short_of_expect);
  }
  if (!status.ok()) {
    std::cerr << "swemu-replay: " << status.message() << "\n";
    return 2;
  }
  if (short_of_expect) {
    std::cerr << "swemu-replay: expected " << spec.send.expect << " frames\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-replay", [&] { return swemu::Main(argc, argv); });
}
