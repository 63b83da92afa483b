// l2l3's neighbour commands: `show arp` and `show ndp` (SONiC's names: the IPv4 and the IPv6
// neighbours), `route_add` and `route_delete` (routes through a next hop given by its address,
// resolved by ARP or neighbour discovery).
#include <algorithm>
#include <cstdio>

#include "pipeline/programs/l2l3_neighbour.h"
#include "pipeline/wire/address.h"

namespace swemu {
namespace {

std::string Age(TimeNs ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1fs", static_cast<double>(ns) / 1e9);
  return text;
}

bool IsIpv6Text(const std::string& text) { return text.find(':') != std::string::npos; }

// A route_add prefix of either family; an IPv4 one as its mapped address and length + 96.
Result<Ipv6Prefix> ParseAnyPrefix(const std::string& text) {
  if (IsIpv6Text(text)) return ParseIpv6Prefix(text);
  Result<Ipv4Prefix> v4 = ParseIpv4Prefix(text);
  if (!v4.ok()) return v4.status();
  return Ipv6Prefix{Ipv6Addr::MappedIpv4(v4->addr), static_cast<uint8_t>(v4->len + 96)};
}

Result<Ipv6Addr> ParseAnyAddress(const std::string& text) {
  if (IsIpv6Text(text)) return ParseIpv6(text);
  Result<Ipv4Addr> v4 = ParseIpv4(text);
  if (!v4.ok()) return v4.status();
  return Ipv6Addr::MappedIpv4(*v4);
}

}  // namespace

Status L2l3Neighbours::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"show arp", "", "the IPv4 neighbour table: address, MAC, port, interface, state, age", 0, 0,
       [this](CommandArgs) { return ShowArp(); }}));
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"show ndp", "", "the IPv6 neighbour table: address, MAC, port, interface, state, age", 0,
       0, [this](CommandArgs) { return ShowNdp(); }}));
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"route_add", "<prefix> <next hop address>",
       "route an IPv4 or IPv6 prefix through a neighbour of a connected subnet (its MAC found by "
       "ARP or neighbour discovery)",
       2, 2,
       [this](CommandArgs args) { return RouteAdd(args); }}));
  return commands.Add({"route_delete", "<prefix>", "remove a route_add route", 1, 1,
                       [this](CommandArgs args) { return RouteDelete(args); }});
}

Result<std::string> L2l3Neighbours::ShowArp() const {
  const TimeNs now = cpu_.Now();
  std::string out;
  char line[160];
  std::snprintf(line, sizeof(line), "%-16s %-18s %-5s %-9s %-10s %s\n", "address", "mac", "port",
                "interface", "state", "age");
  out += line;
  for (const auto& [ip, n] : table_.entries()) {
    if (!ip.IsMappedIpv4()) continue;  // show ndp's
    const bool known = n.state == NeighbourState::kReachable || n.state == NeighbourState::kStale;
    std::snprintf(line, sizeof(line), "%-16s %-18s %-5s %-9u %-10s %s\n",
                  FormatIpv4(ip.Ipv4()).c_str(),
                  known ? FormatMac(MacAddr::FromU64(n.mac)).c_str() : "-",
                  known ? std::to_string(n.port).c_str() : "-", rifs_[n.rif].id,
                  NeighbourStateName(n.state), Age(now - n.confirmed_ns).c_str());
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "%zu entries; arp requests sent %llu, replies sent %llu; echo replies %llu\n",
                static_cast<std::size_t>(std::count_if(
                    table_.entries().begin(), table_.entries().end(),
                    [](const auto& e) { return e.first.IsMappedIpv4(); })),
                static_cast<unsigned long long>(stats_.arp_requests_sent),
                static_cast<unsigned long long>(stats_.arp_replies_sent),
                static_cast<unsigned long long>(stats_.echo_replies_sent));
  return out + line;
}

