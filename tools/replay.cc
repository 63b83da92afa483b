// swemu-replay: a peer for swemu's real-time mode. It attaches one DPDK port from devargs (often
// net_virtio_user on a socket of swemu's net_vhost port), replays a pcap into it at a chosen
// pace, and writes what the port receives to a pcap, until enough frames came or the line went
// quiet. A separate DPDK process: give it its own --file-prefix.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "swemu/dpdk/eal.h"
#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/ports.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr uint32_t kMbufs = 4095;  // a few rings' worth; small enough for a few hugepages
constexpr uint16_t kBurst = 32;
constexpr TimeNs kLinkWaitNs = 3'000'000'000;

enum class Pace { kTopSpeed, kPps, kMbps, kTiming };

struct ReplaySpec {
  std::string devargs;
  std::string in;
  std::string out;
  std::string ready_file;
  Pace pace = Pace::kTopSpeed;
  uint64_t rate = 0;  // packets/s or Mbit/s
  uint64_t loops = 1;
  TimeNs wait_ns = 1'000'000'000;
  uint64_t expect = 0;  // 0: not given
  std::vector<std::string> eal_args;
};

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

TimeNs MonotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TimeNs WallNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

po::options_description Options() {
  po::options_description options("swemu-replay options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("port", po::value<std::string>()->value_name("DEVARGS"),
       "the DPDK port (required): net_virtio_user0,path=SOCK | any vdev | a PCI address")
      ("in", po::value<std::string>()->value_name("FILE"), "pcap to send (default: send nothing)")
      ("out", po::value<std::string>()->value_name("FILE"), "pcap of the frames received")
      ("topspeed", "send as fast as the port takes frames (the default)")
      ("pps", po::value<std::string>()->value_name("N"), "send N packets per second")
      ("mbps", po::value<std::string>()->value_name("N"), "send N Mbit/s of frame bytes")
      ("timing", "keep the pcap's own gaps between frames")
      ("loop", po::value<std::string>()->default_value("1"), "send the pcap N times")
      ("wait", po::value<std::string>()->default_value("1s"),
       "after sending, stop when no frame arrived for this long")
      ("expect", po::value<std::string>()->value_name("N"), "stop once N frames arrived")
      ("ready-file", po::value<std::string>()->value_name("FILE"),
       "create FILE once the port is up, before sending (to order peers in scripts)");
  // clang-format on
  return options;
}

Status ParseSpec(const po::variables_map& vm, ReplaySpec& spec) {
  auto str = [&](const char* name) { return vm[name].as<std::string>(); };
  if (!vm.count("port")) return Status::Error("--port: required");
  spec.devargs = str("port");
  if (vm.count("in")) spec.in = str("in");
  if (vm.count("out")) spec.out = str("out");
  if (vm.count("ready-file")) spec.ready_file = str("ready-file");
  const int paces = static_cast<int>(vm.count("topspeed") + vm.count("pps") + vm.count("mbps") +
                                     vm.count("timing"));
  if (paces > 1) return Status::Error("--topspeed, --pps, --mbps and --timing exclude each other");
  for (const char* name : {"pps", "mbps"}) {
    if (!vm.count(name)) continue;
    Result<uint64_t> rate = ParseUint(str(name), 1, 1'000'000'000);
    if (!rate.ok()) return Status::Error(std::string("--") + name + ": " + rate.message());
    spec.rate = *rate;
    spec.pace = name == std::string("pps") ? Pace::kPps : Pace::kMbps;
  }
  if (vm.count("timing")) spec.pace = Pace::kTiming;
  Result<uint64_t> loops = ParseUint(str("loop"), 1, 1'000'000'000);
  if (!loops.ok()) return Status::Error("--loop: " + loops.message());
  spec.loops = *loops;
  Result<uint64_t> wait = ParseDuration(str("wait"));
  if (!wait.ok()) return Status::Error("--wait: " + wait.message());
  spec.wait_ns = static_cast<TimeNs>(*wait);
  if (vm.count("expect")) {
    Result<uint64_t> expect = ParseUint(str("expect"), 1, UINT64_MAX);
    if (!expect.ok()) return Status::Error("--expect: " + expect.message());
    spec.expect = *expect;
  }
  return Status::Ok();
}

// Sends the pcap and captures what the port receives.
class Replayer {
 public:
  Replayer(const ReplaySpec& spec, uint16_t port, rte_mempool* pool, PcapWriter* writer)
      : spec_(spec), port_(port), pool_(pool), writer_(writer) {}

  void Run(const std::vector<PcapRecord>& frames);
  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }
  uint64_t unsent() const { return unsent_; }

 private:
  // Nanoseconds after the start at which frame `index` of loop `loop` is due.
  TimeNs Due(const std::vector<PcapRecord>& frames, uint64_t loop, std::size_t index);
  bool Receive();  // true when a frame arrived
  void WaitUntil(TimeNs deadline);
  void Flush();
  void ReceiveUntilQuiet();

  const ReplaySpec& spec_;
  uint16_t port_;
  rte_mempool* pool_;
  PcapWriter* writer_;
  std::vector<rte_mbuf*> burst_;
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(65536);
  uint64_t bits_so_far_ = 0;  // --mbps
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  uint64_t unsent_ = 0;
};

TimeNs Replayer::Due(const std::vector<PcapRecord>& frames, uint64_t loop, std::size_t index) {
  const uint64_t nth = loop * frames.size() + index;
  switch (spec_.pace) {
    case Pace::kTopSpeed:
      return 0;
    case Pace::kPps:
      return static_cast<TimeNs>(static_cast<unsigned __int128>(nth) * 1'000'000'000 / spec_.rate);
    case Pace::kMbps: {
      const TimeNs due = static_cast<TimeNs>(bits_so_far_ * 1000 / spec_.rate);
      bits_so_far_ += frames[index].bytes.size() * 8;
      return due;
    }
    case Pace::kTiming: {
      // Loops follow each other: loop k starts where loop k-1's last frame was.
      const TimeNs span = frames.back().ts_ns - frames.front().ts_ns;
      return static_cast<TimeNs>(loop) * span + frames[index].ts_ns - frames.front().ts_ns;
    }
  }
  return 0;
}

bool Replayer::Receive() {
  rte_mbuf* mbufs[kBurst];
  const uint16_t n = rte_eth_rx_burst(port_, 0, mbufs, kBurst);
  const TimeNs now = WallNs();
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = mbufs[i];
    if (writer_ != nullptr) {
      const uint32_t len = std::min<uint32_t>(m->pkt_len, static_cast<uint32_t>(scratch_.size()));
      const auto* data = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, scratch_.data()));
      writer_->Write(now, data, len);
    }
    rte_pktmbuf_free(m);
  }
  received_ += n;
  return n > 0;
}

