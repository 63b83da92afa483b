#pragma once
// Longest-prefix match on one key field of 33..128 bits (an IPv6 address): the 16-8-8 trie of
// lpm_table.h serves <= 32-bit keys only. One hash index holds every prefix, hashed with its
// length; a lookup masks the key to each prefix length that has entries, longest first, and
// probes until one is found (as one hash table per length would, in one array). A routing
// table uses few lengths (/128 hosts, /64 subnets, a /48 or two, /0), so a lookup is a handful
// of one-line probes. Create it with MakeTable.
#include <array>
#include <cstdint>
#include <vector>

#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/tables/hash_index.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

class WideLpmTable final : public MatchTable {
 public:
  explicit WideLpmTable(TableSpec spec);  // spec already validated

  // Counted as LpmTable is: `size` TCAM entries, SRAM for the action data.
  static constexpr uint64_t kEntryOverheadBytes = 2;
  uint64_t SramBytes() const override;
  uint64_t TcamEntries() const override { return size(); }
  uint64_t HostBytes() const override;
  // The prefix lengths holding entries, longest first (what a lookup probes).
  const std::vector<uint8_t>& lengths() const { return lengths_; }

 private:
  struct Record {
    MatchKey prefix;  // host bits zero
    ActionCall action;
    uint64_t hits = 0;
    uint8_t len = 0;
  };

  uint64_t HashOf(const MatchKey& prefix, unsigned len) const noexcept {
    return HashMatchKey(prefix, len);
  }
  // The handle holding exactly prefix/len, or HashIndex::kNone.
  uint32_t Find(const MatchKey& prefix, unsigned len) const noexcept {
    return index_.Find(HashOf(prefix, len), [&](uint32_t h) {
      return records_[h].len == len && records_[h].prefix == prefix;
    });
  }
  LookupResult DoLookup(const MatchKey& key) noexcept override;
  // For a large table, probes one prefix length at a time across the burst, prefetching every
  // key's bucket before reading any, so the burst's cache misses overlap.
  void DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept override;
  LookupResult Result(uint32_t handle) noexcept;
  bool Contains(const TableEntry& entry) const override;
  void Insert(EntryHandle handle, const TableEntry& entry) override;
  void Erase(EntryHandle handle) override;
  void SetAction(EntryHandle handle, const ActionCall& action) override;
  TableEntry Read(EntryHandle handle) const override;
  uint64_t ReadHits(EntryHandle handle) const override { return records_[handle].hits; }
  void ClearEntries() override;
  void ResetEntryHits() override;
  void CountLength(unsigned len, int delta);

  std::array<MatchKey, 129> masks_;  // by prefix length: the key's top `len` bits
  std::array<uint32_t, 129> per_length_{};
  std::vector<uint8_t> lengths_;  // lengths with entries, longest first
  HashIndex index_;
  bool prefetch_;                                           // footprint >= kPrefetchFootprintBytes
  std::vector<Record, HugePageAllocator<Record>> records_;  // by handle; reserved, never moves
};

}  // namespace swemu
