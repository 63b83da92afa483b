#include "pipeline/tables/match_table.h"

#include <algorithm>
#include <functional>

#include "pipeline/tables/exact_table.h"
#include "pipeline/tables/lpm_table.h"
#include "pipeline/tables/lpm_wide_table.h"
#include "pipeline/tables/ternary_table.h"

namespace swemu {

MatchTable::MatchTable(TableSpec spec) : spec_(std::move(spec)), key_bits_(KeyBits(spec_)) {
  // ValidateSpec (run by MakeTable) guarantees the default action exists.
  default_action_.action = *ActionIndex(spec_.default_action);
  default_action_.num_params = static_cast<uint8_t>(spec_.default_params.size());
  std::copy(spec_.default_params.begin(), spec_.default_params.end(), default_action_.params);
}

std::optional<uint16_t> MatchTable::ActionIndex(std::string_view action_name) const {
  for (std::size_t i = 0; i < spec_.actions.size(); ++i) {
    if (spec_.actions[i].name == action_name) return static_cast<uint16_t>(i);
  }
  return std::nullopt;
}

Status MatchTable::CheckAction(const ActionCall& action) const {
  if (action.action >= spec_.actions.size()) {
    return Status::Error(Where() + "action index " + std::to_string(action.action) +
                         " out of range (" + std::to_string(spec_.actions.size()) + " actions)");
  }
  const ActionSpec& a = spec_.actions[action.action];
  if (action.num_params != a.params.size()) {
    return Status::Error(Where() + "action " + a.name + " expects " +
                         std::to_string(a.params.size()) + " parameters, got " +
                         std::to_string(action.num_params));
  }
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    unsigned bits = a.params[i].bits;
    if (bits < 64 && (action.params[i] >> bits) != 0) {
      return Status::Error(Where() + "parameter " + a.params[i].name + ": " +
                           std::to_string(action.params[i]) + " does not fit in " +
                           std::to_string(bits) + " bits");
    }
    if (a.params[i].below != 0 && action.params[i] >= a.params[i].below) {
      return Status::Error(Where() + "parameter " + a.params[i].name + ": " +
                           std::to_string(action.params[i]) + " is not below " +
                           std::to_string(a.params[i].below) + " (the switch's ports are 0.." +
                           std::to_string(a.params[i].below - 1) + ")");
    }
  }
  return Status::Ok();
}

Status MatchTable::NormalizeKey(TableEntry* entry) const {
  const MatchKey width = LowBitsMask(key_bits_);
  if (!IsZero(entry->key & ~width)) {
    return Status::Error(Where() + "key has bits beyond the declared " + std::to_string(key_bits_) +
                         "-bit width");
  }
  switch (spec_.kind) {
    case MatchKind::kExact:
      entry->mask = width;
      entry->prefix_len = 0;
      entry->priority = 0;
      break;
    case MatchKind::kLpm:
      if (entry->prefix_len > key_bits_) {
        return Status::Error(Where() + "prefix length " + std::to_string(entry->prefix_len) +
                             " exceeds the " + std::to_string(key_bits_) + "-bit key");
      }
      entry->mask = width & ~LowBitsMask(key_bits_ - entry->prefix_len);
      entry->key = entry->key & entry->mask;
      entry->priority = 0;
      break;
    case MatchKind::kTernary:
      if (!IsZero(entry->mask & ~width)) {
        return Status::Error(Where() + "mask has bits beyond the declared " +
                             std::to_string(key_bits_) + "-bit width");
      }
      entry->key = entry->key & entry->mask;
      entry->prefix_len = 0;
      break;
  }
  return Status::Ok();
}

Result<EntryHandle> MatchTable::Add(const TableEntry& entry) {
  TableEntry e = entry;
  SWEMU_RETURN_IF_ERROR(CheckAction(e.action));
  std::fill(e.action.params + e.action.num_params, e.action.params + kMaxActionParams, 0);
  SWEMU_RETURN_IF_ERROR(NormalizeKey(&e));
  if (Contains(e)) return Status::Error(Where() + "duplicate key");
  if (entries_ >= spec_.size) {
    return Status::Error("table " + spec_.name + " is full (" + std::to_string(spec_.size) +
                         " entries)");
  }
  EntryHandle handle;
  if (!free_.empty()) {
    std::pop_heap(free_.begin(), free_.end(), std::greater<>());
    handle = free_.back();
    free_.pop_back();
  } else {
    handle = static_cast<EntryHandle>(live_.size());
    live_.push_back(0);
  }
  Insert(handle, e);
  live_[handle] = 1;
  ++entries_;
  return handle;
}

