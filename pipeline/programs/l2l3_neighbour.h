#pragma once
// l2l3's control plane for its router interfaces ([interface.N]): it answers ARP and IPv6
// neighbour solicitations for the gateway addresses, resolves next hops with one neighbour table
// for both families (neighbour_table.h) and programs what it learns into l2l3's tables, as a
// ToR's CPU does. It runs behind the CPU port: l2l3's ingress sends it ARP for the gateways
// (arp_trap), neighbour solicitations for them (nd_trap: they go to multicast MACs, not the
// router MAC), packets for a connected subnet's host it has no entry for yet (ipv4_lpm's and
// ipv6_lpm's glean), packets for a next hop not yet resolved (nexthop's to_cpu) and packets for
// the gateway addresses (the lpm tables' to_cpu: ICMP and ICMPv6 echo are answered, and
// unicast ND).
//
// Per neighbour (slot s) it owns nexthop entry nhop_base + s: to_cpu while unresolved, then
// rewrite(mac, interface MAC, port); for a host of a connected subnet also ipv4_lpm ip/32 (or
// ipv6_lpm ip/128) => set_nhop. Held packets go back into ingress once resolved.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "pipeline/program/program.h"
#include "pipeline/programs/neighbour_table.h"

namespace swemu {

// Why ingress sent a packet to the control plane: meta.user[0]; user[1] holds the nexthop.
enum L2l3Punt : uint32_t {
  kPuntArp = 1,
  kPuntGlean = 2,
  kPuntNexthop = 3,
  kPuntLocal = 4,
  kPuntNd = 5,
};

// Ingress: the ARP packets among pkts whose target is a gateway (arp_trap) go to the CPU port
// (kPuntArp); the others stay in pkts, in order. Returns how many stay.
uint32_t TrapArp(MatchTable& arp_trap, Packet** pkts, uint32_t n) noexcept;
// The same for IPv6 neighbour solicitations whose target is a gateway (nd_trap; kPuntNd).
uint32_t TrapNd(MatchTable& nd_trap, Packet** pkts, uint32_t n) noexcept;

// Ingress: sends pkt to the control plane with its reason.
inline void PuntToCpu(Packet& pkt, L2l3Punt why, uint32_t arg = 0) noexcept {
  pkt.meta.user[0] = why;
  pkt.meta.user[1] = arg;
  pkt.meta.egress_spec = kCpuPort;
}

class L2l3Neighbours final : public CpuAgent {
 public:
  struct Tables {
    MatchTable* router_mac;
    MatchTable* ipv4_lpm;
    MatchTable* nexthop;
    MatchTable* arp_trap;
    MatchTable* ipv6_lpm;
    MatchTable* nd_trap;                           // only when an interface has ip6
    uint16_t lpm_set_nhop, lpm_glean, lpm_to_cpu;  // ipv4_lpm's and ipv6_lpm's action indices
    uint16_t nhop_rewrite, nhop_to_cpu;           // nexthop's
    uint32_t nhop_base;                           // the first nexthop index it owns
  };
  // For a switch with router interfaces: reads the [program] neighbour_* keys, declares
  // arp_trap (and nd_trap when an interface has ip6) in ingress stage 0, takes nexthop entries
  // from nexthop_size - neighbour_size up, programs the interfaces (router_mac, the traps, each
  // subnet's glean route and the gateway's /32, /128 and link-local /128) and adds `show arp`,
  // `show ndp`, `route_add` and `route_delete`. `tables` without arp_trap, nd_trap and
  // nhop_base, which it fills in.
  static Result<std::unique_ptr<L2l3Neighbours>> Load(ProgramContext& ctx, Tables tables,
                                                      uint32_t nexthop_size);
  MatchTable* arp_trap() const { return t_.arp_trap; }
  MatchTable* nd_trap() const { return t_.nd_trap; }

  void OnPacketIn(Packet* pkt, TimeNs now) override;
  TimeNs NextTimer() const override { return table_.NextTimer(); }
  void OnTimer(TimeNs now) override;
  void FreeHeld() override;
  // MAC learning placed `mac` on `port` (MacLearning::OnMacAt): the neighbours with that MAC
  // in the port's interface take the port, their nexthop entries reprogrammed, so routed
  // traffic follows a moved host before it ARPs.
  void OnMacAt(uint64_t mac, PortId port);

  const NeighbourTable& table() const { return table_; }

 private:
  L2l3Neighbours(CpuPort& cpu, std::vector<RouterInterface> rifs, const Tables& tables,
                 const NeighbourTimers& timers, uint32_t capacity);
  static Result<std::unique_ptr<L2l3Neighbours>> Create(ProgramContext& ctx, const Tables& tables,
                                                        const NeighbourTimers& timers,
                                                        uint32_t capacity);
  Status ProgramInterfaces();
  Status ProgramIpv6(const RouterInterface& rif);
  Status AddCommands(CommandTable& commands);
  void OnArp(Packet* pkt, TimeNs now);
  void OnLocal(Packet* pkt, TimeNs now);
  // l2l3_neighbour_nd.cc: neighbour discovery and ICMPv6 echo.
  void OnNd(Packet* pkt, TimeNs now);
  void OnLocal6(Packet* pkt, TimeNs now);
  void SendSolicitation(const NeighbourEvent& event);
  // A routed packet for neighbour `ip` (IPv4 as ::ffff:a.b.c.d): held until resolved, or sent
  // on when it already is.
  void Hold(Packet* pkt, const Ipv6Addr& ip, TimeNs now);
  void Apply(std::vector<NeighbourEvent>& events);
  void SendRequest(const NeighbourEvent& event);
  // The nexthop (to_cpu) and, for a connected host, the /32 or /128 of a new neighbour's slot.
  void ProgramSlot(const Neighbour& n);
  int RifOf(const Ipv6Addr& ip) const;  // the interface whose subnet holds ip; -1 if none
  int RifOfPort(PortId port) const;     // the interface the port is in; -1 if none
  Result<std::string> ShowArp() const;
  Result<std::string> ShowNdp() const;
  Result<std::string> RouteAdd(CommandArgs args);
  Result<std::string> RouteDelete(CommandArgs args);

  CpuPort& cpu_;
  std::vector<RouterInterface> rifs_;
  Tables t_;
  NeighbourTable table_;
  std::vector<Ipv6Addr> slot_ip_;          // slot -> neighbour address
  std::vector<EntryHandle> slot_nexthop_;  // kNoEntry until the slot is first used
  // route_add's, by prefix (an IPv4 one as its mapped address and length + 96).
  std::map<std::pair<Ipv6Addr, uint8_t>, EntryHandle> routes_;
  struct Stats {
    uint64_t arp_replies_sent = 0;
    uint64_t arp_requests_sent = 0;
    uint64_t echo_replies_sent = 0;
    uint64_t nd_solicits_sent = 0;
    uint64_t nd_adverts_sent = 0;
    uint64_t echo6_replies_sent = 0;
  } stats_;
};

}  // namespace swemu