// Keeps receiving while it waits; sleeps when the deadline is far, so it shares a small machine.
void Replayer::WaitUntil(TimeNs deadline) {
  for (TimeNs now = MonotonicNs(); now < deadline && !g_stop; now = MonotonicNs()) {
    if (Receive()) continue;
    const TimeNs left = deadline - now;
    if (left > 100'000) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<TimeNs>(left / 2, 1'000'000)));
    }
  }
}

// Sends the pending burst; a port that takes nothing for --wait loses the rest (counted).
void Replayer::Flush() {
  std::size_t done = 0;
  TimeNs stalled_since = MonotonicNs();
  while (done < burst_.size() && !g_stop) {
    const uint16_t n = rte_eth_tx_burst(port_, 0, burst_.data() + done,
                                        static_cast<uint16_t>(burst_.size() - done));
    done += n;
    sent_ += n;
    if (n > 0) {
      stalled_since = MonotonicNs();
      continue;
    }
    Receive();  // a peer that loops frames back needs us to drain them
    if (MonotonicNs() - stalled_since > spec_.wait_ns) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (std::size_t i = done; i < burst_.size(); ++i) rte_pktmbuf_free(burst_[i]);
  unsent_ += burst_.size() - done;
  burst_.clear();
}

void Replayer::Run(const std::vector<PcapRecord>& frames) {
  const TimeNs start = MonotonicNs();
  const uint16_t room = static_cast<uint16_t>(RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM);
  for (uint64_t loop = 0; loop < spec_.loops && !frames.empty() && !g_stop; ++loop) {
    for (std::size_t i = 0; i < frames.size() && !g_stop; ++i) {
      const TimeNs due = start + Due(frames, loop, i);
      if (due > MonotonicNs()) {
        Flush();  // what is due already goes first
        WaitUntil(due);
      }
      const std::vector<uint8_t>& bytes = frames[i].bytes;
      rte_mbuf* m = bytes.size() <= room ? rte_pktmbuf_alloc(pool_) : nullptr;
      if (m == nullptr) {  // too long for one mbuf (checked at load), or the pool is dry
        Flush();
        m = rte_pktmbuf_alloc(pool_);
        if (m == nullptr) {
          ++unsent_;
          continue;
        }
      }
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size())), bytes.data(),
                  bytes.size());
      burst_.push_back(m);
      if (burst_.size() == kBurst) Flush();
    }
  }
  Flush();
  ReceiveUntilQuiet();
}

