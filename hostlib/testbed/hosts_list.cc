#include "hostlib/testbed/hosts_list.h"

#include <set>
#include <sstream>

#include "pipeline/control/units.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {
namespace {

// PORT or SWITCH:PORT.
Status ParsePlace(const std::string& name, const std::string& text, ListedHost* host) {
  std::string port = text;
  if (const std::size_t colon = text.rfind(':'); colon != std::string::npos) {
    host->sw = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host->sw.empty()) return Status::Error(name + ": " + text + ": no switch before ':'");
  }
  Result<uint64_t> p = ParseUint(port, 0, kTmMaxPorts - 1);
  if (!p.ok()) return Status::Error(name + ": port: " + p.message());
  host->port = static_cast<uint16_t>(*p);
  return Status::Ok();
}

}  // namespace

Result<ListedHost> ParseListedHost(const std::string& line) {
  std::istringstream words(line);
  std::string name, role, ip, mac, place, extra;
  if (!(words >> name >> role >> ip >> mac >> place) || (words >> extra)) {
    return Status::Error(
        "expected NAME ROLE IP MAC PORT (ROLE worker or ps, MAC or learn, PORT or SWITCH:PORT)");
  }
  if (role != "worker" && role != "ps") {
    return Status::Error(name + ": role '" + role + "' is neither worker nor ps");
  }
  ListedHost host;
  host.name = name;
  host.ps = role == "ps";
  Result<Ipv4Addr> address = ParseIpv4(ip);
  if (!address.ok()) return Status::Error(name + ": " + address.message());
  if ((*address >> 28) == 0xE || *address == 0) {
    return Status::Error(name + ": " + ip + " is not a host's unicast address");
  }
  host.ip = *address;
  if (mac != "learn") {
    Result<MacAddr> m = ParseMac(mac);
    if (!m.ok()) return Status::Error(name + ": " + m.message());
    if (m->IsMulticast() || *m == MacAddr{}) {
      return Status::Error(name + ": " + mac + " is not a host's unicast MAC");
    }
    host.mac = *m;
  }
  SWEMU_RETURN_IF_ERROR(ParsePlace(name, place, &host));
  return host;
}

Result<std::vector<ListedHost>> ParseListedHosts(std::string_view text) {
  std::vector<ListedHost> hosts;
  std::istringstream lines{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<ListedHost> host = ParseListedHost(line);
    if (!host.ok()) {
      return Status::Error("hosts line " + std::to_string(number) + ": " + host.message());
    }
    hosts.push_back(*host);
  }
  return hosts;
}

Status CheckListedHostsUnique(const std::vector<ListedHost>& hosts) {
  std::set<std::string> names, ips, macs, ports;
  for (const ListedHost& h : hosts) {
    if (!names.insert(h.name).second) return Status::Error("hosts: name " + h.name + " twice");
    if (!ips.insert(FormatIpv4(h.ip)).second) {
      return Status::Error("hosts: " + h.name + ": IP " + FormatIpv4(h.ip) + " twice");
    }
    if (h.mac && !macs.insert(FormatMac(*h.mac)).second) {
      return Status::Error("hosts: " + h.name + ": MAC " + FormatMac(*h.mac) + " twice");
    }
    const std::string place = (h.sw.empty() ? "" : h.sw + ":") + std::to_string(h.port);
    if (!ports.insert(place).second) {
      return Status::Error("hosts: " + h.name + ": switch port " + place + " twice");
    }
  }
  return Status::Ok();
}

}  // namespace swemu
