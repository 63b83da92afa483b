#pragma once
// A router interface of the switch (an SVI, a RIF): the router MAC, the gateway address and
// prefix of the subnet behind it, and the ports of that subnet. The switch config declares them
// ([interface.N], docs/cli.md); a program that routes reads them at Load (ProgramContext).
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

namespace swemu {

struct RouterInterface {
  uint32_t id = 0;          // N of [interface.N]
  uint64_t mac = 0;         // low 48 bits
  uint32_t ipv4 = 0;        // the gateway address hosts of the subnet use
  uint8_t prefix_len = 0;   // 1..30: the subnet is ipv4/prefix_len
  std::vector<PortId> ports;  // where the subnet's hosts are (ARP requests go out of these)

  uint32_t Mask() const noexcept { return prefix_len == 0 ? 0 : ~uint32_t{0} << (32 - prefix_len); }
  uint32_t Subnet() const noexcept { return ipv4 & Mask(); }
  bool Contains(uint32_t ip) const noexcept { return (ip & Mask()) == Subnet(); }
  friend bool operator==(const RouterInterface&, const RouterInterface&) = default;
};

// Checks a switch's interfaces together: each gateway a host address of its subnet (neither
// the subnet's own address nor its broadcast address), no gateway twice, no two subnets
// overlapping, ports below num_ports and in one interface only. The error names the interface
// ("interface.2: ...").
Status ValidateRouterInterfaces(const std::vector<RouterInterface>& interfaces, uint16_t num_ports);

}  // namespace swemu
