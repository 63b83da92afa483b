// swemu in real time with more lcores than CPUs: [dpdk] workers = 8 on EAL --lcores mapping
// lcores 0-7 onto CPUs 0 and 1 (four threads per CPU, which the kernel time-slices). Every frame
// crosses lcores at RX (shard key) and at egress (its port's owner) at random moments of the
// other lcores' schedules, so these runs check what sharding must keep whatever the timing:
// every frame received is sent or dropped with a reason, each flow leaves in order, and the
// `atp` program's aggregators, spread over the 8 lcores by seq, give the exact sums.
//
// No timing assumption: swemu runs in the background and is stopped (SIGINT) once its control
// socket says every frame has left, or after a generous deadline; then the assertions run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/wire/atp.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/swemu/pcap_frames.h"
#include "tests/swemu/swemu_subprocess.h"

namespace swemu {
namespace {

using testing::AtpElement;
using testing::AtpOf;

using testing::Frames;
using testing::ReadFrames;
using testing::ReadText;
using testing::WritePcap;

constexpr int kLcores = 8;
constexpr auto kDeadline = std::chrono::seconds(60);  // a loaded machine; a run takes ~1 s

std::string TestDir() { return testing::TestDirFor("swemu_multicore_lcores_test_"); }

// Lcores 0-7 on CPUs 0 and 1, alternately; lcore 0 is the main lcore.
std::string EalArgs() {
  std::string lcores;
  for (int i = 0; i < kLcores; ++i) {
    lcores += (i ? "," : "") + std::to_string(i) + "@" + std::to_string(i % 2);
  }
  return " -- --no-huge -m 256 --no-pci --lcores " + lcores + " --file-prefix " +
         testing::DpdkFilePrefix();
}

// Per port: net_pcap reading in<p>.pcap and writing out<p>.pcap in the test's directory.
std::string PcapPorts(int ports) {
  const std::string dir = TestDir();
  std::string ini;
  for (int p = 0; p < ports; ++p) {
    const std::string n = std::to_string(p);
    ini += "[port." + n + "]\ndevargs = net_pcap" + n + ",rx_pcap=" + dir + "in" + n +
           ".pcap,tx_pcap=" + dir + "out" + n + ".pcap\n";
  }
  return ini;
}

// swemu in the background with its own control socket; Stop sends SIGINT and waits.
class BackgroundSwemu {
 public:
  explicit BackgroundSwemu(const std::string& args) : dir_(TestDir()), sock_(dir_ + "ctl.sock") {
    const std::string start = "(" + testing::kSwemuBinary + " --control-socket " + sock_ + " " +
                              args + " >" + dir_ + "stdout 2>" + dir_ +
                              "stderr </dev/null & echo $! >" + dir_ + "pid; wait $!; echo $? >" +
                              dir_ + "status) &";
    EXPECT_EQ(std::system(start.c_str()), 0);
    for (int i = 0; i < 500 && pid_ <= 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::ifstream(dir_ + "pid") >> pid_;
    }
    EXPECT_GT(pid_, 0);
  }
  ~BackgroundSwemu() { Stop(); }

