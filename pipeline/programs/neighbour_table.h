#pragma once
// The neighbour table of a router's control plane (the kernel's ARP cache and IPv6 neighbour
// cache, a ToR's host table): address -> MAC and port, with the kernel's states and timers. One
// table holds both families, keyed by 128 bits: an IPv4 address as ::ffff:a.b.c.d
// (Ipv6Addr::MappedIpv4), resolved by ARP; an IPv6 one by neighbour discovery. An entry is created
// INCOMPLETE when a packet needs it and is resolved by broadcast requests, `retrans_ns` apart,
// at most `max_probes` of them, then FAILED; a reply makes it REACHABLE for `reachable_ns`,
// after which it is re-probed with unicast requests while it stays in use (STALE), and FAILED
// when those go unanswered. A few packets per unresolved entry wait in it (the kernel's
// unres_qlen). Pure state: the caller (l2l3's agent) sends the requests and programs the tables
// the answers name. Time comes with each call.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet.h"
#include "pipeline/wire/address.h"

namespace swemu {

struct NeighbourTimers {
  TimeNs retrans_ns = 1'000'000'000;       // between requests (Linux retrans_time_ms)
  uint32_t max_probes = 3;                 // requests before FAILED (Linux mcast_solicit)
  TimeNs reachable_ns = 30'000'000'000;    // REACHABLE lasts (Linux base_reachable_time)
  uint32_t queue_packets = 3;              // packets waiting per unresolved entry
};

enum class NeighbourState : uint8_t { kIncomplete, kReachable, kStale, kFailed };
const char* NeighbourStateName(NeighbourState state);  // "INCOMPLETE", ... as `ip neigh`

struct Neighbour {
  Ipv6Addr ip;       // IPv4 as ::ffff:a.b.c.d
  uint32_t rif = 0;  // index of the router interface whose subnet holds it
  uint64_t mac = 0;
  PortId port = kPortUnset;
  NeighbourState state = NeighbourState::kIncomplete;
  TimeNs confirmed_ns = 0;   // last reply (or creation): `show arp` prints the age from it
  TimeNs next_ns = kNever;   // the next request or state change
  uint32_t probes = 0;       // requests sent in this round
  uint32_t slot = 0;         // a stable index per entry (l2l3 maps it to a nexthop)
  std::vector<Packet*> pending;  // waiting for resolution, oldest first
};

// What a timer or a reply asks the caller to do.
struct NeighbourEvent {
  enum Kind : uint8_t {
    kRequest,   // send a request: broadcast when `mac` is 0, else unicast to mac/port (re-probe)
    kResolved,  // now reachable at mac/port (new, or moved): program it, send `pending`
    kFailed,    // unresolved: unprogram it; `pending` are dropped
  };
  Kind kind;
  Ipv6Addr ip;
  uint32_t rif;
  uint32_t slot;
  uint64_t mac;
  PortId port;
  std::vector<Packet*> pending;
};

class NeighbourTable {
 public:
  NeighbourTable(NeighbourTimers timers, uint32_t capacity);

  // The entry for `ip`, created INCOMPLETE (a broadcast request asked for in *events) when there
  // is none or it FAILED; nullptr when the table is full.
  Neighbour* Resolve(const Ipv6Addr& ip, uint32_t rif, TimeNs now,
                     std::vector<NeighbourEvent>* events);
  // Queues a packet on an unresolved entry; false when its queue is full (the caller drops it).
  bool Hold(Neighbour& n, Packet* pkt);
  // An ARP reply or NA, or a request or NS from `ip` (each tells where it is): REACHABLE now,
  // creating the entry if `create`; kResolved when it was not reachable at this mac/port before.
  void Confirm(const Ipv6Addr& ip, uint32_t rif, uint64_t mac, PortId port, TimeNs now,
               bool create, std::vector<NeighbourEvent>* events);
  // The switch's MAC table placed `mac` on `port` (learning saw it there): each resolved entry
  // of interface `rif` with that MAC on another port takes the port, with a kResolved event (a
  // ToR takes a neighbour's port from its L2 table). State and timers stay: a frame seen on a
  // port says where a MAC is, not that its address answers.
  void MoveMac(uint64_t mac, uint32_t rif, PortId port, std::vector<NeighbourEvent>* events);
  // Every timer due by `now`.
  void Expire(TimeNs now, std::vector<NeighbourEvent>* events);
  TimeNs NextTimer() const { return next_ns_; }
  // Takes every held packet out (shutdown).
  std::vector<Packet*> TakeAllPending();

  const Neighbour* Find(const Ipv6Addr& ip) const;
  const std::map<Ipv6Addr, Neighbour>& entries() const { return entries_; }
  const NeighbourTimers& timers() const { return timers_; }
  uint32_t capacity() const { return capacity_; }

 private:
  void Request(Neighbour& n, TimeNs now, bool unicast, std::vector<NeighbourEvent>* events);
  void Fail(Neighbour& n, std::vector<NeighbourEvent>* events);
  void UpdateNext();

  NeighbourTimers timers_;
  uint32_t capacity_;
  std::map<Ipv6Addr, Neighbour> entries_;  // by address: IPv4 first, as `show arp` lists
  std::vector<uint32_t> free_slots_;       // highest first, so slot 0 goes first
  TimeNs next_ns_ = kNever;
};

}  // namespace swemu
