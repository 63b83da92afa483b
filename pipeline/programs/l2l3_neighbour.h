#pragma once
// l2l3's control plane for its router interfaces ([interface.N]): it answers ARP for the
// gateway addresses, resolves next hops with a neighbour table (neighbour_table.h) and programs
// what it learns into l2l3's tables, as a ToR's CPU does. It runs behind the CPU port: l2l3's
// ingress sends it ARP for the gateways (arp_trap), packets for a connected subnet's host it has
// no entry for yet (ipv4_lpm's glean), packets for a next hop not yet resolved (nexthop's
// to_cpu) and packets for the gateway addresses (ipv4_lpm's to_cpu: ICMP echo is answered).
//
// Per neighbour (slot s) it owns nexthop entry nhop_base + s: to_cpu while unresolved, then
// rewrite(mac, interface MAC, port); for a host of a connected subnet also ipv4_lpm ip/32 =>
// set_nhop. Held packets go back into ingress once resolved.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "pipeline/program/program.h"
#include "pipeline/programs/neighbour_table.h"

namespace swemu {

// Why ingress sent a packet to the control plane: meta.user[0]; user[1] holds the nexthop.
enum L2l3Punt : uint32_t { kPuntArp = 1, kPuntGlean = 2, kPuntNexthop = 3, kPuntLocal = 4 };

// Ingress: the ARP packets among pkts whose target is a gateway (arp_trap) go to the CPU port
// (kPuntArp); the others stay in pkts, in order. Returns how many stay.
uint32_t TrapArp(MatchTable& arp_trap, Packet** pkts, uint32_t n) noexcept;

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
    uint16_t lpm_set_nhop, lpm_glean, lpm_to_cpu;  // ipv4_lpm's action indices
    uint16_t nhop_rewrite, nhop_to_cpu;           // nexthop's
    uint32_t nhop_base;                           // the first nexthop index it owns
  };
  // For a switch with router interfaces: reads the [program] neighbour_* keys, declares
  // arp_trap (ingress stage 0), takes nexthop entries from nexthop_size - neighbour_size up,
  // programs the interfaces (router_mac, arp_trap, each subnet's glean route and the gateway's
  // /32) and adds `show arp`, `route_add` and `route_delete`. `tables` without arp_trap and
  // nhop_base, which it fills in.
  static Result<std::unique_ptr<L2l3Neighbours>> Load(ProgramContext& ctx, Tables tables,
                                                      uint32_t nexthop_size);
  MatchTable* arp_trap() const { return t_.arp_trap; }

  void OnPacketIn(Packet* pkt, TimeNs now) override;
  TimeNs NextTimer() const override { return table_.NextTimer(); }
  void OnTimer(TimeNs now) override;
  void FreeHeld() override;

  const NeighbourTable& table() const { return table_; }

 private:
  L2l3Neighbours(CpuPort& cpu, std::vector<RouterInterface> rifs, const Tables& tables,
                 const NeighbourTimers& timers, uint32_t capacity);
  static Result<std::unique_ptr<L2l3Neighbours>> Create(ProgramContext& ctx, const Tables& tables,
                                                        const NeighbourTimers& timers,
                                                        uint32_t capacity);
  Status ProgramInterfaces();
  Status AddCommands(CommandTable& commands);
  void OnArp(Packet* pkt, TimeNs now);
  void OnLocal(Packet* pkt);
  // A routed packet for neighbour `ip`: held until resolved, or sent on when it already is.
  void Hold(Packet* pkt, uint32_t ip, TimeNs now);
  void Apply(std::vector<NeighbourEvent>& events);
  void SendRequest(const NeighbourEvent& event);
  // The nexthop (to_cpu) and, for a connected host, the /32 of a new neighbour's slot.
  void ProgramSlot(const Neighbour& n);
  int RifOf(uint32_t ip) const;  // the interface whose subnet holds ip; -1 if none
  Result<std::string> ShowArp() const;
  Result<std::string> RouteAdd(CommandArgs args);
  Result<std::string> RouteDelete(CommandArgs args);

  CpuPort& cpu_;
  std::vector<RouterInterface> rifs_;
  Tables t_;
  NeighbourTable table_;
  std::vector<uint32_t> slot_ip_;          // slot -> neighbour address
  std::vector<EntryHandle> slot_nexthop_;  // kNoEntry until the slot is first used
  std::map<std::pair<uint32_t, uint8_t>, EntryHandle> routes_;  // route_add's, by prefix
  struct Stats {
    uint64_t arp_replies_sent = 0;
    uint64_t arp_requests_sent = 0;
    uint64_t echo_replies_sent = 0;
  } stats_;
};

}  // namespace swemu
