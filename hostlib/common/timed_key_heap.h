#pragma once
// Keys by (time, key), least first: the agendas of hosts with many flows (DlcpSenderAgenda,
// TcpHost). A binary heap in one array whose entries point at where their owner keeps each
// entry's index, so a key is moved or removed in O(log n) without a search, and thousands of
// flows sit in a few cache lines a level rather than in a tree's nodes.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/core/clock.h"

namespace swemu {

class TimedKeyHeap {
 public:
  struct Entry {
    TimeNs time;
    uint64_t key;
    std::size_t* at;  // the owner's copy of this entry's index, kept current
  };
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }
  // Adds key at `time`; *at holds its index from now on.
  void Push(TimeNs time, uint64_t key, std::size_t* at);
  // Removes the entry at index `at` (an owner's *at).
  void Remove(std::size_t at);
  // Appends every key whose time is at or before `time`, in no particular order.
  void CollectUpTo(TimeNs time, std::vector<uint64_t>* keys) const;

 private:
  static bool Less(const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.key < b.key;
  }
  void Put(std::size_t at, const Entry& entry) {
    heap_[at] = entry;
    *entry.at = at;
  }
  void SiftUp(std::size_t at, Entry entry);
  void SiftDown(std::size_t at, Entry entry);
  std::vector<Entry> heap_;
};

}  // namespace swemu
