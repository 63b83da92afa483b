#include "pipeline/programs/neighbour_table.h"

#include <algorithm>

namespace swemu {

const char* NeighbourStateName(NeighbourState state) {
  switch (state) {
    case NeighbourState::kIncomplete:
      return "INCOMPLETE";
    case NeighbourState::kReachable:
      return "REACHABLE";
    case NeighbourState::kStale:
      return "STALE";
    case NeighbourState::kFailed:
      return "FAILED";
  }
  return "?";
}

NeighbourTable::NeighbourTable(NeighbourTimers timers, uint32_t capacity)
    : timers_(timers), capacity_(capacity) {
  free_slots_.reserve(capacity);
  for (uint32_t s = capacity; s-- > 0;) free_slots_.push_back(s);
}

Neighbour* NeighbourTable::Resolve(const Ipv6Addr& ip, uint32_t rif, TimeNs now,
                                   std::vector<NeighbourEvent>* events) {
  auto it = entries_.find(ip);
  if (it == entries_.end()) {
    if (free_slots_.empty()) return nullptr;
    Neighbour n;
    n.ip = ip;
    n.slot = free_slots_.back();
    free_slots_.pop_back();
    it = entries_.emplace(ip, std::move(n)).first;
  } else if (it->second.state != NeighbourState::kFailed) {
    return &it->second;
  }
  Neighbour& n = it->second;
  n.rif = rif;
  n.mac = 0;
  n.port = kPortUnset;
  n.state = NeighbourState::kIncomplete;
  n.confirmed_ns = now;
  n.probes = 0;
  Request(n, now, false, events);
  UpdateNext();
  return &n;
}

bool NeighbourTable::Hold(Neighbour& n, Packet* pkt) {
  if (n.pending.size() >= timers_.queue_packets) return false;
  n.pending.push_back(pkt);
  return true;
}

void NeighbourTable::Confirm(const Ipv6Addr& ip, uint32_t rif, uint64_t mac, PortId port,
                             TimeNs now, bool create, std::vector<NeighbourEvent>* events) {
  auto it = entries_.find(ip);
  if (it == entries_.end()) {
    if (!create || free_slots_.empty()) return;
    Neighbour n;
    n.ip = ip;
    n.slot = free_slots_.back();
    free_slots_.pop_back();
    it = entries_.emplace(ip, std::move(n)).first;
  }
  Neighbour& n = it->second;
  const bool news = n.state == NeighbourState::kIncomplete ||
                    n.state == NeighbourState::kFailed || n.mac != mac || n.port != port;
  n.rif = rif;
  n.mac = mac;
  n.port = port;
  n.state = NeighbourState::kReachable;
  n.confirmed_ns = now;
  n.probes = 0;
  n.next_ns = now + timers_.reachable_ns;
  if (news) {
    events->push_back({NeighbourEvent::kResolved, n.ip, n.rif, n.slot, n.mac, n.port,
                       std::move(n.pending)});
    n.pending.clear();
  }
  UpdateNext();
}

void NeighbourTable::MoveMac(uint64_t mac, uint32_t rif, PortId port,
                             std::vector<NeighbourEvent>* events) {
  for (auto& [ip, n] : entries_) {
    const bool resolved = n.state == NeighbourState::kReachable ||
                          n.state == NeighbourState::kStale;
    if (!resolved || n.mac != mac || n.rif != rif || n.port == port) continue;
    n.port = port;
    events->push_back({NeighbourEvent::kResolved, n.ip, n.rif, n.slot, n.mac, n.port, {}});
  }
}

void NeighbourTable::Expire(TimeNs now, std::vector<NeighbourEvent>* events) {
  if (now < next_ns_) return;
  for (auto& [ip, n] : entries_) {
    if (n.next_ns > now) continue;
    switch (n.state) {
      case NeighbourState::kReachable:  // reachable time over: probe it where it was
        n.state = NeighbourState::kStale;
        n.probes = 0;
        Request(n, now, true, events);
        break;
      case NeighbourState::kIncomplete:
      case NeighbourState::kStale:
        if (n.probes < timers_.max_probes) {
          Request(n, now, n.state == NeighbourState::kStale, events);
        } else {
          Fail(n, events);
        }
        break;
      case NeighbourState::kFailed:
        n.next_ns = kNever;
        break;
    }
  }
  UpdateNext();
}

std::vector<Packet*> NeighbourTable::TakeAllPending() {
  std::vector<Packet*> all;
  for (auto& [ip, n] : entries_) {
    all.insert(all.end(), n.pending.begin(), n.pending.end());
    n.pending.clear();
  }
  return all;
}

const Neighbour* NeighbourTable::Find(const Ipv6Addr& ip) const {
  auto it = entries_.find(ip);
  return it == entries_.end() ? nullptr : &it->second;
}

void NeighbourTable::Request(Neighbour& n, TimeNs now, bool unicast,
                             std::vector<NeighbourEvent>* events) {
  ++n.probes;
  n.next_ns = now + timers_.retrans_ns;
  events->push_back({NeighbourEvent::kRequest, n.ip, n.rif, n.slot, unicast ? n.mac : 0,
                     unicast ? n.port : kPortUnset, {}});
}

void NeighbourTable::Fail(Neighbour& n, std::vector<NeighbourEvent>* events) {
  n.state = NeighbourState::kFailed;
  n.next_ns = kNever;
  events->push_back({NeighbourEvent::kFailed, n.ip, n.rif, n.slot, n.mac, n.port,
                     std::move(n.pending)});
  n.pending.clear();
  n.mac = 0;
  n.port = kPortUnset;
}

void NeighbourTable::UpdateNext() {
  next_ns_ = kNever;
  for (const auto& [ip, n] : entries_) next_ns_ = std::min(next_ns_, n.next_ns);
}

}  // namespace swemu
