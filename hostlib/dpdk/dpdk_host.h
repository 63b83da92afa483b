#pragma once
// Host endpoints on DPDK ports: a net_virtio_user port on a socket of swemu's net_vhost port, or a
// real NIC. A DpdkHost owns EAL's ports and one mbuf pool for a host process; each port is a
// DpdkPortTransport (Transport for sending, Poll for receiving) that one lcore drives
// (host_runner.h). EAL is initialised once per process (DPDK cannot do it twice), before the
// first DpdkHost; one DpdkHost is open at a time (the mbuf pool has a fixed name).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "pipeline/core/status.h"
#include "swemu/dpdk/ports.h"

struct rte_mbuf;
struct rte_mempool;

namespace swemu {

class MbufPool;

struct DpdkPortCounters {
  uint64_t rx_frames = 0;         // handed to Poll's callback
  uint64_t rx_multi_segment = 0;  // dropped: longer than one mbuf
  uint64_t tx_frames = 0;         // taken by the port
  uint64_t tx_no_buffer = 0;      // Send refused: the pool was dry or the frame too long
  uint64_t tx_port_full = 0;      // queued by Send, refused by the port at a flush (freed)

  // "rx N tx N tx_no_buffer N tx_port_full N", for diagnostics.
  std::string ToString() const;
};

// One host port. Send copies the frame into an mbuf and queues it; the queue goes to the port
// when it holds a burst or at Flush (the driver flushes at the end of every poll round).
class DpdkPortTransport final : public Transport {
 public:
  static constexpr uint16_t kBurst = 32;

  DpdkPortTransport(uint16_t port_id, rte_mempool* pool) : port_id_(port_id), pool_(pool) {}
  ~DpdkPortTransport() override { Flush(); }
  DpdkPortTransport(const DpdkPortTransport&) = delete;
  DpdkPortTransport& operator=(const DpdkPortTransport&) = delete;

  bool Send(std::span<const uint8_t> frame) noexcept override;
  // Hands up to `max` received frames, one at a time, to on_frame (each span is valid only
  // during its call); returns how many. Stops early when the port has no more.
  uint32_t Poll(const std::function<void(std::span<const uint8_t>)>& on_frame,
                uint32_t max = kBurst) noexcept;
  // Gives the queued frames to the port; what it refuses is freed and counted (tx_port_full).
  void Flush() noexcept;

  uint16_t port_id() const noexcept { return port_id_; }
  const DpdkPortCounters& counters() const noexcept { return counters_; }

 private:
  uint16_t port_id_;
  rte_mempool* pool_;
  uint16_t queued_ = 0;
  std::array<rte_mbuf*, kBurst> tx_{};
  DpdkPortCounters counters_;
};

struct DpdkHostConfig {
  std::vector<std::string> ports;  // devargs, one per host port: "net_virtio_user0,path=/x.sock"
  // At least every port's RX and TX ring plus the cache and a margin: a smaller figure is
  // raised to that.
  uint32_t mbufs = 4095;
  uint32_t mbuf_cache = 128;
  // A host's rings are smaller than a switch's, and it reclaims sent mbufs early: what it
  // touches per frame (mbuf headers, RX buffers) then stays within one core's L2. With the
  // switch's 1024/1024 and the driver's late reclaim, the hosts' working set was ~5 MB over five
  // virtio_user ports, met the L3 shared with whatever else ran, and the ATP main job's
  // in-network goodput varied from 0.651 to 0.735 Gbit/s between runs; with these, 0.729 to
  // 0.746 (docs/performance.md). A frame that finds the RX ring full waits in the switch's
  // TM queue (a port whose device refused frames is not dequeued),
  // so the smaller ring loses nothing there.
  PortQueues queues{.rx_descriptors = 256, .tx_descriptors = 1024, .tx_reclaim_after = 32};
  TimeNs link_wait_ns = 3'000'000'000;  // a virtio_user link comes up when vhost attaches
};

class DpdkHost {
 public:
  // rte_eal_init from EAL arguments (without argv[0]), adding --no-huge -m 256 when the host
  // has no usable hugepages and --log-level=notice, as swemu does. Once per process; errors:
  // "EAL: <reason>", "EAL: already initialised in this process".
  static Status InitEal(const std::vector<std::string>& eal_args, std::ostream& err);
  // rte_eal_cleanup, after every DpdkHost is closed.
  static void CleanupEal();
  // What EAL needs for a host port given as devargs, beyond its lcore and file prefix: a
  // virtual device (net_*: virtio_user, af_packet, tap) runs without the PCI bus or hugepages,
  // in memory_mb of ordinary memory; a NIC (a PCI address) needs both, so nothing is added.
  static std::vector<std::string> PortEalArgs(const std::string& devargs, uint32_t memory_mb);

  // Makes the pool and opens, starts and waits for the link of every port. Errors name the
  // port: "port 1: devargs net_foo0: no such driver", "mbuf pool: ...".
  static Result<std::unique_ptr<DpdkHost>> Open(const DpdkHostConfig& config);
  ~DpdkHost();
  DpdkHost(const DpdkHost&) = delete;
  DpdkHost& operator=(const DpdkHost&) = delete;

  std::size_t num_ports() const { return transports_.size(); }
  DpdkPortTransport& port(std::size_t index) { return *transports_[index]; }
  bool link_up(std::size_t index) const;
  std::size_t mbufs_in_use() const;

  // Flushes, stops and closes every port, detaches their devices (so the same devargs can be
  // opened again) and frees the pool. Error when mbufs were not returned ("3 mbufs leaked").
  // Idempotent; the destructor calls it.
  Status Close();

 private:
  DpdkHost() = default;

  std::unique_ptr<MbufPool> pool_;
  std::unique_ptr<DpdkPorts> ports_;
  uint16_t num_ports_ = 0;
  std::vector<std::unique_ptr<DpdkPortTransport>> transports_;
};

// Calls DpdkHost::CleanupEal when it goes out of scope. Declared right after a successful
// InitEal and before the host, it runs after the host is closed, on every path, and removes
// the process's runtime directory (/var/run/dpdk/<prefix>, MBs in tmpfs).
struct EalCleanupAtScopeExit {
  EalCleanupAtScopeExit() = default;
  EalCleanupAtScopeExit(const EalCleanupAtScopeExit&) = delete;
  EalCleanupAtScopeExit& operator=(const EalCleanupAtScopeExit&) = delete;
  ~EalCleanupAtScopeExit() { DpdkHost::CleanupEal(); }
};

}  // namespace swemu
