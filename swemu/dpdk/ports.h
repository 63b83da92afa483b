#pragma once
// The switch's ports on DPDK devices: [port.N] devargs names a vdev ("net_ring0",
// "net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap"), a PCI address, or "swemu_link:NAME:0" (or
// ":1"): one end of a link to another switch of the same swemu process (--also-switch), a pair
// of rte_rings that the two switches' loop passes frames over, without a copy; the sending
// port's rate (TM) and loss and delay ([port.N]) apply as on any port. Each is probed,
// configured with one RX and one TX queue on the mbuf pool and started; any failure is one line
// naming the port, before any traffic.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

struct rte_mempool;

namespace swemu {

inline constexpr uint16_t kNoDpdkPort = 0xFFFF;

// The rings of each port's one RX and one TX queue.
struct PortQueues {
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  // 0: the driver's default TX cleanup (virtio and most NICs reclaim sent mbufs only when the
  // ring is nearly full, so ~a ring's worth of them lingers). N: ask it to reclaim once more
  // than N sent descriptors are outstanding (tx_free_thresh = ring - N), so freed mbufs return
  // to the pool's per-lcore cache while still warm. A ring of N+3 entries or fewer, or a driver
  // that refuses the threshold, keeps the default.
  uint16_t tx_reclaim_after = 0;
};

// After every switch of the process opened its ports: each swemu_link has both its ends.
Status CheckLinksPaired();

class DpdkPorts {
 public:
  DpdkPorts() = default;
  ~DpdkPorts() { Close(); }
  DpdkPorts(const DpdkPorts&) = delete;
  DpdkPorts& operator=(const DpdkPorts&) = delete;

  // Errors: "port 2: devargs net_foo0: no such driver", "port 1 failed to start: ...".
  Status Open(uint16_t num_switch_ports, const std::vector<std::pair<PortId, std::string>>& devargs,
              rte_mempool* mempool, const PortQueues& queues = {});
  // Stops and closes every started port (flushes pcap outputs); idempotent.
  void Close();

  // The DPDK port of switch port p, or kNoDpdkPort when p has no devargs.
  uint16_t dpdk_port(PortId p) const {
    return p < dpdk_ports_.size() ? dpdk_ports_[p] : kNoDpdkPort;
  }
  // "net_pcap0" for "net_pcap0,rx_pcap=..." ("-" without devargs), for summaries.
  const std::string& device(PortId p) const { return devices_[p]; }

 private:
  Status OpenOne(PortId port, const std::string& devargs, rte_mempool* mempool,
                 const PortQueues& queues);

  std::vector<uint16_t> dpdk_ports_;  // by switch port
  std::vector<std::string> devices_;
  std::vector<uint16_t> started_;
};

}  // namespace swemu
