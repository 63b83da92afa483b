#include "hostlib/dlcp/sender_agenda.h"

#include <algorithm>

namespace swemu {

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
  HeapOf(nic_bound).Push(time, key, &where.at);
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
    const TimedKeyHeap::Entry top = nic_by_report_.top();
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