Result<std::string> L2l3Neighbours::ShowNdp() const {
  const TimeNs now = cpu_.Now();
  std::string out;
  char line[200];
  std::snprintf(line, sizeof(line), "%-40s %-18s %-5s %-9s %-10s %s\n", "address", "mac", "port",
                "interface", "state", "age");
  out += line;
  std::size_t count = 0;
  for (const auto& [ip, n] : table_.entries()) {
    if (ip.IsMappedIpv4()) continue;  // show arp's
    ++count;
    const bool known = n.state == NeighbourState::kReachable || n.state == NeighbourState::kStale;
    std::snprintf(line, sizeof(line), "%-40s %-18s %-5s %-9u %-10s %s\n", FormatIpv6(ip).c_str(),
                  known ? FormatMac(MacAddr::FromU64(n.mac)).c_str() : "-",
                  known ? std::to_string(n.port).c_str() : "-", rifs_[n.rif].id,
                  NeighbourStateName(n.state), Age(now - n.confirmed_ns).c_str());
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "%zu entries; solicitations sent %llu, advertisements sent %llu; echo replies "
                "%llu\n",
                count, static_cast<unsigned long long>(stats_.nd_solicits_sent),
                static_cast<unsigned long long>(stats_.nd_adverts_sent),
                static_cast<unsigned long long>(stats_.echo6_replies_sent));
  return out + line;
}

Result<std::string> L2l3Neighbours::RouteAdd(CommandArgs args) {
  Result<Ipv6Prefix> prefix = ParseAnyPrefix(args[0]);
  if (!prefix.ok()) return prefix.status();
  Result<Ipv6Addr> via = ParseAnyAddress(args[1]);
  if (!via.ok()) return via.status();
  const bool v4 = via->IsMappedIpv4();
  if (v4 == IsIpv6Text(args[0])) {
    return Status::Error("route " + args[0] + " and next hop " + args[1] +
                         " are of different address families");
  }
  const int rif = RifOf(*via);
  if (rif < 0 || *via == (v4 ? Ipv6Addr::MappedIpv4(rifs_[rif].ipv4) : rifs_[rif].ipv6)) {
    return Status::Error("next hop " + args[1] + " is not a host of an interface's subnet");
  }
  const auto key = std::make_pair(prefix->addr, prefix->len);
  if (routes_.count(key) != 0) return Status::Error("route " + args[0] + " exists");
  std::vector<NeighbourEvent> events;
  Neighbour* n = table_.Resolve(*via, static_cast<uint32_t>(rif), cpu_.Now(), &events);
  if (n == nullptr) return Status::Error("the neighbour table is full");
  ProgramSlot(*n);
  TableEntry entry;
  entry.key = v4 ? KeyPacker().Push(prefix->addr.Ipv4(), 32).key()
                 : KeyPacker().Push(prefix->addr.hi, 64).Push(prefix->addr.lo, 64).key();
  entry.prefix_len = static_cast<uint8_t>(v4 ? prefix->len - 96 : prefix->len);
  entry.action.action = t_.lpm_set_nhop;
  entry.action.num_params = 1;
  entry.action.params[0] = t_.nhop_base + n->slot;
  Result<EntryHandle> h = (v4 ? t_.ipv4_lpm : t_.ipv6_lpm)->Add(entry);
  Apply(events);
  if (!h.ok()) return h.status();
  routes_[key] = *h;
  return std::string();
}

Result<std::string> L2l3Neighbours::RouteDelete(CommandArgs args) {
  Result<Ipv6Prefix> prefix = ParseAnyPrefix(args[0]);
  if (!prefix.ok()) return prefix.status();
  auto it = routes_.find(std::make_pair(prefix->addr, prefix->len));
  if (it == routes_.end()) return Status::Error("no route_add route " + args[0]);
  MatchTable* lpm = IsIpv6Text(args[0]) ? t_.ipv6_lpm : t_.ipv4_lpm;
  SWEMU_RETURN_IF_ERROR(lpm->Delete(it->second));
  routes_.erase(it);
  return std::string();
}

}  // namespace swemu
