#include "pipeline/tables/lpm_wide_table.h"

#include <algorithm>
#include <functional>

namespace swemu {

WideLpmTable::WideLpmTable(TableSpec spec)
    : MatchTable(std::move(spec)),
      index_(size()),
      prefetch_(index_.bytes() + uint64_t{size()} * sizeof(Record) >= kPrefetchFootprintBytes) {
  const unsigned bits = key_bits();
  for (unsigned len = 0; len <= 128; ++len) {
    masks_[len] = LowBitsMask(bits) & ~LowBitsMask(bits - std::min(len, bits));
  }
  records_.reserve(size());
  lengths_.reserve(masks_.size());  // never reallocated under a lookup
}

LookupResult WideLpmTable::Result(uint32_t handle) noexcept {
  if (handle == HashIndex::kNone) {
    ++misses_;
    return LookupResult{&default_action_, false, kNoEntry};
  }
  ++hits_;
  Record& r = records_[handle];
  ++r.hits;
  return LookupResult{&r.action, true, handle};
}

LookupResult WideLpmTable::DoLookup(const MatchKey& key) noexcept {
  for (const uint8_t len : lengths_) {
    const uint32_t h = Find(key & masks_[len], len);
    if (h != HashIndex::kNone) return Result(h);
  }
  return Result(HashIndex::kNone);
}

void WideLpmTable::DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
  if (!prefetch_) {
    for (uint32_t i = 0; i < n; ++i) out[i] = DoLookup(keys[i]);
    return;
  }
  constexpr uint32_t kChunk = 32;
  MatchKey masked[kChunk];
  uint64_t hash[kChunk];
  uint32_t found[kChunk];
  uint32_t pending[kChunk];  // the keys not found yet
  for (uint32_t base = 0; base < n; base += kChunk) {
    const uint32_t m = std::min(kChunk, n - base);
    uint32_t n_pending = m;
    for (uint32_t i = 0; i < m; ++i) {
      found[i] = HashIndex::kNone;
      pending[i] = i;
    }
    for (const uint8_t len : lengths_) {
      if (n_pending == 0) break;
      for (uint32_t j = 0; j < n_pending; ++j) {
        const uint32_t i = pending[j];
        masked[i] = keys[base + i] & masks_[len];
        hash[i] = HashOf(masked[i], len);
        __builtin_prefetch(index_.SlotAddress(hash[i]));
      }
      uint32_t still = 0;
      for (uint32_t j = 0; j < n_pending; ++j) {
        const uint32_t i = pending[j];
        found[i] = index_.Find(hash[i], [&](uint32_t h) {
          return records_[h].len == len && records_[h].prefix == masked[i];
        });
        if (found[i] == HashIndex::kNone) pending[still++] = i;
      }
      n_pending = still;
    }
    for (uint32_t i = 0; i < m; ++i) out[base + i] = Result(found[i]);
  }
}

uint64_t WideLpmTable::SramBytes() const {
  return uint64_t{size()} * (ActionDataBytes() + kEntryOverheadBytes);
}

uint64_t WideLpmTable::HostBytes() const {
  return sizeof(*this) + HandleHostBytes() + index_.bytes() + CapacityBytes(records_) +
         CapacityBytes(lengths_);
}

bool WideLpmTable::Contains(const TableEntry& entry) const {
  return Find(entry.key, entry.prefix_len) != HashIndex::kNone;
}

void WideLpmTable::CountLength(unsigned len, int delta) {
  per_length_[len] += delta;
  lengths_.clear();
  for (unsigned l = 129; l-- > 0;) {
    if (per_length_[l] != 0) lengths_.push_back(static_cast<uint8_t>(l));
  }
}

void WideLpmTable::Insert(EntryHandle handle, const TableEntry& entry) {
  if (handle >= records_.size()) records_.resize(handle + 1);
  // MatchTable::Add has cleared the host bits beyond the prefix.
  records_[handle] = Record{entry.key, entry.action, 0, entry.prefix_len};
  index_.Insert(HashOf(entry.key, entry.prefix_len), handle);
  CountLength(entry.prefix_len, +1);
}

void WideLpmTable::Erase(EntryHandle handle) {
  const Record& r = records_[handle];
  index_.Erase(HashOf(r.prefix, r.len), handle,
               [&](uint32_t other) { return HashOf(records_[other].prefix, records_[other].len); });
  CountLength(r.len, -1);
}

void WideLpmTable::SetAction(EntryHandle handle, const ActionCall& action) {
  records_[handle].action = action;
}

TableEntry WideLpmTable::Read(EntryHandle handle) const {
  const Record& r = records_[handle];
  TableEntry entry;
  entry.key = r.prefix;
  entry.prefix_len = r.len;
  entry.mask = masks_[r.len];
  entry.action = r.action;
  return entry;
}

void WideLpmTable::ClearEntries() {
  index_.Clear();
  records_.clear();
  per_length_.fill(0);
  lengths_.clear();
}

void WideLpmTable::ResetEntryHits() {
  for (Record& r : records_) r.hits = 0;
}

}  // namespace swemu
