// l2l3's neighbour resolution at load (its [program] keys, the arp_trap and nd_trap tables) and
// its one fast-path piece for IPv4, the ARP trap (l2l3_neighbour_nd.cc has the ND trap).
#include <algorithm>

#include "pipeline/control/units.h"
#include "pipeline/programs/l2l3_neighbour.h"
#include "pipeline/wire/arp.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

Status GetDuration(const ProgramOptions& opt, std::string_view key, TimeNs* out) {
  Result<std::string> text = opt.GetString(key, "");
  if (!text.ok()) return text.status();
  if (text->empty()) return Status::Ok();
  Result<uint64_t> ns = ParseDuration(*text);
  if (!ns.ok() || *ns == 0) {
    return Status::Error(std::string(key) + ": \"" + *text + "\" is not a positive duration");
  }
  *out = *ns;
  return Status::Ok();
}

// nd_trap, only when an interface has ip6: two targets per interface (gateway, link-local).
Status AddNdTrap(ProgramContext& ctx, MatchTable** nd_trap) {
  const auto& rifs = ctx.interfaces;
  *nd_trap = nullptr;
  if (std::none_of(rifs.begin(), rifs.end(), [](const auto& r) { return r.HasIpv6(); })) {
    return Status::Ok();
  }
  Result<MatchTable*> trap = ctx.builder.AddTable(
      Gress::kIngress, 0,
      {"nd_trap", MatchKind::kExact, {{"target_ip6", 128}}, {{"to_cpu", {}}, {"no_trap", {}}},
       static_cast<uint32_t>(2 * rifs.size()), "no_trap", {}});
  if (!trap.ok()) return trap.status();
  *nd_trap = *trap;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<L2l3Neighbours>> L2l3Neighbours::Load(ProgramContext& ctx, Tables tables,
                                                             uint32_t nexthop_size) {
  const ProgramOptions& opt = ctx.options;
  NeighbourTimers timers;
  Result<uint64_t> size = opt.GetUint("neighbour_size", 1024, 1, 1 << 15);
  Result<uint64_t> probes = opt.GetUint("neighbour_probes", timers.max_probes, 1, 100);
  Result<uint64_t> queue = opt.GetUint("neighbour_queue", timers.queue_packets, 0, 64);
  for (const Status& s : {size.status(), probes.status(), queue.status(),
                          GetDuration(opt, "neighbour_retrans", &timers.retrans_ns),
                          GetDuration(opt, "neighbour_reachable", &timers.reachable_ns)}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  if (*size >= nexthop_size) {
    return Status::Error("neighbour_size " + std::to_string(*size) +
                         " must be below nexthop_size " + std::to_string(nexthop_size) +
                         " (neighbours take the top of the nexthop table)");
  }
  timers.max_probes = static_cast<uint32_t>(*probes);
  timers.queue_packets = static_cast<uint32_t>(*queue);
  Result<MatchTable*> trap = ctx.builder.AddTable(
      Gress::kIngress, 0,
      {"arp_trap", MatchKind::kExact, {{"target_ip", 32}}, {{"to_cpu", {}}, {"no_trap", {}}},
       static_cast<uint32_t>(2 * ctx.interfaces.size()), "no_trap", {}});
  if (!trap.ok()) return trap.status();
  tables.arp_trap = *trap;
  SWEMU_RETURN_IF_ERROR(AddNdTrap(ctx, &tables.nd_trap));
  tables.nhop_base = nexthop_size - static_cast<uint32_t>(*size);
  return Create(ctx, tables, timers, static_cast<uint32_t>(*size));
}

uint32_t TrapArp(MatchTable& arp_trap, Packet** pkts, uint32_t n) noexcept {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const ParsedHeaders& h = pkt.hdr;
    const uint8_t* type = h.vlan_count != 0 ? pkt.data + h.vlan[h.vlan_count - 1] + 2
                                            : pkt.data + h.eth + 12;
    if (LoadBe16(type) == kEtherTypeArp && pkt.len >= h.payload + kArpLen) {
      const auto* arp = HeaderAt<ArpHeader>(pkt.data + h.payload);
      if (arp->IsEthernetIpv4()) {
        LookupResult r = arp_trap.Lookup(KeyPacker().Push(arp->TargetIp(), 32).key());
        if (r.hit && r.action->action == 0) {
          PuntToCpu(pkt, kPuntArp);
          continue;
        }
      }
    }
    pkts[kept++] = pkts[i];
  }
  return kept;
}

}  // namespace swemu