Status MatchTable::Delete(EntryHandle handle) {
  if (!Live(handle)) {
    return Status::Error(Where() + "no entry with handle " + std::to_string(handle));
  }
  Erase(handle);
  live_[handle] = 0;
  free_.push_back(handle);
  std::push_heap(free_.begin(), free_.end(), std::greater<>());
  --entries_;
  return Status::Ok();
}

Status MatchTable::Modify(EntryHandle handle, const ActionCall& action) {
  if (!Live(handle)) {
    return Status::Error(Where() + "no entry with handle " + std::to_string(handle));
  }
  SWEMU_RETURN_IF_ERROR(CheckAction(action));
  ActionCall a = action;
  std::fill(a.params + a.num_params, a.params + kMaxActionParams, 0);
  SetAction(handle, a);
  return Status::Ok();
}

Status MatchTable::SetDefault(const ActionCall& action) {
  SWEMU_RETURN_IF_ERROR(CheckAction(action));
  default_action_ = action;
  std::fill(default_action_.params + action.num_params, default_action_.params + kMaxActionParams,
            0);
  return Status::Ok();
}

Result<TableEntry> MatchTable::Get(EntryHandle handle) const {
  if (!Live(handle)) {
    return Status::Error(Where() + "no entry with handle " + std::to_string(handle));
  }
  return Read(handle);
}

std::vector<std::pair<EntryHandle, TableEntry>> MatchTable::Dump() const {
  std::vector<std::pair<EntryHandle, TableEntry>> out;
  out.reserve(entries_);
  for (EntryHandle h = 0; h < live_.size(); ++h) {
    if (live_[h] != 0) out.emplace_back(h, Read(h));
  }
  return out;
}

void MatchTable::Clear() {
  ClearEntries();
  live_.clear();
  free_.clear();
  entries_ = 0;
}

uint64_t MatchTable::EntryHits(EntryHandle handle) const {
  return Live(handle) ? ReadHits(handle) : 0;
}

void MatchTable::DoLookupBatch(const MatchKey* keys, LookupResult* out, uint32_t n) noexcept {
  for (uint32_t i = 0; i < n; ++i) out[i] = DoLookup(keys[i]);
}

void MatchTable::MissAll(LookupResult* out, uint32_t n) noexcept {
  misses_ += n;
  std::fill_n(out, n, LookupResult{&default_action_, false, kNoEntry});
}

void MatchTable::ResetCounters() {
  hits_ = 0;
  misses_ = 0;
  ResetEntryHits();
}

uint64_t MatchTable::ActionDataBytes() const {
  unsigned widest = 0;
  for (const ActionSpec& action : spec_.actions) {
    unsigned bits = 0;
    for (const ActionParam& param : action.params) bits += param.bits;
    widest = std::max(widest, bits);
  }
  return (widest + 7) / 8;
}

uint64_t MatchTable::HandleHostBytes() const { return CapacityBytes(live_) + CapacityBytes(free_); }

Result<std::unique_ptr<MatchTable>> MakeTable(const TableSpec& spec) {
  SWEMU_RETURN_IF_ERROR(ValidateSpec(spec));
  std::unique_ptr<MatchTable> table;
  switch (spec.kind) {
    case MatchKind::kExact:
      table = std::make_unique<ExactTable>(spec);
      break;
    case MatchKind::kLpm:
      if (KeyBits(spec) <= kMaxTrieLpmKeyBits) {
        table = std::make_unique<LpmTable>(spec);
      } else {
        table = std::make_unique<WideLpmTable>(spec);
      }
      break;
    case MatchKind::kTernary:
      table = std::make_unique<TernaryTable>(spec);
      break;
  }
  return table;
}

}  // namespace swemu