  // The answer to one control line, or nullopt while the socket does not answer.
  std::optional<std::string> Cli(const std::string& command) const {
    const std::string line = SWEMU_BINARY_DIR "/tools/swemu-cli --socket " + sock_ + " '" +
                             command + "' >" + dir_ + "cli.out 2>&1";
    if (std::system(line.c_str()) != 0) return std::nullopt;
    return ReadText(dir_ + "cli.out");
  }
  // Frames sent by every port (`show ports`), or nullopt while the socket does not answer.
  std::optional<uint64_t> Sent() const {
    std::optional<std::string> answer = Cli("show ports");
    if (!answer) return std::nullopt;
    std::istringstream rows(*answer);
    uint64_t sent = 0;
    for (std::string row; std::getline(rows, row);) {
      uint64_t port = 0, rx_pkts = 0, rx_bytes = 0, tx_pkts = 0;
      if (std::istringstream(row) >> port >> rx_pkts >> rx_bytes >> tx_pkts) sent += tx_pkts;
    }
    return sent;
  }
  // Waits until the switch has sent `frames` (or the deadline passed, or swemu exited).
  void WaitUntilSent(uint64_t frames) const {
    const auto end = std::chrono::steady_clock::now() + kDeadline;
    while (std::chrono::steady_clock::now() < end && !Exited()) {
      std::optional<uint64_t> sent = Sent();
      if (sent && *sent >= frames) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // SIGINT, then the exit status line ("0\n"); the EAL runtime directory is removed.
  std::string Stop() {
    if (pid_ > 0 && !Exited()) kill(pid_, SIGINT);
    pid_ = 0;
    for (int i = 0; i < 3000 && !Exited(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::error_code ignored;
    std::filesystem::remove_all("/var/run/dpdk/" + testing::DpdkFilePrefix(), ignored);
    return ReadText(dir_ + "status");
  }
  std::string out() const { return ReadText(dir_ + "stdout"); }
  std::string err() const { return ReadText(dir_ + "stderr"); }

 private:
  bool Exited() const { return !ReadText(dir_ + "status").empty(); }

  std::string dir_;
  std::string sock_;
  pid_t pid_ = 0;
};

// The shutdown summary: per-port wire counters (each from its owner), drops by reason summed
// over the lcores, gradients the program consumed, and what was left anywhere.
struct Summary {
  uint64_t rx = 0;
  uint64_t tx = 0;
  std::map<std::string, uint64_t> drops;
  uint64_t consumed = 0;
  uint64_t queued = 0;
  bool discarded = false;  // a "discarded at shutdown" line

  explicit Summary(const std::string& text) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream in(line);
      std::string device;
      uint64_t port = 0, rx_pkts = 0, rx_bytes = 0, tx_pkts = 0;
      if (in >> port >> device >> rx_pkts >> rx_bytes >> tx_pkts) {
        rx += rx_pkts;
        tx += tx_pkts;
      } else if (line.rfind("  drops: ", 0) == 0 && line != "  drops: none") {
        std::istringstream reasons(line.substr(9));
        for (std::string reason, count; reasons >> reason >> count;) {
          drops[reason] = std::stoull(count);  // "table_miss 4," -> 4
        }
      } else if (line.rfind("  consumed ", 0) == 0) {  // "  consumed N, queued M, ..."
        consumed = std::stoull(line.substr(11));
        queued = std::stoull(line.substr(line.find("queued ") + 7));
      }
      discarded = discarded || line.find("discarded at shutdown") != std::string::npos;
    }
  }
  uint64_t dropped() const {
    uint64_t n = 0;
    for (const auto& [reason, count] : drops) n += count;
    return n;
  }
};

// Conservation: every frame received was sent, dropped with a reason or consumed.
void ExpectConserved(const Summary& s, uint64_t received) {
  EXPECT_EQ(s.rx, received);
  EXPECT_EQ(s.rx, s.tx + s.dropped() + s.consumed);
  EXPECT_EQ(s.queued, 0u);
  EXPECT_FALSE(s.discarded);
}

// Frames by flow (the UDP or TCP source port and the IPv4 source), each flow in order.
std::map<uint64_t, Frames> ByFlow(const Frames& frames) {
  std::map<uint64_t, Frames> flows;
  for (const auto& f : frames) {
    flows[uint64_t{LoadBe32(&f[26])} << 16 | LoadBe16(&f[34])].push_back(f);
  }
  return flows;
}

class MulticoreLcoresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove_all(TestDir());
    std::filesystem::create_directories(TestDir());
  }
};

MacAddr HostMac(int port) { return MacAddr::FromU64(0x020000000000ULL | uint64_t(port)); }

// l2l3 between 4 ports: each port sends 16 flows, each to one of the 3 other ports' MACs, and
// a few frames to a MAC no entry knows (table_miss). 8 lcores: lcores 0-3 own a port each,
// 4-7 only run ingress for their shards.
TEST_F(MulticoreLcoresTest, EightLcoresOnTwoCpusForwardEveryFlowInOrder) {
  constexpr int kPorts = 4;
  constexpr int kFlowsPerPort = 16;
  constexpr int kFramesPerPort = 1000;  // so each port is sent under 1000: a queue holds 1024
  const std::string dir = TestDir();
  std::vector<Frames> expected(kPorts);
  uint64_t misses = 0;
  for (int p = 0; p < kPorts; ++p) {
    Frames in;
    for (int i = 0; i < kFramesPerPort; ++i) {
      const int flow = i % kFlowsPerPort;
      const int to = (p + 1 + flow % (kPorts - 1)) % kPorts;
      const bool miss = i % 97 == 13;
      in.push_back(
          FrameBuilder()
              .Eth(miss ? MacAddr::FromU64(0xee) : HostMac(to), HostMac(p))
              .Ipv4(MakeIpv4Addr(10, 0, 0, uint8_t(p)), MakeIpv4Addr(10, 0, 0, uint8_t(to)))
              .Identification(uint16_t(i))
              .Udp(uint16_t(1000 + flow), 2000)
              .Payload(40)
              .Build());
      if (miss) {
        ++misses;
      } else {
        expected[to].push_back(in.back());
      }
    }
    WritePcap(dir + "in" + std::to_string(p) + ".pcap", in);
  }
  std::ofstream cli(dir + "fwd.cli");
  for (int p = 0; p < kPorts; ++p) {
    cli << "table_add dmac forward " << FormatMac(HostMac(p)) << " => " << p << "\n";
  }
  cli.close();
  std::ofstream(dir + "mc.ini") << "[switch]\nports = " << kPorts
                                << "\nprogram = l2l3\ncli = fwd.cli\n[dpdk]\nmbufs = 8191\n"
                                   "mbuf_cache = 64\nworkers = "
                                << kLcores << "\n"
                                << PcapPorts(kPorts);
  const uint64_t forwarded = uint64_t(kPorts) * kFramesPerPort - misses;

  BackgroundSwemu swemu("--config " + dir + "mc.ini --run-for 120s" + EalArgs());
  swemu.WaitUntilSent(forwarded);
  ASSERT_EQ(swemu.Stop(), "0\n") << swemu.err();
  const std::string out = swemu.out();
  EXPECT_NE(out.find("real time, 8 lcores)"), std::string::npos) << out;
  const Summary summary(out);
  ExpectConserved(summary, uint64_t(kPorts) * kFramesPerPort);
  EXPECT_EQ(summary.tx, forwarded) << out;
  EXPECT_EQ(summary.drops, (std::map<std::string, uint64_t>{{"table_miss", misses}})) << out;
  for (int p = 0; p < kPorts; ++p) {
    const Frames sent = ReadFrames(dir + "out" + std::to_string(p) + ".pcap");
    EXPECT_EQ(sent.size(), expected[p].size()) << "port " << p;
    EXPECT_EQ(ByFlow(sent), ByFlow(expected[p])) << "port " << p;  // each flow in its order
  }
  EXPECT_EQ(swemu.err().find("leak"), std::string::npos) << swemu.err();
}

// configs/atp_rack.cli's job (job 1, 16384 aggregators): 4 workers (ports 0-3) from swemu-gen,
// the PS on port 4, with background TCP flows to the PS. The shard key is the aggregator, and a
// job's seqs take consecutive aggregators, so each lcore aggregates every 8th seq; each seq's 4
// gradients come in on 4 ports owned by 4 lcores, and its result leaves through lcore 4, the PS
// port's owner.
TEST_F(MulticoreLcoresTest, EightLcoresOnTwoCpusAggregateExactSums) {
  constexpr int kWorkers = 4;
  constexpr int kElements = 64;
  const std::string dir = TestDir();
  const testing::RunResult gen =
      testing::RunCommandIn(dir, SWEMU_BINARY_DIR
                                     "/tools/swemu-gen --workload atp --layers 2 --iterations 2 "
                                     "--background-flows 2 --background-bytes 5000 -o " +
                                     dir + "in{w}.pcap");
  ASSERT_EQ(gen.status, 0) << gen.err;
  WritePcap(dir + "in4.pcap", {});  // the PS sends nothing: no parameter packets

  std::map<uint32_t, std::vector<int64_t>> sums;  // by seq
  Frames tcp;
  uint64_t received = 0;
  for (int w = 0; w < kWorkers; ++w) {
    for (const auto& f : ReadFrames(dir + "in" + std::to_string(w) + ".pcap")) {
      ++received;
      std::optional<AtpFields> atp = AtpOf(f);
      if (!atp) {
        tcp.push_back(f);
        continue;
      }
      std::vector<int64_t>& sum = sums[atp->seq];
      sum.resize(kElements);
      for (int i = 0; i < kElements; ++i) sum[i] += AtpElement(f, i);
    }
  }
  ASSERT_GT(sums.size(), std::size_t{kLcores} * 8);  // every lcore aggregates several seqs
  ASSERT_FALSE(tcp.empty());

  std::ofstream(dir + "atp.ini") << "[switch]\nports = 5\nprogram = atp\ncli = " SWEMU_SOURCE_DIR
                                    "/configs/atp_rack.cli\n[dpdk]\nmbufs = 8191\n"
                                    "mbuf_cache = 64\nworkers = "
                                 << kLcores << "\n"
                                 << PcapPorts(5);
  BackgroundSwemu swemu("--config " + dir + "atp.ini --run-for 120s" + EalArgs());
  swemu.WaitUntilSent(sums.size() + tcp.size());
  // Cell i of a register is read from lcore i % 8, its owner: 8 consecutive seqs hold 8
  // consecutive aggregators, so each lcore must have aggregated one of them.
  for (auto it = sums.begin(); it != std::next(sums.begin(), kLcores); ++it) {
    const uint32_t cell = AtpAggregatorIndex(1, it->first, 16384);
    EXPECT_EQ(swemu.Cli("register_read atp_id " + std::to_string(cell)),
              "atp_id[" + std::to_string(cell) +
                  "]=" + std::to_string(AtpAggregatorId(1, it->first)) + "\n");
  }
  ASSERT_EQ(swemu.Stop(), "0\n") << swemu.err();
  const std::string out = swemu.out();
  const Summary summary(out);
  ExpectConserved(summary, received);
  EXPECT_TRUE(summary.drops.empty()) << out;
  EXPECT_EQ(summary.consumed, (kWorkers - 1) * sums.size()) << out;

  std::map<uint32_t, int> results;
  Frames tcp_sent;
  for (const auto& f : ReadFrames(dir + "out4.pcap")) {
    std::optional<AtpFields> atp = AtpOf(f);
    if (!atp) {
      tcp_sent.push_back(f);
      continue;
    }
    ++results[atp->seq];
    // ECN may mark a result (the PS port's queue), nothing else.
    EXPECT_EQ(atp->flags & ~kAtpFlagEcn, kAtpFlagEdge) << "seq " << atp->seq;
    EXPECT_EQ(atp->bitmap, 0xFu) << "seq " << atp->seq;
    ASSERT_TRUE(sums.count(atp->seq)) << atp->seq;
    for (int i = 0; i < kElements; ++i) {
      ASSERT_EQ(AtpElement(f, i), sums[atp->seq][i]) << "seq " << atp->seq << " element " << i;
    }
  }
  EXPECT_EQ(results.size(), sums.size());  // every seq, once
  for (const auto& [seq, count] : results) EXPECT_EQ(count, 1) << "seq " << seq;
  EXPECT_EQ(ByFlow(tcp_sent), ByFlow(tcp));  // background flows in order
  for (int w = 0; w < kWorkers; ++w) {
    EXPECT_TRUE(ReadFrames(dir + "out" + std::to_string(w) + ".pcap").empty()) << w;
  }
  EXPECT_EQ(swemu.err().find("leak"), std::string::npos) << swemu.err();
}

// 64 lcores, the most [dpdk] workers allows, on 2 CPUs: the 3 x 64 x 63 shard rings come from
// the malloc heap (with one memzone per ring, as rte_ring_create makes them, swemu stopped at 29
// lcores: "shard rings: No space left on device"), and every frame is accounted for.
TEST(MulticoreManyLcoresTest, SixtyFourLcoresStartForwardAndStop) {
  const std::string dir = TestDir();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "many.ini")
      << "[switch]\nports = 2\nprogram = l2l3\n[tm]\nport_rate = 0\n"
         "[dpdk]\nworkers = 64\nmbufs = 16383\n"
         "[port.0]\ndevargs = net_null0\n[port.1]\ndevargs = net_null1\n";
  std::string lcores;
  for (int i = 0; i < 64; ++i)
    lcores += (i ? "," : "") + std::to_string(i) + "@" + std::to_string(i % 2);
  testing::RunResult run = testing::RunSwemuIn(
      dir, "--config " + dir + "many.ini --run-for 1s -- --no-huge -m 1024 --no-pci --lcores " +
               lcores + " --file-prefix " + testing::DpdkFilePrefix());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("real time, 64 lcores)"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("leak"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace swemu
