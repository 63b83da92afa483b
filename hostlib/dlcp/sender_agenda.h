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
  // Keys by (time, key), least first, as a binary heap in one array whose entries point at
  // their key's Where and keep its index there: a key is moved or removed in O(log n) without a
  // search, and a PS's thousands of senders sit in a few cache lines a level, not a tree's nodes.
  class Heap {
   public:
    struct Entry {
      TimeNs time;
      uint64_t key;
      Where* where;
    };
    bool empty() const { return heap_.empty(); }
    const Entry& top() const { return heap_.front(); }
    void Push(uint64_t key, Where* where);
    void Remove(std::size_t at);
    // Every key whose time is at or before `time`, in no particular order.
    void CollectUpTo(TimeNs time, std::vector<uint64_t>* keys) const;

   private:
    static bool Less(const Entry& a, const Entry& b) {
      return a.time != b.time ? a.time < b.time : a.key < b.key;
    }
    void Put(std::size_t at, const Entry& entry) {
      heap_[at] = entry;
      entry.where->at = at;
    }
    void SiftUp(std::size_t at, Entry entry);
    void SiftDown(std::size_t at, Entry entry);
    std::vector<Entry> heap_;
  };
  void Set(uint64_t key, bool nic_bound, TimeNs time);
  Heap& HeapOf(bool nic_bound) { return nic_bound ? nic_by_report_ : own_; }
  Heap own_;
  std::set<uint64_t> nic_keys_;
  Heap nic_by_report_;
  // Node-based: a Where keeps its address while others come and go (Heap::Entry points at it).
  std::unordered_map<uint64_t, Where> where_;
};

}  // namespace swemu
