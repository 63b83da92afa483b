#include "hostlib/common/timed_key_heap.h"

namespace swemu {

void TimedKeyHeap::Push(TimeNs time, uint64_t key, std::size_t* at) {
  heap_.emplace_back();
  SiftUp(heap_.size() - 1, Entry{time, key, at});
}

void TimedKeyHeap::Remove(std::size_t at) {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (at == heap_.size()) return;
  if (at > 0 && Less(last, heap_[(at - 1) / 2])) {
    SiftUp(at, last);
  } else {
    SiftDown(at, last);
  }
}

void TimedKeyHeap::SiftUp(std::size_t at, Entry entry) {
  while (at > 0) {
    const std::size_t parent = (at - 1) / 2;
    if (!Less(entry, heap_[parent])) break;
    Put(at, heap_[parent]);
    at = parent;
  }
  Put(at, entry);
}

void TimedKeyHeap::SiftDown(std::size_t at, Entry entry) {
  const std::size_t n = heap_.size();
  for (std::size_t child = 2 * at + 1; child < n; child = 2 * at + 1) {
    if (child + 1 < n && Less(heap_[child + 1], heap_[child])) ++child;
    if (!Less(heap_[child], entry)) break;
    Put(at, heap_[child]);
    at = child;
  }
  Put(at, entry);
}

void TimedKeyHeap::CollectUpTo(TimeNs time, std::vector<uint64_t>* keys) const {
  if (heap_.empty() || heap_[0].time > time) return;
  std::vector<std::size_t> open{0};  // entries due whose children are not yet looked at
  while (!open.empty()) {
    const std::size_t at = open.back();
    open.pop_back();
    keys->push_back(heap_[at].key);
    for (std::size_t child = 2 * at + 1; child <= 2 * at + 2 && child < heap_.size(); ++child) {
      if (heap_[child].time <= time) open.push_back(child);
    }
  }
}

}  // namespace swemu
