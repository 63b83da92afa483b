#include "hostlib/dlcp/sender_agenda.h"

#include <algorithm>

namespace swemu {

bool DlcpSenderAgenda::Is(uint64_t key, bool nic_bound, TimeNs time) const {
  auto it = where_.find(key);
  return it != where_.end() && it->second.nic_bound == nic_bound && it->second.time == time;
}

void DlcpSenderAgenda::Erase(uint64_t key) {
  auto it = where_.find(key);
  if (it == where_.end()) return;
  if (it->second.nic_bound) {
    nic_keys_.erase(key);
    nic_by_report_.erase({it->second.time, key});
  } else {
    own_.erase({it->second.time, key});
  }
  where_.erase(it);
}

void DlcpSenderAgenda::SetOwn(uint64_t key, TimeNs wake) {
  if (Is(key, false, wake)) return;
  Erase(key);
  own_.emplace(wake, key);
  where_.emplace(key, Where{false, wake});
}

void DlcpSenderAgenda::SetNicBound(uint64_t key, TimeNs report) {
  if (Is(key, true, report)) return;
  Erase(key);
  nic_keys_.insert(key);
  nic_by_report_.emplace(report, key);
  where_.emplace(key, Where{true, report});
}

TimeNs DlcpSenderAgenda::Earliest(TimeNs nic_next) const {
  TimeNs earliest = own_.empty() ? kNever : own_.begin()->first;
  if (!nic_keys_.empty()) earliest = std::min(earliest, nic_next);
  return earliest;
}

void DlcpSenderAgenda::OnNicMoved(TimeNs nic_next) {
  while (!nic_by_report_.empty() && nic_by_report_.begin()->first < nic_next) {
    const auto [report, key] = *nic_by_report_.begin();
    SetOwn(key, report);
  }
}

std::vector<uint64_t> DlcpSenderAgenda::Due(TimeNs now, uint64_t last) const {
  std::vector<uint64_t> due;
  for (auto it = own_.begin(); it != own_.end() && it->first <= now; ++it) {
    due.push_back(it->second);
  }
  for (auto it = nic_by_report_.begin(); it != nic_by_report_.end() && it->first <= now; ++it) {
    due.push_back(it->second);
  }
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
