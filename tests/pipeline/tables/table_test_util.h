#pragma once
// Shared fixtures for the table tests: a spec with the usual L2/L3 actions and small helpers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/tables/match_table.h"

namespace swemu::table_testing {

// Actions: 0 = drop(), 1 = fwd(port: 9 bits), 2 = set_nhop(dmac: 48 bits, port: 9 bits).
inline TableSpec MakeSpec(std::string name, MatchKind kind, std::vector<KeyField> fields,
                          uint32_t size) {
  TableSpec spec;
  spec.name = std::move(name);
  spec.kind = kind;
  spec.fields = std::move(fields);
  spec.actions = {{"drop", {}}, {"fwd", {{"port", 9}}}, {"set_nhop", {{"dmac", 48}, {"port", 9}}}};
  spec.size = size;
  spec.default_action = "drop";
  return spec;
}

inline std::unique_ptr<MatchTable> MustMake(const TableSpec& spec) {
  Result<std::unique_ptr<MatchTable>> table = MakeTable(spec);
  EXPECT_TRUE(table.ok()) << table.message();
  return table.ok() ? std::move(*table) : nullptr;
}

inline ActionCall Fwd(uint64_t port) {
  ActionCall a;
  a.action = 1;
  a.num_params = 1;
  a.params[0] = port;
  return a;
}

inline MatchKey Key(uint64_t low, uint64_t high = 0) { return MatchKey{{low, high}}; }

inline TableEntry ExactEntry(MatchKey key, uint64_t port) {
  TableEntry e;
  e.key = key;
  e.action = Fwd(port);
  return e;
}

inline TableEntry LpmEntry(uint64_t value, uint8_t len, uint64_t port) {
  TableEntry e;
  e.key = Key(value);
  e.prefix_len = len;
  e.action = Fwd(port);
  return e;
}

inline TableEntry TernaryEntry(uint64_t value, uint64_t mask, int32_t priority, uint64_t port) {
  TableEntry e;
  e.key = Key(value);
  e.mask = Key(mask);
  e.priority = priority;
  e.action = Fwd(port);
  return e;
}

inline EntryHandle MustAdd(MatchTable& table, const TableEntry& entry) {
  Result<EntryHandle> h = table.Add(entry);
  EXPECT_TRUE(h.ok()) << h.message();
  return h.ok() ? *h : kNoEntry;
}

}  // namespace swemu::table_testing
