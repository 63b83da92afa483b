#pragma once
// A router interface of the switch (an SVI, a RIF): the router MAC, the gateway address and
// prefix of the subnet behind it (IPv4, and optionally one IPv6 subnet beside it), and the ports
// of that subnet. Its IPv6 link-local address is fe80::/64 with the MAC's EUI-64 id. The switch
// config declares them ([interface.N], docs/cli.md); a program that routes reads them at Load
// (ProgramContext).
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

struct RouterInterface {
  uint32_t id = 0;            // N of [interface.N]
  uint64_t mac = 0;           // low 48 bits
  uint32_t ipv4 = 0;          // the gateway address hosts of the subnet use
  uint8_t prefix_len = 0;     // 1..30: the subnet is ipv4/prefix_len
  std::vector<PortId> ports;  // where the subnet's hosts are (ARP requests go out of these)
  Ipv6Addr ipv6{};            // the IPv6 gateway address, when prefix6_len is not 0
  uint8_t prefix6_len = 0;    // 1..127: the IPv6 subnet is ipv6/prefix6_len; 0: no IPv6

  uint32_t Mask() const noexcept { return prefix_len == 0 ? 0 : ~uint32_t{0} << (32 - prefix_len); }
  uint32_t Subnet() const noexcept { return ipv4 & Mask(); }
  bool Contains(uint32_t ip) const noexcept { return (ip & Mask()) == Subnet(); }
  bool HasIpv6() const noexcept { return prefix6_len != 0; }
  Ipv6Prefix Subnet6() const noexcept { return {ipv6 & Ipv6Addr::Mask(prefix6_len), prefix6_len}; }
  bool Contains6(const Ipv6Addr& ip) const noexcept { return HasIpv6() && Subnet6().Contains(ip); }
  Ipv6Addr LinkLocal() const noexcept { return LinkLocalIpv6(mac); }
  friend bool operator==(const RouterInterface&, const RouterInterface&) = default;
};

// Checks a switch's interfaces together: each gateway a host address of its subnet (neither
// the subnet's own address nor its broadcast address; for IPv6 not the subnet's own address,
// with a prefix of 1..127), no gateway twice, no two subnets overlapping (per family), ports
// below num_ports and in one interface only. The error names the interface ("interface.2: ...").
Status ValidateRouterInterfaces(const std::vector<RouterInterface>& interfaces, uint16_t num_ports);

}  // namespace swemu
