// ring_seed: puts frames into the net_ring loop of a running DPDK forwarder, for compare.sh.
//
// A net_ring vdev given no arguments transmits into its own receive ring: what a forwarder
// sends on it comes back to it, so frames put into such a loop once circulate for as long as
// the forwarder runs. testpmd can seed a loop itself (--tx-first); swemu and DPDK's SWX app
// cannot, so this seeds all of them alike. It runs as a DPDK secondary process of the forwarder
// (its --file-prefix and --proc-type=secondary; DPDK has secondary processes on hugepages only),
// waits until the forwarder has started the port, and puts the frames of the pcaps (taken in
// turn, repeated up to --count) into the port's ring with one transmit call.
//
// The mbufs come from the forwarder's own pool (--pool), so that the forwarder frees any it
// drops with its own mempool code: a pool's handlers are found by an index into a per-process
// table, filled in the order each process registers its drivers, and testpmd, the SWX app and
// swemu link different drivers than this process. For the same reason this process takes them
// straight from the pool's ring (pools are ring-backed unless a driver says otherwise; others
// are refused) instead of through that table.
//
// One call, because net_ring's rings are single-producer and the forwarder enqueues into the
// same ring once frames circulate: it can only do so after it received one of these frames,
// that is after this call ended. For the same reason only one port of a forwarder is seeded.
//
//   ring_seed --port NAME --pool NAME --pcap FILE [--pcap FILE...] [--count N] -- EAL ARGS
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

// A ring holds 1023 frames (1024 slots, one kept free); a loop must never overflow one, or
// the forwarder's transmit would drop frames and the loop would thin out.
constexpr uint64_t kMaxFrames = 1023;
constexpr auto kPortWait = std::chrono::seconds(20);

int Fail(const std::string& message) {
  std::cerr << "ring_seed: " << message << "\n";
  return 2;
}

// The pcaps' frames, taken in turn (first of each file, then second of each, ...).
Result<std::vector<std::vector<uint8_t>>> ReadFrames(const std::vector<std::string>& paths) {
  std::vector<std::vector<PcapRecord>> files;
  for (const std::string& path : paths) {
    Result<std::vector<PcapRecord>> records = ReadPcapFile(path);
    if (!records.ok()) return records.status();
    if (records->empty()) return Status::Error(path + ": no frames");
    for (const PcapRecord& record : *records) {
      if (record.bytes.size() > RTE_MBUF_DEFAULT_DATAROOM) {
        return Status::Error(path + ": a frame of " + std::to_string(record.bytes.size()) +
                             " bytes does not fit one mbuf");
      }
    }
    files.push_back(std::move(*records));
  }
  std::vector<std::vector<uint8_t>> mixed;
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const std::vector<PcapRecord>& records : files) {
      if (i < records.size()) {
        mixed.push_back(records[i].bytes);
        any = true;
      }
    }
    if (!any) return mixed;
  }
}

// The forwarder's ring-backed mbuf pool, or why it cannot be used.
Result<rte_mempool*> FindPool(const std::string& name) {
  rte_mempool* pool = rte_mempool_lookup(name.c_str());
  if (pool == nullptr)
    return Status::Error("--pool " + name + ": the primary process has no such pool");
  // Ring-backed pools keep their free objects in a ring named after the pool.
  char ring_name[RTE_RING_NAMESIZE];
  snprintf(ring_name, sizeof(ring_name), RTE_MEMPOOL_MZ_FORMAT, name.c_str());
  const rte_ring* ring = rte_ring_lookup(ring_name);
  if (ring == nullptr || ring != pool->pool_data ||
      (ring->flags & (RING_F_SP_ENQ | RING_F_SC_DEQ)) != 0) {
    return Status::Error("--pool " + name + ": not a multi-producer, multi-consumer ring pool");
  }
  return pool;
}

