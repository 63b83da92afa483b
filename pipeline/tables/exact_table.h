#pragma once
// Exact match: a hash index (hash_index.h) over one 64-byte record per entry holding the key,
// the action and the hit counter, so a hit costs two cache lines (bucket, record). Capacity is
// fixed at creation from the declared size; lookups never allocate. Create it with MakeTable.
#include <cstdint>
#include <vector>

#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/tables/hash_index.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

class ExactTable final : public MatchTable {
 public:
  explicit ExactTable(TableSpec spec);  // spec already validated

  // SRAM: per declared entry, the key and the widest action's data in whole bytes plus
  // kEntryOverheadBytes (action id and valid bit); no TCAM.
  static constexpr uint64_t kEntryOverheadBytes = 4;
  uint64_t SramBytes() const override;
  uint64_t TcamEntries() const override { return 0; }
  // The hash index (2 to 4 slots per declared entry) and one 64-byte record per declared entry.
  uint64_t HostBytes() const override;

 private:
  LookupResult DoLookup(const MatchKey& key) noexcept override {
    return Result(FindIndex(key, HashKey(key)));
  }
  // Hashes the whole burst and prefetches its buckets, then finds each key's tag and prefetches
  // that record, then confirms the keys: three passes whose memory accesses overlap.
  void DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept override;

  struct alignas(64) Record {
    MatchKey key;
    ActionCall action;
    uint64_t hits = 0;
  };
  static_assert(sizeof(Record) == 64);

  static uint64_t HashKey(const MatchKey& key) noexcept { return HashMatchKey(key); }
  uint32_t FindIndex(const MatchKey& key, uint64_t hash) const noexcept {
    const Record* records = records_.data();
    return index_.Find(hash, [&](uint32_t e) { return records[e].key == key; });
  }
  LookupResult Result(uint32_t i) noexcept {
    if (i == HashIndex::kNone) {
      ++misses_;
      return LookupResult{&default_action_, false, kNoEntry};
    }
    ++hits_;
    ++records_[i].hits;
    return LookupResult{&records_[i].action, true, i};
  }

  bool Contains(const TableEntry& entry) const override;
  void Insert(EntryHandle handle, const TableEntry& entry) override;
  void Erase(EntryHandle handle) override;
  void SetAction(EntryHandle handle, const ActionCall& action) override;
  TableEntry Read(EntryHandle handle) const override;
  uint64_t ReadHits(EntryHandle handle) const override { return records_[handle].hits; }
  void ClearEntries() override;
  void ResetEntryHits() override;

  HashIndex index_;
  // Indexed by handle; capacity reserved for the declared size so it never moves.
  std::vector<Record, HugePageAllocator<Record>> records_;
};

}  // namespace swemu
