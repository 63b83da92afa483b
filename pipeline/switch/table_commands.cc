// table_*, register_* and counter_* commands (BMv2 simple_switch_CLI syntax).
#include <algorithm>
#include <optional>
#include <string>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch.h"
#include "pipeline/switch/switch_commands.h"
#include "pipeline/tables/entry_format.h"

namespace swemu {
namespace {

Result<MatchTable*> FindTable(Switch& sw, const std::string& name) {
  MatchTable* table = sw.resources().FindTable(name);
  if (table == nullptr) return Status::Error("no table named \"" + name + "\"");
  return table;
}

Result<RegisterArray*> FindRegister(Switch& sw, const std::string& name) {
  RegisterArray* reg = sw.resources().FindRegister(name);
  if (reg == nullptr) return Status::Error("no register array named \"" + name + "\"");
  return reg;
}

const ActionSpec* FindAction(const MatchTable& table, const std::string& name) {
  for (const ActionSpec& action : table.spec().actions) {
    if (action.name == name) return &action;
  }
  return nullptr;
}

Result<EntryHandle> ParseHandle(const std::string& text) {
  Result<uint64_t> handle = ParseUint(text, 0, UINT32_MAX);
  if (!handle.ok()) return Status::Error("entry handle " + handle.message());
  return static_cast<EntryHandle>(*handle);
}

// table_add <table> <action> <key...> => <param...> [priority]
Result<std::string> TableAdd(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  const ActionSpec* action = FindAction(**table, args[1]);
  if (action == nullptr) {
    return Status::Error("table " + args[0] + " has no action \"" + args[1] + "\"");
  }
  auto arrow = std::find(args.begin() + 2, args.end(), "=>");
  std::vector<std::string> keys(args.begin() + 2, arrow);
  std::vector<std::string> params;
  if (arrow != args.end()) params.assign(arrow + 1, args.end());
  std::optional<int32_t> priority;
  if (params.size() == action->params.size() + 1) {
    Result<uint64_t> value = ParseUint(params.back(), 0, INT32_MAX);
    if (!value.ok()) return Status::Error("priority " + value.message());
    priority = static_cast<int32_t>(*value);
    params.pop_back();
  }
  Result<TableEntry> entry = ParseEntry(**table, args[1], keys, params, priority);
  if (!entry.ok()) return entry.status();
  Result<EntryHandle> handle = (*table)->Add(*entry);
  if (!handle.ok()) return handle.status();
  return "Entry has been added with handle " + std::to_string(*handle);
}

// table_modify <table> <action> <handle> => <param...>
Result<std::string> TableModify(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  Result<EntryHandle> handle = ParseHandle(args[2]);
  if (!handle.ok()) return handle.status();
  std::size_t first = args.size() > 3 && args[3] == "=>" ? 4 : 3;
  std::vector<std::string> params(args.begin() + first, args.end());
  Result<ActionCall> action = ParseAction(**table, args[1], params);
  if (!action.ok()) return action.status();
  SWEMU_RETURN_IF_ERROR((*table)->Modify(*handle, *action));
  return "Entry " + std::to_string(*handle) + " has been modified";
}

Result<std::string> TableDelete(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  Result<EntryHandle> handle = ParseHandle(args[1]);
  if (!handle.ok()) return handle.status();
  SWEMU_RETURN_IF_ERROR((*table)->Delete(*handle));
  return "Entry " + std::to_string(*handle) + " has been deleted";
}

Result<std::string> TableSetDefault(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  std::size_t first = args.size() > 2 && args[2] == "=>" ? 3 : 2;
  std::vector<std::string> params(args.begin() + first, args.end());
  Result<ActionCall> action = ParseAction(**table, args[1], params);
  if (!action.ok()) return action.status();
  SWEMU_RETURN_IF_ERROR((*table)->SetDefault(*action));
  return "Default action of " + args[0] + " set to " + args[1];
}

Result<std::string> TableDump(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  const MatchTable& t = **table;
  std::string out = "table " + t.spec().name + ": " + std::to_string(t.entries()) + "/" +
                    std::to_string(t.spec().size) + " entries, hits " + std::to_string(t.hits()) +
                    ", misses " + std::to_string(t.misses()) + "\n";
  for (const auto& [handle, entry] : t.Dump()) out += FormatEntry(t, handle, entry) + "\n";
  out += "default: " + t.spec().default_action;
  return out;
}

Result<std::string> TableClear(Switch& sw, CommandArgs args) {
  Result<MatchTable*> table = FindTable(sw, args[0]);
  if (!table.ok()) return table.status();
  (*table)->Clear();
  return "Table " + args[0] + " cleared";
}

Result<std::string> RegisterRead(Switch& sw, CommandArgs args) {
  Result<RegisterArray*> reg = FindRegister(sw, args[0]);
  if (!reg.ok()) return reg.status();
  const RegisterArray& r = **reg;
  uint32_t first = 0;
  uint32_t last = r.size() - 1;
  if (args.size() == 2) {
    Result<uint64_t> index = ParseUint(args[1], 0, r.size() - 1);
    if (!index.ok()) return Status::Error("index " + index.message());
    first = last = static_cast<uint32_t>(*index);
  }
  std::string out;
  for (uint32_t i = first; i <= last; ++i) {
    out += r.name() + "[" + std::to_string(i) + "]=";
    for (uint16_t lane = 0; lane < r.lanes(); ++lane) {
      out += (lane == 0 ? "" : ",") + std::to_string(*r.Read(i, lane));
    }
    if (i != last) out += '\n';
  }
  return out;
}

// register_write <name> <index> <value> [lane]
Result<std::string> RegisterWrite(Switch& sw, CommandArgs args) {
  Result<RegisterArray*> reg = FindRegister(sw, args[0]);
  if (!reg.ok()) return reg.status();
  Result<uint64_t> index = ParseUint(args[1], 0, (*reg)->size() - 1);
  if (!index.ok()) return Status::Error("index " + index.message());
  Result<uint64_t> value = ParseUint(args[2]);
  if (!value.ok()) return Status::Error("value " + value.message());
  uint64_t lane = 0;
  if (args.size() == 4) {
    Result<uint64_t> parsed = ParseUint(args[3], 0, (*reg)->lanes() - 1);
    if (!parsed.ok()) return Status::Error("lane " + parsed.message());
    lane = *parsed;
  }
  SWEMU_RETURN_IF_ERROR(
      (*reg)->Write(static_cast<uint32_t>(*index), *value, static_cast<uint16_t>(lane)));
  return std::string();
}

Result<std::string> RegisterReset(Switch& sw, CommandArgs args) {
  Result<RegisterArray*> reg = FindRegister(sw, args[0]);
  if (!reg.ok()) return reg.status();
  (*reg)->Reset();
  return std::string();
}

// counter_read <name> [index]: a table (index = entry handle), port_rx/port_tx (index = port),
// queue (index = port:queue) or drop (index = reason name).
Result<std::string> CounterRead(Switch& sw, CommandArgs args) {
  const std::string& name = args[0];
  const std::string index = args.size() > 1 ? args[1] : "";
  if (name == "port_rx" || name == "port_tx") {
    if (index.empty()) return Status::Error(name + " needs a port index");
    Result<std::vector<uint16_t>> ports = ParsePorts(sw, index);
    if (!ports.ok()) return ports.status();
    const PortCounters& c = sw.counters().ports[ports->front()];
    bool rx = name == "port_rx";
    return name + "[" + index + "]= (" + std::to_string(rx ? c.rx_bytes : c.tx_bytes) + " bytes, " +
           std::to_string(rx ? c.rx_packets : c.tx_packets) + " packets)";
  }
  if (name == "queue") {
    std::size_t colon = index.find(':');
    if (colon == std::string::npos) return Status::Error("queue index must be PORT:QUEUE");
    Result<std::vector<uint16_t>> ports = ParsePorts(sw, index.substr(0, colon));
    if (!ports.ok()) return ports.status();
    Result<std::vector<int>> queues = ParseQueues(index.substr(colon + 1));
    if (!queues.ok()) return queues.status();
    const QueueCounters& q = sw.tm().queue_counters(ports->front(), queues->front());
    return "queue[" + index + "]= enqueued " + std::to_string(q.enqueued) + ", dequeued " +
           std::to_string(q.dequeued) + ", marked " + std::to_string(q.marked) + ", dropped " +
           std::to_string(q.dropped) + ", max depth " + std::to_string(q.max_depth_pkts) + " pkts";
  }
  if (name == "drop") {
    for (std::size_t i = 1; i < kDropReasonCount; ++i) {
      auto reason = static_cast<DropReason>(i);
      if (DropReasonName(reason) == index) {
        return "drop[" + index + "]= " + std::to_string(sw.Drops(reason)) + " packets";
      }
    }
    return Status::Error("unknown drop reason \"" + index + "\"");
  }
  Result<MatchTable*> table = FindTable(sw, name);
  if (!table.ok()) {
    return Status::Error("no counter named \"" + name +
                         "\" (a table, port_rx, port_tx, queue or drop)");
  }
  if (index.empty()) {
    return name + "= hits " + std::to_string((*table)->hits()) + ", misses " +
           std::to_string((*table)->misses());
  }
  Result<EntryHandle> handle = ParseHandle(index);
  if (!handle.ok()) return handle.status();
  for (const auto& [h, entry] : (*table)->Dump()) {
    if (h == *handle) {
      return name + "[" + index + "]= " + std::to_string((*table)->EntryHits(h)) + " packets";
    }
  }
  return Status::Error("table " + name + " has no entry with handle " + index);
}

}  // namespace

Status AddTableCommands(Switch& sw, CommandTable& c) {
  constexpr std::size_t kAny = CommandTable::kUnbounded;
  auto bind = [&sw](Result<std::string> (*fn)(Switch&, CommandArgs)) {
    return [&sw, fn](CommandArgs args) { return fn(sw, args); };
  };
  SWEMU_RETURN_IF_ERROR(c.Add({"table_add", "<table> <action> <key...> => <param...> [priority]",
                               "add a match entry; prints its handle", 2, kAny, bind(TableAdd)}));
  SWEMU_RETURN_IF_ERROR(c.Add({"table_modify", "<table> <action> <handle> => <param...>",
                               "change the action of an entry", 3, kAny, bind(TableModify)}));
  SWEMU_RETURN_IF_ERROR(
      c.Add({"table_delete", "<table> <handle>", "delete an entry", 2, 2, bind(TableDelete)}));
  SWEMU_RETURN_IF_ERROR(c.Add({"table_set_default", "<table> <action> [=>] <param...>",
                               "set the action taken on a miss", 2, kAny, bind(TableSetDefault)}));
  SWEMU_RETURN_IF_ERROR(c.Add(
      {"table_dump", "<table>", "list every entry with its hit count", 1, 1, bind(TableDump)}));
  SWEMU_RETURN_IF_ERROR(
      c.Add({"table_clear", "<table>", "delete every entry", 1, 1, bind(TableClear)}));
  SWEMU_RETURN_IF_ERROR(
      c.Add({"register_read", "<register> [index]", "read one cell (all lanes) or the whole array",
             1, 2, bind(RegisterRead)}));
  SWEMU_RETURN_IF_ERROR(c.Add({"register_write", "<register> <index> <value> [lane]",
                               "write one cell", 3, 4, bind(RegisterWrite)}));
  SWEMU_RETURN_IF_ERROR(
      c.Add({"register_reset", "<register>", "zero every cell", 1, 1, bind(RegisterReset)}));
  SWEMU_RETURN_IF_ERROR(c.Add({"counter_read", "<table|port_rx|port_tx|queue|drop> [index]",
                               "read a counter", 1, 2, bind(CounterRead)}));
  return c.Add(
      {"counter_reset", "", "zero every counter", 0, 0, [&sw](CommandArgs) -> Result<std::string> {
         sw.ResetCounters();
         return std::string();
       }});
}

}  // namespace swemu
