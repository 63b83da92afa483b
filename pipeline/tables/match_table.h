#pragma once
// A match-action table: control-plane operations (slow path, Status/Result) and a lookup
// (fast path, noexcept, allocation-free) that returns the action to run. The kinds differ only in
// how they store and find entries (exact_table.h, lpm_table.h, ternary_table.h); handles, action
// checks and counters live here.
//
// Handles are small integers below the declared size; a deleted entry's handle is reused by a
// later Add (lowest free handle first, as BMv2 does).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/core/cycles.h"
#include "pipeline/core/status.h"
#include "pipeline/tables/table_spec.h"

namespace swemu {

class MatchTable {
 public:
  virtual ~MatchTable() = default;
  MatchTable(const MatchTable&) = delete;
  MatchTable& operator=(const MatchTable&) = delete;

  const TableSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  MatchKind kind() const { return spec_.kind; }
  unsigned key_bits() const { return key_bits_; }
  uint32_t size() const { return spec_.size; }
  // Resolve an action name once, at load or command time; nullopt if the table has none such.
  std::optional<uint16_t> ActionIndex(std::string_view action_name) const;

  // ---- Control plane (slow path). Errors name the table and the problem; on error nothing
  // changes. Add checks the action (index, parameter count, widths) and the key: bits beyond the
  // key width are refused; LPM host bits beyond the prefix and ternary value bits outside the
  // mask are cleared (BMv2 does the same), so Dump shows the entry as matched.
  Result<EntryHandle> Add(const TableEntry& entry);
  Status Delete(EntryHandle handle);
  Status Modify(EntryHandle handle, const ActionCall& action);
  Status SetDefault(const ActionCall& action);
  const ActionCall& default_action() const { return default_action_; }
  Result<TableEntry> Get(EntryHandle handle) const;
  std::vector<std::pair<EntryHandle, TableEntry>> Dump() const;  // sorted by handle
  void Clear();  // removes every entry; keeps the default action and the counters
  uint32_t entries() const { return entries_; }
  uint64_t EntryHits(EntryHandle handle) const;  // 0 for a handle not in use
  // Checks an action call against the spec (index, parameter count, parameter widths).
  Status CheckAction(const ActionCall& action) const;

  // ---- Fast path. Counts a table hit or miss and, on a hit, the entry's hits. An empty table
  // answers its default action without hashing or walking anything (a stage a program declares
  // but the control plane leaves empty, e.g. l2l3's router_mac on a pure L2 switch, costs one
  // branch per burst).
  LookupResult Lookup(const MatchKey& key) noexcept {
    CycleScope timed(cycles_, 1);
    if (entries_ == 0) {
      ++misses_;
      return LookupResult{&default_action_, false, kNoEntry};
    }
    return DoLookup(key);
  }
  void LookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
    CycleScope timed(cycles_, n);
    if (entries_ == 0) return MissAll(out, n);
    DoLookupBatch(keys, out, n);
  }

  // An empty table's answer to n lookups, for a program that then builds no keys: n misses
  // counted and the default action returned. nullptr, and nothing counted, when the table has
  // entries (the program looks them up).
  const ActionCall* MissAllIfEmpty(uint32_t n) noexcept {
    if (entries_ != 0) return nullptr;
    CycleScope timed(cycles_, n);
    misses_ += n;
    return &default_action_;
  }

  // Where lookups add their cycles (StageProfile), or nullptr: not timed (the default).
  void SetCycleCounter(CycleCounter* counter) noexcept { cycles_ = counter; }

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  void ResetCounters();  // table and per-entry counters

  // ---- Resources, from the DECLARED size and widths (not the fill), for the stage budget.
  virtual uint64_t SramBytes() const = 0;
  virtual uint64_t TcamEntries() const = 0;

  // ---- Host memory: the bytes this emulator allocates for the table (its object included),
  // unlike the ASIC model above. Capacities, not fills: the lookup structures and records are
  // sized for the declared size at creation (pages of a reserved record array are touched as
  // entries arrive), the control plane's indexes by what they hold. Not counted: malloc's
  // per-block headers and the spec's names.
  virtual uint64_t HostBytes() const = 0;

 protected:
  explicit MatchTable(TableSpec spec);

  // Per-entry action data as stored in SRAM: the widest action's parameters, in whole bytes.
  uint64_t ActionDataBytes() const;
  // The host bytes of the handle bookkeeping kept here, for the kinds' HostBytes.
  uint64_t HandleHostBytes() const;
  // A vector's allocation, used or not.
  template <typename Vector>
  static uint64_t CapacityBytes(const Vector& v) {
    return v.capacity() * sizeof(typename Vector::value_type);
  }
  // Node-based containers as libstdc++ lays them out: a std::map node is the value after the
  // red-black links (colour and three pointers); a std::unordered_map node is the value after a
  // next pointer (no cached hash for integer keys), plus one pointer per bucket.
  template <typename Map>
  static uint64_t MapBytes(const Map& m) {
    return m.size() * (4 * sizeof(void*) + sizeof(typename Map::value_type));
  }
  template <typename Map>
  static uint64_t HashMapBytes(const Map& m) {
    return m.bucket_count() * sizeof(void*) +
           m.size() * (sizeof(void*) + sizeof(typename Map::value_type));
  }
  // The kinds' lookups, called on a table with at least one entry; the default DoLookupBatch
  // calls DoLookup for each key.
  virtual LookupResult DoLookup(const MatchKey& key) noexcept = 0;
  virtual void DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept;
  // Table kinds implement these; handles passed in are valid (or free, for Insert).
  virtual bool Contains(const TableEntry& entry) const = 0;  // same match as a live entry
  virtual void Insert(EntryHandle handle, const TableEntry& entry) = 0;
  virtual void Erase(EntryHandle handle) = 0;
  virtual void SetAction(EntryHandle handle, const ActionCall& action) = 0;
  virtual TableEntry Read(EntryHandle handle) const = 0;
  virtual uint64_t ReadHits(EntryHandle handle) const = 0;
  virtual void ClearEntries() = 0;
  virtual void ResetEntryHits() = 0;

  // The fast path's counters, bumped by the kinds' Lookup.
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  CycleCounter* cycles_ = nullptr;
  ActionCall default_action_;

 private:
  void MissAll(LookupResult* out, uint32_t n) noexcept;
  bool Live(EntryHandle handle) const { return handle < live_.size() && live_[handle] != 0; }
  Status NormalizeKey(TableEntry* entry) const;
  std::string Where() const { return "table " + spec_.name + ": "; }

  TableSpec spec_;
  unsigned key_bits_;
  uint32_t entries_ = 0;
  std::vector<uint8_t> live_;      // indexed by handle
  std::vector<EntryHandle> free_;  // min-heap of released handles below live_.size()
};

// Batched lookups prefetch in passes over the burst. That pays once a table's lookup structures
// (at its declared size) outgrow the L2 cache; below this footprint LPM and ternary tables look
// keys up one by one, which is faster there (figures in bench/pipeline/tables).
inline constexpr uint64_t kPrefetchFootprintBytes = uint64_t{2} << 20;

// Validates the spec and builds the table of its kind.
Result<std::unique_ptr<MatchTable>> MakeTable(const TableSpec& spec);

}  // namespace swemu