// Waits until the primary has started the port (net_ring reports its link up from then on).
bool WaitForStartedPort(uint16_t port) {
  const auto deadline = std::chrono::steady_clock::now() + kPortWait;
  while (std::chrono::steady_clock::now() < deadline) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// What to seed: the options before "--", checked, and the frames read.
struct SeedOptions {
  std::string port;
  std::string pool;
  uint64_t count = 0;
  std::vector<std::vector<uint8_t>> frames;
};

// -1 to go on, or the exit status (0 after --help, 2 after one line naming the problem).
int ParseSeedOptions(int split, char** argv, SeedOptions* o) {
  po::options_description options("ring_seed options");
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("port", po::value<std::string>()->value_name("NAME"), "the net_ring port (required)")
      ("pool", po::value<std::string>()->value_name("NAME"),
       "the forwarder's mbuf pool (required): mb_pool_0 (testpmd), MEMPOOL0 (the SWX app's "
       "script), swemu_mbufs (swemu)")
      ("pcap", po::value<std::vector<std::string>>()->value_name("FILE"),
       "frames to seed, repeatable (required)")
      ("count", po::value<std::string>()->default_value("512"), "frames to put into the loop");
  // clang-format on
  po::variables_map vm;
  po::store(po::parse_command_line(split, argv, options), vm);
  if (vm.count("help")) {
    std::cout << "usage: ring_seed --port NAME --pool NAME --pcap FILE [--count N] -- EAL ARGS\n\n"
              << options;
    return 0;
  }
  if (!vm.count("port")) return Fail("--port: required");
  if (!vm.count("pool")) return Fail("--pool: required");
  if (!vm.count("pcap")) return Fail("--pcap: required");
  Result<uint64_t> count = ParseUint(vm["count"].as<std::string>(), 1, kMaxFrames);
  if (!count.ok()) return Fail("--count: " + count.message());
  Result<std::vector<std::vector<uint8_t>>> frames =
      ReadFrames(vm["pcap"].as<std::vector<std::string>>());
  if (!frames.ok()) return Fail(frames.message());
  o->port = vm["port"].as<std::string>();
  o->pool = vm["pool"].as<std::string>();
  o->count = *count;
  o->frames = std::move(*frames);
  return -1;
}

// The EAL as a secondary process of the forwarder, from the arguments after "--": -1, or the
// exit status after one line.
int InitSecondaryEal(int argc, char** argv, int split) {
  std::vector<char*> eal_argv = {argv[0]};
  for (int i = split + 1; i < argc; ++i) eal_argv.push_back(argv[i]);
  if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
    return Fail("EAL: initialisation failed (" + std::string(rte_strerror(rte_errno)) +
                "); is a primary process running with this --file-prefix?");
  }
  if (rte_eal_process_type() != RTE_PROC_SECONDARY) {
    rte_eal_cleanup();
    return Fail(
        "EAL: not a secondary process (give the forwarder's --file-prefix and "
        "--proc-type=secondary)");
  }
  return -1;
}

// Copies the frames, in turn, into the mbufs, as rte_pktmbuf_alloc would hand them out: 0, or
// the exit status after one line.
int FillMbufs(const SeedOptions& o, const std::vector<rte_mbuf*>& mbufs) {
  for (uint64_t i = 0; i < o.count; ++i) {
    const std::vector<uint8_t>& frame = o.frames[i % o.frames.size()];
    rte_mbuf* m = mbufs[i];
    rte_pktmbuf_reset(m);  // what rte_pktmbuf_alloc does after taking it from the pool
    rte_mbuf_refcnt_set(m, 1);
    if (frame.size() > rte_pktmbuf_tailroom(m)) {
      return Fail("--pool: its mbufs are too small for a frame of " + std::to_string(frame.size()) +
                  " bytes");
    }
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame.data(), frame.size());
    m->data_len = static_cast<uint16_t>(frame.size());
    m->pkt_len = static_cast<uint32_t>(frame.size());
  }
  return 0;
}

// Takes --count mbufs from the pool's ring, fills them and sends them in one call; what the
// port did not take goes back to the ring. The exit status.
int Seed(const SeedOptions& o, uint16_t port, rte_ring* ring) {
  std::vector<rte_mbuf*> mbufs(o.count);
  const auto n = static_cast<unsigned>(o.count);
  if (rte_ring_dequeue_bulk(ring, reinterpret_cast<void**>(mbufs.data()), n, nullptr) != n) {
    return Fail("--pool: fewer than " + std::to_string(n) + " free mbufs");
  }
  int status = FillMbufs(o, mbufs);
  uint16_t sent = 0;
  if (status == 0) sent = rte_eth_tx_burst(port, 0, mbufs.data(), static_cast<uint16_t>(n));
  if (sent != n) {
    // Back to the pool the way they came (not through this process's mempool table).
    rte_ring_enqueue_bulk(ring, reinterpret_cast<void* const*>(mbufs.data() + sent), n - sent,
                          nullptr);
  }
  if (status == 0 && sent != n) {
    status = Fail("--port " + o.port + ": the ring took " + std::to_string(sent) + " of " +
                  std::to_string(n) + " frames (was it seeded before?)");
  }
  if (status == 0) std::cout << "ring_seed: " << sent << " frames into " << o.port << "\n";
  return status;
}

// The started port and the pool's ring, then the seeding: the exit status.
int FindAndSeed(const SeedOptions& o) {
  uint16_t port = 0;
  if (rte_eth_dev_get_port_by_name(o.port.c_str(), &port) != 0) {
    return Fail("--port " + o.port + ": the primary process has no such port");
  }
  if (!WaitForStartedPort(port)) return Fail("--port " + o.port + ": not started within 20 s");
  Result<rte_mempool*> pool = FindPool(o.pool);
  if (!pool.ok()) return Fail(pool.message());
  return Seed(o, port, static_cast<rte_ring*>((*pool)->pool_data));
}

int Main(int argc, char** argv) {
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      split = i;
      break;
    }
  }
  SeedOptions o;
  if (const int exit_now = ParseSeedOptions(split, argv, &o); exit_now >= 0) return exit_now;
  if (const int failed = InitSecondaryEal(argc, argv, split); failed >= 0) return failed;
  const int status = FindAndSeed(o);
  // The mbufs now circulate in the forwarder, which frees any it drops to its own pool.
  rte_eal_cleanup();
  return status;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("ring_seed", [&] { return swemu::Main(argc, argv); });
}
