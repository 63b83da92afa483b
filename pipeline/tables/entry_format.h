#pragma once
// The control plane's text syntax for entries, as BMv2's simple_switch_CLI writes them:
//   table_add <table> <action> <key>... => <param>... [<priority>]
// Keys: exact `VALUE`; LPM `VALUE/LEN` (a bare VALUE is the whole width: /32, /128); ternary
// `VALUE&&&MASK` (a bare VALUE means all mask bits set). Values and parameters: decimal, 0x
// hex, MAC aa:bb:cc:dd:ee:ff, IPv4 10.0.0.1, IPv6 2001:db8::1.
// Every error is one line starting "table <name>: " and naming the key or parameter at fault.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

Result<TableEntry> ParseEntry(const MatchTable& table, std::string_view action,
                              const std::vector<std::string>& keys,
                              const std::vector<std::string>& params,
                              std::optional<int32_t> priority);

// An action call for table_set_default / table_modify.
Result<ActionCall> ParseAction(const MatchTable& table, std::string_view action,
                               const std::vector<std::string>& params);

// "set_nhop 00:00:00:00:00:01 1": the action name and its parameters.
std::string FormatAction(const MatchTable& table, const ActionCall& action);

// One table_dump line, keys in the syntax ParseEntry reads:
//   "3: 10.0.0.0/24 => set_nhop 00:00:00:00:00:01 1 (hits 12)"
//   "4: 0x0a000000&&&0xff000000 priority 10 => deny (hits 0)"
std::string FormatEntry(const MatchTable& table, EntryHandle handle, const TableEntry& entry);

}  // namespace swemu
