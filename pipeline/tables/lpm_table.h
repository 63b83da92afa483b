#pragma once
// Longest-prefix match on one key field of at most 32 bits (kMaxTrieLpmKeyBits): the key is
// left-aligned to 32 bits and looked up in a DIR-16-8-8 trie (lpm_trie.h), at most three reads,
// then the entry's action record. The source of truth is one hash map per prefix length, so a
// delete repaints the removed prefix's range with the next-longest covering prefix.
// Create it with MakeTable.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/tables/lpm_trie.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

class LpmTable final : public MatchTable {
 public:
  explicit LpmTable(TableSpec spec);  // spec already validated

  // Counted as on Tofino without algorithmic LPM: `size` TCAM entries for the prefixes, plus
  // SRAM for the action data (widest action, whole bytes) and kEntryOverheadBytes per entry.
  static constexpr uint64_t kEntryOverheadBytes = 2;
  uint64_t SramBytes() const override;
  uint64_t TcamEntries() const override { return size(); }
  // The trie (256 KiB plus its chunk pool), a record per declared entry, and the prefixes and
  // per-length hash maps the control plane keeps.
  uint64_t HostBytes() const override;
  uint32_t trie_chunks() const { return trie_.chunks_in_use(); }

 private:
  LookupResult DoLookup(const MatchKey& key) noexcept override {
    return Result(trie_.Lookup(Aligned(key)));
  }
  // For a large table, walks the trie level by level across the burst, prefetching each
  // next-level word and then the action records, so the burst's cache misses overlap.
  void DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept override;

  struct Record {
    ActionCall action;
    uint64_t hits = 0;
  };
  struct Prefix {
    uint32_t value = 0;  // left-aligned, host bits zero
    uint8_t len = 0;
  };

  uint32_t Aligned(const MatchKey& key) const noexcept {
    return static_cast<uint32_t>(key.w[0]) << shift_;
  }
  LookupResult Result(uint32_t leaf) noexcept {
    if (leaf == 0) {
      ++misses_;
      return LookupResult{&default_action_, false, kNoEntry};
    }
    ++hits_;
    Record& r = records_[leaf - 1];
    ++r.hits;
    return LookupResult{&r.action, true, leaf - 1};
  }
  bool Contains(const TableEntry& entry) const override;
  void Insert(EntryHandle handle, const TableEntry& entry) override;
  void Erase(EntryHandle handle) override;
  void SetAction(EntryHandle handle, const ActionCall& action) override;
  TableEntry Read(EntryHandle handle) const override;
  uint64_t ReadHits(EntryHandle handle) const override { return records_[handle].hits; }
  void ClearEntries() override;
  void ResetEntryHits() override;

  unsigned shift_;  // 32 - key width
  bool prefetch_;   // footprint >= kPrefetchFootprintBytes
  LpmTrie trie_;    // leaves hold handle + 1
  std::vector<Record, HugePageAllocator<Record>>
      records_;                   // by handle; capacity reserved for the declared size
  std::vector<Prefix> prefixes_;  // by handle
  std::array<std::unordered_map<uint32_t, EntryHandle>, 33> by_length_;
};

}  // namespace swemu
