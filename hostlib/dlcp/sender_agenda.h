#pragma once
// When each of a DLCP host's senders next has something to do, and in which order Pump visits
// those due (DlcpHost::Pump).
//
// A sender's wake is 0 with a START to send, else the earlier of its report's time and when its
// pacer and the shared NIC both let it send. Most senders of a busy host wait for the NIC alone
// (their pacer is ready): a PS holds thousands of flows and sends one frame at a time. Those are
// kept as one group whose wake is the NIC's (`nic_next`): a frame of the NIC moves the group's
// wake without visiting each member, and Pump visits only the one member the round robin
// offers the NIC to. Members whose report comes before the NIC is free again leave the group
// with their report's time. The others are kept by their own wake.
//
// Visits go in cyclic key order from the key after `last` (the sender that sent last): position
// (key - last - 1) modulo 2^64.
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hostlib/common/timed_key_heap.h"
#include "pipeline/core/clock.h"

namespace swemu {

class DlcpSenderAgenda {
 public:
  static uint64_t Position(uint64_t key, uint64_t last) { return key - last - 1; }

  // key wakes at `wake`, on its own (replacing its entry, if any; the same entry stays).
  void SetOwn(uint64_t key, TimeNs wake);
  // key waits for the NIC only; its report is due at `report` (not before the NIC's next).
  void SetNicBound(uint64_t key, TimeNs report);
  void Erase(uint64_t key);

  // The earliest wake of all (kNever: none), with the NIC next free at `nic_next`.
  TimeNs Earliest(TimeNs nic_next) const;
  // The NIC's next free time moved to `nic_next`: members of the group whose report comes
  // earlier leave it, with the report's time as their own wake.
  void OnNicMoved(TimeNs nic_next);
  // Every sender with something to do at `now` on its own (its wake passed, or, in the group,
  // its report is due), in visiting order from the key after `last`. They stay in the agenda
  // until placed again.
  std::vector<uint64_t> Due(TimeNs now, uint64_t last) const;
  // The group's first member at a position in [from, to) (no `to`: to the end of the cycle),
  // or nothing. It stays in the group until placed again.
  std::optional<uint64_t> FirstNicBound(uint64_t last, uint64_t from,
                                        std::optional<uint64_t> to = std::nullopt) const;

  std::size_t size() const { return where_.size(); }

 private:
  struct Where {
    bool nic_bound;
    TimeNs time;  // own: the wake; group: the report's time
    std::size_t at = 0;  // its index in own_ or nic_by_report_
  };
  void Set(uint64_t key, bool nic_bound, TimeNs time);
  TimedKeyHeap& HeapOf(bool nic_bound) { return nic_bound ? nic_by_report_ : own_; }
  TimedKeyHeap own_;
  std::set<uint64_t> nic_keys_;
  TimedKeyHeap nic_by_report_;
  // Node-based: a Where keeps its address while others come and go (the heaps point at its at).
  std::unordered_map<uint64_t, Where> where_;
};

}  // namespace swemu
