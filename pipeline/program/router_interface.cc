#include "pipeline/program/router_interface.h"

#include <map>

#include "pipeline/wire/address.h"

namespace swemu {
namespace {

std::string Name(const RouterInterface& rif) { return "interface." + std::to_string(rif.id); }

std::string Cidr(const RouterInterface& rif) {
  return FormatIpv4(rif.ipv4) + "/" + std::to_string(rif.prefix_len);
}

std::string Cidr6(const RouterInterface& rif) {
  return FormatIpv6(rif.ipv6) + "/" + std::to_string(rif.prefix6_len);
}

Status CheckIpv6(const RouterInterface& rif) {
  if (!rif.HasIpv6()) return Status::Ok();
  if (rif.prefix6_len > 127) {
    return Status::Error(Name(rif) + ": ip6 " + Cidr6(rif) +
                         ": the prefix must be 1..127 (a subnet with hosts besides the gateway)");
  }
  if (rif.Subnet6().addr == rif.ipv6) {
    return Status::Error(Name(rif) + ": ip6 " + Cidr6(rif) + ": the gateway " +
                         FormatIpv6(rif.ipv6) + " is the subnet's own address (its interface " +
                         "id is all zeros: the subnet-router anycast address)");
  }
  return Status::Ok();
}

// The IPv6 half of the pairwise checks: no gateway twice, no overlapping subnets.
Status CheckIpv6Pair(const RouterInterface& rif, const RouterInterface& other) {
  if (!rif.HasIpv6() || !other.HasIpv6()) return Status::Ok();
  if (other.ipv6 == rif.ipv6) {
    return Status::Error(Name(rif) + ": ip6: the gateway " + FormatIpv6(rif.ipv6) + " is also " +
                         Name(other) + "'s");
  }
  if (other.Contains6(rif.ipv6) || rif.Contains6(other.ipv6)) {
    return Status::Error(Name(rif) + ": ip6 " + Cidr6(rif) + ": its subnet overlaps " +
                         Name(other) + "'s (" + Cidr6(other) + ")");
  }
  return Status::Ok();
}

Status CheckOne(const RouterInterface& rif, uint16_t num_ports) {
  if (rif.prefix_len < 1 || rif.prefix_len > 30) {
    return Status::Error(Name(rif) + ": ip " + Cidr(rif) +
                         ": the prefix must be 1..30 (a subnet with hosts besides the gateway)");
  }
  const uint32_t host = rif.ipv4 & ~rif.Mask();
  if (host == 0 || host == ~rif.Mask()) {
    return Status::Error(Name(rif) + ": ip " + Cidr(rif) + ": the gateway " + FormatIpv4(rif.ipv4) +
                         " is outside the hosts of its subnet " + FormatIpv4(rif.Subnet()) + "/" +
                         std::to_string(rif.prefix_len) + " (it is the subnet's " +
                         (host == 0 ? "own" : "broadcast") + " address)");
  }
  SWEMU_RETURN_IF_ERROR(CheckIpv6(rif));
  if (rif.mac == 0 || (rif.mac >> 40 & 1) != 0) {
    return Status::Error(Name(rif) + ": mac: must be a unicast MAC address");
  }
  if (rif.ports.empty()) return Status::Error(Name(rif) + ": ports: must name at least one port");
  for (PortId p : rif.ports) {
    if (p >= num_ports) {
      return Status::Error(Name(rif) + ": ports: port " + std::to_string(p) +
                           " out of range (switch.ports is " + std::to_string(num_ports) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateRouterInterfaces(const std::vector<RouterInterface>& interfaces,
                                uint16_t num_ports) {
  std::map<PortId, uint32_t> port_owner;
  for (std::size_t i = 0; i < interfaces.size(); ++i) {
    const RouterInterface& rif = interfaces[i];
    SWEMU_RETURN_IF_ERROR(CheckOne(rif, num_ports));
    for (std::size_t j = 0; j < i; ++j) {
      const RouterInterface& other = interfaces[j];
      if (other.ipv4 == rif.ipv4) {
        return Status::Error(Name(rif) + ": ip: the gateway " + FormatIpv4(rif.ipv4) + " is also " +
                             Name(other) + "'s");
      }
      if (other.Contains(rif.ipv4) || rif.Contains(other.ipv4)) {
        return Status::Error(Name(rif) + ": ip " + Cidr(rif) + ": its subnet overlaps " +
                             Name(other) + "'s (" + Cidr(other) + ")");
      }
      SWEMU_RETURN_IF_ERROR(CheckIpv6Pair(rif, other));
    }
    for (PortId p : rif.ports) {
      auto [it, fresh] = port_owner.emplace(p, rif.id);
      if (!fresh) {
        return Status::Error(Name(rif) + ": ports: port " + std::to_string(p) +
                             " is also in interface." + std::to_string(it->second));
      }
    }
  }
  return Status::Ok();
}

}  // namespace swemu
