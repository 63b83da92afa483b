// l2l3's neighbour commands: `show arp` (SONiC's and EOS's name), `route_add` and
// `route_delete` (routes through a next hop given by its address, resolved by ARP).
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

}  // namespace

Status L2l3Neighbours::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"show arp", "", "the neighbour table: address, MAC, port, interface, state, age", 0, 0,
       [this](CommandArgs) { return ShowArp(); }}));
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"route_add", "<prefix> <next hop address>",
       "route a prefix through a neighbour of a connected subnet (its MAC found by ARP)", 2, 2,
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
    const bool known = n.state == NeighbourState::kReachable || n.state == NeighbourState::kStale;
    std::snprintf(line, sizeof(line), "%-16s %-18s %-5s %-9u %-10s %s\n", FormatIpv4(ip).c_str(),
                  known ? FormatMac(MacAddr::FromU64(n.mac)).c_str() : "-",
                  known ? std::to_string(n.port).c_str() : "-", rifs_[n.rif].id,
                  NeighbourStateName(n.state), Age(now - n.confirmed_ns).c_str());
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "%zu entries; arp requests sent %llu, replies sent %llu; echo replies %llu\n",
                table_.entries().size(),
                static_cast<unsigned long long>(stats_.arp_requests_sent),
                static_cast<unsigned long long>(stats_.arp_replies_sent),
                static_cast<unsigned long long>(stats_.echo_replies_sent));
  return out + line;
}

Result<std::string> L2l3Neighbours::RouteAdd(CommandArgs args) {
  Result<Ipv4Prefix> prefix = ParseIpv4Prefix(args[0]);
  if (!prefix.ok()) return prefix.status();
  Result<Ipv4Addr> via = ParseIpv4(args[1]);
  if (!via.ok()) return via.status();
  const int rif = RifOf(*via);
  if (rif < 0 || *via == rifs_[rif].ipv4) {
    return Status::Error("next hop " + args[1] + " is not a host of an interface's subnet");
  }
  const auto key = std::make_pair(prefix->addr, prefix->len);
  if (routes_.count(key) != 0) return Status::Error("route " + args[0] + " exists");
  std::vector<NeighbourEvent> events;
  Neighbour* n = table_.Resolve(*via, static_cast<uint32_t>(rif), cpu_.Now(), &events);
  if (n == nullptr) return Status::Error("the neighbour table is full");
  ProgramSlot(*n);
  TableEntry entry;
  entry.key = KeyPacker().Push(prefix->addr, 32).key();
  entry.prefix_len = prefix->len;
  entry.action.action = t_.lpm_set_nhop;
  entry.action.num_params = 1;
  entry.action.params[0] = t_.nhop_base + n->slot;
  Result<EntryHandle> h = t_.ipv4_lpm->Add(entry);
  Apply(events);
  if (!h.ok()) return h.status();
  routes_[key] = *h;
  return std::string();
}

Result<std::string> L2l3Neighbours::RouteDelete(CommandArgs args) {
  Result<Ipv4Prefix> prefix = ParseIpv4Prefix(args[0]);
  if (!prefix.ok()) return prefix.status();
  auto it = routes_.find(std::make_pair(prefix->addr, prefix->len));
  if (it == routes_.end()) return Status::Error("no route_add route " + args[0]);
  SWEMU_RETURN_IF_ERROR(t_.ipv4_lpm->Delete(it->second));
  routes_.erase(it);
  return std::string();
}

}  // namespace swemu
