#pragma once
// The switch's ports on DPDK devices: [port.N] devargs names a vdev ("net_ring0",
// "net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap") or a PCI address. Each is probed, configured
// with one RX and one TX queue on the mbuf pool and started; any failure is one line naming
// the port, before any traffic.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

struct rte_mempool;

namespace swemu {

inline constexpr uint16_t kNoDpdkPort = 0xFFFF;

class DpdkPorts {
 public:
  static constexpr uint16_t kRxDescriptors = 1024;
  static constexpr uint16_t kTxDescriptors = 1024;

  DpdkPorts() = default;
  ~DpdkPorts() { Close(); }
  DpdkPorts(const DpdkPorts&) = delete;
  DpdkPorts& operator=(const DpdkPorts&) = delete;

  // Errors: "port 2: devargs net_foo0: no such driver", "port 1 failed to start: ...".
  Status Open(uint16_t num_switch_ports, const std::vector<std::pair<PortId, std::string>>& devargs,
              rte_mempool* mempool);
  // Stops and closes every started port (flushes pcap outputs); idempotent.
  void Close();

  // The DPDK port of switch port p, or kNoDpdkPort when p has no devargs.
  uint16_t dpdk_port(PortId p) const {
    return p < dpdk_ports_.size() ? dpdk_ports_[p] : kNoDpdkPort;
  }
  // "net_pcap0" for "net_pcap0,rx_pcap=..." ("-" without devargs), for summaries.
  const std::string& device(PortId p) const { return devices_[p]; }

 private:
  Status OpenOne(PortId port, const std::string& devargs, rte_mempool* mempool);

  std::vector<uint16_t> dpdk_ports_;  // by switch port
  std::vector<std::string> devices_;
  std::vector<uint16_t> started_;
};

}  // namespace swemu
