#include "swemu/switch_config_interfaces.h"

#include <algorithm>

#include "pipeline/control/units.h"
#include "pipeline/wire/address.h"

namespace swemu {
namespace {

RouterInterface& InterfaceOf(uint32_t id, LoadedSwitchConfig& out) {
  for (RouterInterface& rif : out.config.interfaces) {
    if (rif.id == id) return rif;
  }
  RouterInterface& rif = out.config.interfaces.emplace_back();
  rif.id = id;
  return rif;
}

// "0,1,4-7": ports and ranges, each port once.
Status ParsePorts(const std::string& value, std::vector<PortId>* ports) {
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string item = value.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    Result<uint64_t> first = ParseUint(item.substr(0, dash), 0, kTmMaxPorts - 1);
    Result<uint64_t> last =
        dash == std::string::npos ? first : ParseUint(item.substr(dash + 1), 0, kTmMaxPorts - 1);
    if (!first.ok() || !last.ok() || *last < *first) {
      return Status::Error("\"" + value + "\" is not a list of ports (such as 0,1,4-7)");
    }
    for (uint64_t p = *first; p <= *last; ++p) {
      if (std::find(ports->begin(), ports->end(), p) != ports->end()) {
        return Status::Error("port " + std::to_string(p) + " listed twice");
      }
      ports->push_back(static_cast<PortId>(p));
    }
    start = comma + 1;
  }
  return Status::Ok();
}

std::string FormatPorts(const std::vector<PortId>& ports) {
  std::string out;
  for (std::size_t i = 0; i < ports.size();) {
    std::size_t j = i;
    while (j + 1 < ports.size() && ports[j + 1] == ports[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ports[i]);
    if (j > i) out += "-" + std::to_string(ports[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

Status ApplyInterfaceKey(const std::string& key, const std::string& value,
                         LoadedSwitchConfig& out) {
  const std::size_t dot = key.find('.', 10);  // after "interface."
  Result<uint64_t> id = ParseUint(key.substr(10, dot == std::string::npos ? dot : dot - 10), 0,
                                  UINT32_MAX);
  if (dot == std::string::npos || !id.ok()) {
    return Status::Error("unknown key (an interface section is [interface.N] with N a number)");
  }
  const std::string field = key.substr(dot + 1);
  RouterInterface& rif = InterfaceOf(static_cast<uint32_t>(*id), out);
  if (field == "mac") {
    Result<MacAddr> mac = ParseMac(value);
    if (!mac.ok()) return mac.status();
    rif.mac = mac->ToU64();
    return Status::Ok();
  }
  if (field == "ip") {
    const std::size_t slash = value.find('/');
    Result<Ipv4Addr> ip = ParseIpv4(value.substr(0, slash));
    Result<uint64_t> len = slash == std::string::npos
                               ? Result<uint64_t>(Status::Error("no prefix"))
                               : ParseUint(value.substr(slash + 1), 0, 32);
    if (!ip.ok() || !len.ok()) {
      return Status::Error("\"" + value + "\" is not a gateway address with its prefix " +
                           "(such as 10.1.1.1/24)");
    }
    rif.ipv4 = *ip;
    rif.prefix_len = static_cast<uint8_t>(*len);
    return Status::Ok();
  }
  if (field == "ip6") {
    const std::size_t slash = value.find('/');
    Result<Ipv6Addr> ip = ParseIpv6(value.substr(0, slash));
    Result<uint64_t> len = slash == std::string::npos
                               ? Result<uint64_t>(Status::Error("no prefix"))
                               : ParseUint(value.substr(slash + 1), 1, 128);
    if (!ip.ok() || !len.ok()) {
      return Status::Error("\"" + value + "\" is not an IPv6 gateway address with its prefix " +
                           "(such as 2001:db8:1::1/64)");
    }
    rif.ipv6 = *ip;
    rif.prefix6_len = static_cast<uint8_t>(*len);
    return Status::Ok();
  }
  if (field == "ports") return ParsePorts(value, &rif.ports);
  return Status::Error("unknown key (an [interface.N] section has only mac, ip, ip6 and ports)");
}

Status FinishInterfaces(LoadedSwitchConfig& out) {
  std::vector<RouterInterface>& rifs = out.config.interfaces;
  std::sort(rifs.begin(), rifs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const RouterInterface& rif : rifs) {
    const std::string name = "interface." + std::to_string(rif.id);
    const char* missing = rif.mac == 0                            ? "mac"
                          : rif.ipv4 == 0 && rif.prefix_len == 0 ? "ip"
                                                                  : nullptr;
    if (rif.ports.empty() && missing == nullptr) missing = "ports";
    if (missing != nullptr) return Status::Error(name + ": " + missing + " missing");
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> InterfaceLines(const RouterInterface& rif) {
  std::vector<std::pair<std::string, std::string>> lines = {
      {"mac", FormatMac(MacAddr::FromU64(rif.mac))},
      {"ip", FormatIpv4(rif.ipv4) + "/" + std::to_string(rif.prefix_len)}};
  if (rif.HasIpv6()) {
    lines.emplace_back("ip6", FormatIpv6(rif.ipv6) + "/" + std::to_string(rif.prefix6_len));
  }
  lines.emplace_back("ports", FormatPorts(rif.ports));
  return lines;
}

}  // namespace swemu
