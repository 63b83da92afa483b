#pragma once
// Ternary match (value/mask with priority) by tuple space search: entries are grouped by their
// mask, and one hash index (hash_index.h) holds every entry keyed by (mask group, masked value).
// A lookup visits the groups in order of the best priority they hold and stops as soon as the
// next group cannot beat the match already found, so cost grows with the number of distinct
// masks, not entries. Create it with MakeTable.
//
// Priority follows BMv2's simple_switch (bm_sim lookup_structures: the entry with the smallest
// priority value wins): a LOWER number is a HIGHER priority. Among equal priorities the lowest
// handle wins, which is also what BMv2's entry list yields. P4Runtime uses the opposite
// direction; a P4Runtime front end must convert. Unlike BMv2, an entry with the same value and
// mask as a live one is refused as a duplicate whatever its priority (it could never match).
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/tables/hash_index.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

class TernaryTable final : public MatchTable {
 public:
  explicit TernaryTable(TableSpec spec);  // spec already validated

  // Counted as a TCAM table: `size` entries of TCAM; action data (widest action, whole bytes)
  // plus kEntryOverheadBytes per entry in SRAM.
  static constexpr uint64_t kEntryOverheadBytes = 2;
  uint64_t SramBytes() const override;
  uint64_t TcamEntries() const override { return size(); }
  // The hash index (2 to 4 slots per declared entry), a record per declared entry, and the mask
  // groups with their priority counts.
  uint64_t HostBytes() const override;
  std::size_t masks() const { return order_.size(); }

 private:
  LookupResult DoLookup(const MatchKey& key) noexcept override;
  // For a large table, walks the mask groups once per burst; in each, hashes every key still in
  // the race and prefetches its bucket, then its likely record, then confirms: the burst's
  // cache misses overlap.
  void DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept override;

  struct Record {
    MatchKey value;  // already masked
    ActionCall action;
    uint64_t hits = 0;
    int32_t priority = 0;
    uint32_t group = 0;
  };
  struct Group {
    MatchKey mask;
    std::map<int32_t, uint32_t> priorities;  // priority -> live entries with it
  };
  struct GroupView {  // what the fast path scans, sorted by best (lowest) priority
    MatchKey mask;
    int32_t best_priority;
    uint32_t group;
  };

  static uint64_t HashOf(const MatchKey& value, uint32_t group) noexcept {
    return HashMatchKey(value, group);
  }
  uint32_t FindIn(const MatchKey& value, uint32_t group) const noexcept {
    return FindHashed(value, group, HashOf(value, group));
  }
  uint32_t FindHashed(const MatchKey& value, uint32_t group, uint64_t hash) const noexcept {
    const Record* records = records_.data();
    return index_.Find(
        hash, [&](uint32_t e) { return records[e].group == group && records[e].value == value; });
  }
  // Whether entry `candidate` beats the current best (lower priority value, then lower handle).
  bool Beats(uint32_t candidate, uint32_t best, int32_t best_priority) const noexcept {
    int32_t p = records_[candidate].priority;
    return best == HashIndex::kNone || p < best_priority ||
           (p == best_priority && candidate < best);
  }
  LookupResult Finish(uint32_t best) noexcept;
  void RebuildOrder();

  bool Contains(const TableEntry& entry) const override;
  void Insert(EntryHandle handle, const TableEntry& entry) override;
  void Erase(EntryHandle handle) override;
  void SetAction(EntryHandle handle, const ActionCall& action) override;
  TableEntry Read(EntryHandle handle) const override;
  uint64_t ReadHits(EntryHandle handle) const override { return records_[handle].hits; }
  void ClearEntries() override;
  void ResetEntryHits() override;

  HashIndex index_;
  bool prefetch_;  // footprint >= kPrefetchFootprintBytes
  std::vector<Record, HugePageAllocator<Record>>
      records_;                // by handle; capacity reserved for the declared size
  std::vector<Group> groups_;  // by group id; a group with no priorities is free
  std::vector<uint32_t> free_groups_;
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> group_of_mask_;
  std::vector<GroupView> order_;
};

}  // namespace swemu
