#include "hostlib/dlcp/sender_agenda.h"

#include <algorithm>

namespace swemu {

void DlcpSenderAgenda::Heap::Push(uint64_t key, Where* where) {
  heap_.emplace_back();
  SiftUp(heap_.size() - 1, Entry{where->time, key, where});
}

void DlcpSenderAgenda::Heap::Remove(std::size_t at) {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (at == heap_.size()) return;
  if (at > 0 && Less(last, heap_[(at - 1) / 2])) {
    SiftUp(at, last);
  } else {
    SiftDown(at, last);
  }
}

void DlcpSenderAgenda::Heap::SiftUp(std::size_t at, Entry entry) {
  while (at > 0) {
    const std::size_t parent = (at - 1) / 2;
    if (!Less(entry, heap_[parent])) break;
    Put(at, heap_[parent]);
    at = parent;
  }
  Put(at, entry);
}

void DlcpSenderAgenda::Heap::SiftDown(std::size_t at, Entry entry) {
  const std::size_t n = heap_.size();
  for (std::size_t child = 2 * at + 1; child < n; child = 2 * at + 1) {
    if (child + 1 < n && Less(heap_[child + 1], heap_[child])) ++child;
    if (!Less(heap_[child], entry)) break;
    Put(at, heap_[child]);
    at = child;
  }
  Put(at, entry);
}

void DlcpSenderAgenda::Heap::CollectUpTo(TimeNs time, std::vector<uint64_t>* keys) const {
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

void DlcpSenderAgenda::Set(uint64_t key, bool nic_bound, TimeNs time) {
  auto [it, added] = where_.try_emplace(key, Where{nic_bound, time});
  Where& where = it->second;
  if (!added) {
    if (where.nic_bound == nic_bound && where.time == time) return;  // the same entry stays
    HeapOf(where.nic_bound).Remove(where.at);
    if (where.nic_bound && !nic_bound) nic_keys_.erase(key);
    where.time = time;
  }
  if (nic_bound && (added || !where.nic_bound)) nic_keys_.insert(key);
  where.nic_bound = nic_bound;
  HeapOf(nic_bound).Push(key, &where);
}

void DlcpSenderAgenda::SetOwn(uint64_t key, TimeNs wake) { Set(key, false, wake); }

void DlcpSenderAgenda::SetNicBound(uint64_t key, TimeNs report) { Set(key, true, report); }

void DlcpSenderAgenda::Erase(uint64_t key) {
  auto it = where_.find(key);
  if (it == where_.end()) return;
  HeapOf(it->second.nic_bound).Remove(it->second.at);
  if (it->second.nic_bound) nic_keys_.erase(key);
  where_.erase(it);
}

TimeNs DlcpSenderAgenda::Earliest(TimeNs nic_next) const {
  TimeNs earliest = own_.empty() ? kNever : own_.top().time;
  if (!nic_keys_.empty()) earliest = std::min(earliest, nic_next);
  return earliest;
}

void DlcpSenderAgenda::OnNicMoved(TimeNs nic_next) {
  while (!nic_by_report_.empty() && nic_by_report_.top().time < nic_next) {
    const Heap::Entry top = nic_by_report_.top();
    SetOwn(top.key, top.time);
  }
}

std::vector<uint64_t> DlcpSenderAgenda::Due(TimeNs now, uint64_t last) const {
  std::vector<uint64_t> due;
  own_.CollectUpTo(now, &due);
  nic_by_report_.CollectUpTo(now, &due);
  std::sort(due.begin(), due.end(), [last](uint64_t a, uint64_t b) {
    return Position(a, last) < Position(b, last);
  });
  return due;
}

std::optional<uint64_t> DlcpSenderAgenda::FirstNicBound(uint64_t last, uint64_t from,
                                                        std::optional<uint64_t> to) const {
  if (nic_keys_.empty() || (to && from >= *to)) return std::nullopt;
  // The first key at or after position `from`, going round past the largest key.
  auto it = nic_keys_.lower_bound(from + last + 1);
  if (it == nic_keys_.end()) it = nic_keys_.begin();
  const uint64_t pos = Position(*it, last);
  if (pos < from || (to && pos >= *to)) return std::nullopt;
  return *it;
}

}  // namespace swemu
