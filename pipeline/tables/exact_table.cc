#include "pipeline/tables/exact_table.h"

#include <algorithm>

namespace swemu {

ExactTable::ExactTable(TableSpec spec) : MatchTable(std::move(spec)), index_(size()) {
  // Reserving address space only: pages are touched as entries are added.
  records_.reserve(size());
}

void ExactTable::DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
  constexpr uint32_t kChunk = 32;
  uint64_t hashes[kChunk];
  uint32_t guess[kChunk];
  const Record* records = records_.data();
  for (uint32_t base = 0; base < n; base += kChunk) {
    const uint32_t m = std::min(kChunk, n - base);
    const MatchKey* k = keys + base;
    for (uint32_t i = 0; i < m; ++i) {
      hashes[i] = HashKey(k[i]);
      __builtin_prefetch(index_.SlotAddress(hashes[i]));
    }
    for (uint32_t i = 0; i < m; ++i) {
      guess[i] = index_.FindTag(hashes[i]);
      if (guess[i] != HashIndex::kNone) __builtin_prefetch(&records[guess[i]]);
    }
    // Table counters add up in a local (in memory, each store to `out` may alias them).
    uint32_t hits = 0;
    for (uint32_t i = 0; i < m; ++i) {
      uint32_t e = guess[i];
      if (e != HashIndex::kNone && !(records[e].key == k[i])) e = FindIndex(k[i], hashes[i]);
      if (e == HashIndex::kNone) {
        out[base + i] = LookupResult{&default_action_, false, kNoEntry};
      } else {
        ++hits;
        ++records_[e].hits;
        out[base + i] = LookupResult{&records_[e].action, true, e};
      }
    }
    hits_ += hits;
    misses_ += m - hits;
  }
}

uint64_t ExactTable::SramBytes() const {
  return uint64_t{size()} * ((key_bits() + 7) / 8 + ActionDataBytes() + kEntryOverheadBytes);
}

uint64_t ExactTable::HostBytes() const {
  return sizeof(*this) + HandleHostBytes() + index_.bytes() + CapacityBytes(records_);
}

bool ExactTable::Contains(const TableEntry& entry) const {
  return index_.Find(HashKey(entry.key),
                     [&](uint32_t e) { return records_[e].key == entry.key; }) != HashIndex::kNone;
}

void ExactTable::Insert(EntryHandle handle, const TableEntry& entry) {
  if (handle >= records_.size()) records_.resize(handle + 1);
  records_[handle] = Record{entry.key, entry.action, 0};
  index_.Insert(HashKey(entry.key), handle);
}

void ExactTable::Erase(EntryHandle handle) {
  index_.Erase(HashKey(records_[handle].key), handle,
               [&](uint32_t e) { return HashKey(records_[e].key); });
}

void ExactTable::SetAction(EntryHandle handle, const ActionCall& action) {
  records_[handle].action = action;
}

TableEntry ExactTable::Read(EntryHandle handle) const {
  TableEntry entry;
  entry.key = records_[handle].key;
  entry.mask = LowBitsMask(key_bits());
  entry.action = records_[handle].action;
  return entry;
}

void ExactTable::ClearEntries() {
  index_.Clear();
  records_.clear();
}

void ExactTable::ResetEntryHits() {
  for (Record& r : records_) r.hits = 0;
}

}  // namespace swemu