void Replayer::ReceiveUntilQuiet() {
  TimeNs last = MonotonicNs();
  TimeNs backoff = 1000;
  while (!g_stop && (spec_.expect == 0 || received_ < spec_.expect)) {
    if (Receive()) {
      last = MonotonicNs();
      backoff = 1000;
      continue;
    }
    if (MonotonicNs() - last >= spec_.wait_ns) break;
    std::this_thread::sleep_for(std::chrono::nanoseconds(backoff));
    backoff = std::min<TimeNs>(backoff * 2, 200'000);
  }
}

// The port's link comes up when the peer attaches (virtio_user to a vhost socket).
void WaitForLink(uint16_t port) {
  const TimeNs deadline = MonotonicNs() + kLinkWaitNs;
  rte_eth_link link;
  while (!g_stop && MonotonicNs() < deadline) {
    std::memset(&link, 0, sizeof(link));
    if (rte_eth_link_get_nowait(port, &link) != 0 || link.link_status == RTE_ETH_LINK_UP) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Result<std::vector<PcapRecord>> LoadFrames(const std::string& path) {
  if (path.empty()) return std::vector<PcapRecord>();
  Result<std::vector<PcapRecord>> frames = ReadPcapFile(path);
  if (!frames.ok()) return frames.status();
  const std::size_t room = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
  for (std::size_t i = 0; i < frames->size(); ++i) {
    if ((*frames)[i].bytes.size() > room) {
      return Status::Error(path + ": frame " + std::to_string(i + 1) + " has " +
                           std::to_string((*frames)[i].bytes.size()) + " bytes, more than " +
                           std::to_string(room));
    }
  }
  return frames;
}

// Set-up problems are errors (exit 2); *short_of_expect says fewer than --expect frames came.
Status Replay(const ReplaySpec& spec, std::ostream& out, bool* short_of_expect) {
  Result<std::vector<PcapRecord>> frames = LoadFrames(spec.in);
  if (!frames.ok()) return frames.status();
  std::unique_ptr<PcapWriter> writer;
  if (!spec.out.empty()) {
    Result<std::unique_ptr<PcapWriter>> opened = PcapWriter::Open(spec.out);
    if (!opened.ok()) return opened.status();
    writer = std::move(*opened);
  }
  EalArgs eal = MakeEalArgs("", spec.eal_args, HostHugepagesUsable());
  if (eal.added_no_huge) std::cerr << "swemu-replay: no free hugepages; running with --no-huge\n";
  eal.added_no_huge = false;
  SWEMU_RETURN_IF_ERROR(InitEal(eal, std::cerr));
  Status status;
  {  // the pool and the port go before EAL does
    Result<MbufPool> pool = MbufPool::Create(kMbufs, 128, static_cast<int>(rte_socket_id()));
    DpdkPorts ports;
    status = pool.status();
    if (status.ok()) status = ports.Open(1, {{0, spec.devargs}}, pool->mempool());
    if (status.ok()) {
      WaitForLink(ports.dpdk_port(0));
      if (!spec.ready_file.empty()) std::ofstream(spec.ready_file) << "ready\n";
      Replayer replayer(spec, ports.dpdk_port(0), pool->mempool(), writer.get());
      replayer.Run(*frames);
      out << "sent " << replayer.sent() << ", received " << replayer.received();
      if (replayer.unsent() > 0) out << ", not sent " << replayer.unsent() << " (port full)";
      out << "\n" << std::flush;
      *short_of_expect = spec.expect > 0 && replayer.received() < spec.expect;
    }
  }
  CleanupEal();
  if (status.ok() && writer != nullptr) status = writer->Close();
  return status;
}

int Main(int argc, char** argv) {
  // Everything after "--" is EAL's.
  int ours = 1;
  while (ours < argc && std::string(argv[ours]) != "--") ++ours;
  ReplaySpec spec;
  for (int i = ours + 1; i < argc; ++i) spec.eal_args.emplace_back(argv[i]);
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(ours, argv, Options()), vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-replay: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: swemu-replay --port DEVARGS [--in FILE] [--out FILE] [--pps N | --mbps N"
                 " | --timing] [--loop N] [--wait D] [--expect N] -- EAL ARGS...\n\n"
              << Options()
              << "\nexample (a host on port 0 of configs/ci_vhost.ini, swemu running):\n"
                 "  swemu-replay --port net_virtio_user0,path=/tmp/swemu-vhost0.sock,"
                 "queue_size=256 --in to_b.pcap --topspeed -- -l 1 --no-pci --no-huge -m 128 "
                 "--file-prefix peer-a\n"
                 "every option: docs/cli.md\n";
    return 0;
  }
  Status status = ParseSpec(vm, spec);
  bool short_of_expect = false;
  if (status.ok()) {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    status = Replay(spec, std::cout, &short_of_expect);
  }
  if (!status.ok()) {
    std::cerr << "swemu-replay: " << status.message() << "\n";
    return 2;
  }
  if (short_of_expect) {
    std::cerr << "swemu-replay: expected " << spec.expect << " frames\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-replay", [&] { return swemu::Main(argc, argv); });
}
