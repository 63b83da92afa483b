#include "pipeline/tables/ternary_table.h"

#include <algorithm>

namespace swemu {

TernaryTable::TernaryTable(TableSpec spec)
    : MatchTable(std::move(spec)),
      index_(size()),
      prefetch_(index_.bytes() + uint64_t{size()} * sizeof(Record) >= kPrefetchFootprintBytes) {
  records_.reserve(size());  // address space only; never moves
}

LookupResult TernaryTable::Finish(uint32_t best) noexcept {
  if (best == HashIndex::kNone) {
    ++misses_;
    return LookupResult{&default_action_, false, kNoEntry};
  }
  ++hits_;
  Record& r = records_[best];
  ++r.hits;
  return LookupResult{&r.action, true, best};
}

LookupResult TernaryTable::DoLookup(const MatchKey& key) noexcept {
  uint32_t best = HashIndex::kNone;
  int32_t best_priority = 0;
  for (const GroupView& g : order_) {
    // Groups are sorted by the best priority they hold: none further on can win.
    if (best != HashIndex::kNone && g.best_priority > best_priority) break;
    uint32_t i = FindIn(key & g.mask, g.group);
    if (i != HashIndex::kNone && Beats(i, best, best_priority)) {
      best = i;
      best_priority = records_[i].priority;
    }
  }
  return Finish(best);
}

void TernaryTable::DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
  if (!prefetch_) {
    for (uint32_t i = 0; i < n; ++i) out[i] = DoLookup(keys[i]);
    return;
  }
  constexpr uint32_t kChunk = 32;
  uint32_t best[kChunk];
  int32_t best_priority[kChunk];
  uint32_t racing[kChunk];  // keys that a match in the current group could still improve
  MatchKey masked[kChunk];
  uint64_t hashes[kChunk];
  uint32_t guess[kChunk];
  const Record* records = records_.data();
  for (uint32_t base = 0; base < n; base += kChunk) {
    const uint32_t m = std::min(kChunk, n - base);
    const MatchKey* k = keys + base;
    std::fill_n(best, m, HashIndex::kNone);
    for (const GroupView& g : order_) {
      uint32_t count = 0;
      for (uint32_t i = 0; i < m; ++i) {
        if (best[i] != HashIndex::kNone && g.best_priority > best_priority[i]) continue;
        masked[count] = k[i] & g.mask;
        hashes[count] = HashOf(masked[count], g.group);
        __builtin_prefetch(index_.SlotAddress(hashes[count]));
        racing[count++] = i;
      }
      if (count == 0) break;
      for (uint32_t j = 0; j < count; ++j) {
        guess[j] = index_.FindTag(hashes[j]);
        if (guess[j] != HashIndex::kNone) __builtin_prefetch(&records[guess[j]]);
      }
      for (uint32_t j = 0; j < count; ++j) {
        uint32_t e = guess[j];
        if (e != HashIndex::kNone &&
            !(records[e].group == g.group && records[e].value == masked[j])) {
          e = FindHashed(masked[j], g.group, hashes[j]);
        }
        uint32_t i = racing[j];
        if (e != HashIndex::kNone && Beats(e, best[i], best_priority[i])) {
          best[i] = e;
          best_priority[i] = records_[e].priority;
        }
      }
    }
    for (uint32_t i = 0; i < m; ++i) out[base + i] = Finish(best[i]);
  }
}

uint64_t TernaryTable::SramBytes() const {
  return uint64_t{size()} * (ActionDataBytes() + kEntryOverheadBytes);
}

uint64_t TernaryTable::HostBytes() const {
  uint64_t groups = CapacityBytes(groups_);
  for (const Group& g : groups_) groups += MapBytes(g.priorities);
  return sizeof(*this) + HandleHostBytes() + index_.bytes() + CapacityBytes(records_) + groups +
         CapacityBytes(free_groups_) + MapBytes(group_of_mask_) + CapacityBytes(order_);
}

bool TernaryTable::Contains(const TableEntry& entry) const {
  auto it = group_of_mask_.find({entry.mask.w[0], entry.mask.w[1]});
  return it != group_of_mask_.end() && FindIn(entry.key, it->second) != HashIndex::kNone;
}

void TernaryTable::RebuildOrder() {
  order_.clear();
  for (uint32_t id = 0; id < groups_.size(); ++id) {
    const Group& g = groups_[id];
    if (!g.priorities.empty()) order_.push_back(GroupView{g.mask, g.priorities.begin()->first, id});
  }
  std::stable_sort(order_.begin(), order_.end(), [](const GroupView& a, const GroupView& b) {
    return a.best_priority < b.best_priority;
  });
}

void TernaryTable::Insert(EntryHandle handle, const TableEntry& entry) {
  auto [it, new_group] = group_of_mask_.try_emplace({entry.mask.w[0], entry.mask.w[1]}, 0);
  if (new_group) {
    if (!free_groups_.empty()) {
      it->second = free_groups_.back();
      free_groups_.pop_back();
    } else {
      it->second = static_cast<uint32_t>(groups_.size());
      groups_.emplace_back();
    }
    groups_[it->second].mask = entry.mask;
  }
  const uint32_t group = it->second;
  Group& g = groups_[group];
  bool new_best = g.priorities.empty() || entry.priority < g.priorities.begin()->first;
  ++g.priorities[entry.priority];

  if (handle >= records_.size()) records_.resize(handle + 1);
  records_[handle] = Record{entry.key, entry.action, 0, entry.priority, group};
  index_.Insert(HashOf(entry.key, group), handle);
  if (new_best) RebuildOrder();
}

void TernaryTable::Erase(EntryHandle handle) {
  const Record& r = records_[handle];
  Group& g = groups_[r.group];
  index_.Erase(HashOf(r.value, r.group), handle,
               [&](uint32_t e) { return HashOf(records_[e].value, records_[e].group); });
  const int32_t old_best = g.priorities.begin()->first;
  auto it = g.priorities.find(r.priority);
  if (--it->second == 0) g.priorities.erase(it);
  if (g.priorities.empty()) {
    group_of_mask_.erase({g.mask.w[0], g.mask.w[1]});
    free_groups_.push_back(r.group);
    RebuildOrder();
  } else if (g.priorities.begin()->first != old_best) {
    RebuildOrder();
  }
}

void TernaryTable::SetAction(EntryHandle handle, const ActionCall& action) {
  records_[handle].action = action;
}

TableEntry TernaryTable::Read(EntryHandle handle) const {
  const Record& r = records_[handle];
  TableEntry entry;
  entry.key = r.value;
  entry.mask = groups_[r.group].mask;
  entry.priority = r.priority;
  entry.action = r.action;
  return entry;
}

void TernaryTable::ClearEntries() {
  index_.Clear();
  records_.clear();
  groups_.clear();
  free_groups_.clear();
  group_of_mask_.clear();
  order_.clear();
}

void TernaryTable::ResetEntryHits() {
  for (Record& r : records_) r.hits = 0;
}

}  // namespace swemu
