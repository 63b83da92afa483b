// `show ...` commands: human-readable views of counters, queues and resources.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch.h"
#include "pipeline/switch/switch_commands.h"

namespace swemu {
namespace {

std::string ShowPorts(const Switch& sw) {
  std::string out = "port   rx_packets     rx_bytes   tx_packets     tx_bytes  rate\n";
  for (uint16_t p = 0; p < sw.num_ports(); ++p) {
    const PortCounters& c = sw.counters().ports[p];
    char line[160];
    std::snprintf(
        line, sizeof(line), "%4u %12llu %12llu %12llu %12llu  %s\n", p,
        static_cast<unsigned long long>(c.rx_packets), static_cast<unsigned long long>(c.rx_bytes),
        static_cast<unsigned long long>(c.tx_packets), static_cast<unsigned long long>(c.tx_bytes),
        FormatRate(sw.tm().PortRate(p)).c_str());
    out += line;
  }
  return out;
}

std::string ShowDrops(const Switch& sw) {
  std::string out;
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    auto reason = static_cast<DropReason>(i);
    uint64_t count = sw.Drops(reason);
    if (count != 0) {
      out += "  " + std::string(DropReasonName(reason)) + " " + std::to_string(count) + "\n";
    }
  }
  return out.empty() ? "  (no drops)\n" : out;
}

std::string ShowStats(const Switch& sw) {
  const ProgramCounters& pc = sw.counters().program;
  std::string out = "switch " + sw.name() + " program " + sw.config().program + "\n";
  out += ShowPorts(sw);
  out += "program: ingress " + std::to_string(pc.ingress_packets) + ", egress " +
         std::to_string(pc.egress_packets) + ", to_tm " + std::to_string(pc.to_tm) + ", consumed " +
         std::to_string(pc.consumed) + ", recirculated " + std::to_string(pc.recirculated) +
         ", multicast copies " + std::to_string(sw.MulticastCopies()) + ", queued " +
         std::to_string(sw.tm().TotalQueued()) + "\n";
  out += "drops (" + std::to_string(sw.TotalDrops()) + "):\n" + ShowDrops(sw);
  return out;
}

std::string ShowTables(Switch& sw) {
  std::string out;
  for (const MatchTable* t : sw.resources().Tables()) {
    out += t->spec().name + ": " + std::to_string(t->entries()) + "/" +
           std::to_string(t->spec().size) + " entries, hits " + std::to_string(t->hits()) +
           ", misses " + std::to_string(t->misses()) + "\n";
  }
  return out;
}

const char* KindName(MatchKind kind) {
  switch (kind) {
    case MatchKind::kExact:
      return "exact";
    case MatchKind::kLpm:
      return "lpm";
    case MatchKind::kTernary:
      return "ternary";
  }
  return "?";
}

// "12.3 MiB (12897280 B)": readable, and exact for scripts and sums; below 1 KiB just "512 B".
std::string HostBytesText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[64];
  const auto exact = static_cast<unsigned long long>(bytes);
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%llu B", exact);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s (%llu B)", value, kUnits[unit], exact);
  }
  return text;
}

// Columns padded to a width; a longer name or shape just pushes the rest right.
std::string HostLine(std::string what, std::string name, std::string shape, uint64_t bytes) {
  what.resize(std::max<std::size_t>(what.size(), 8), ' ');
  name.resize(std::max<std::size_t>(name.size(), 20), ' ');
  shape.resize(std::max<std::size_t>(shape.size(), 36), ' ');
  return "  " + what + " " + name + " " + shape + " " + HostBytesText(bytes) + "\n";
}

// Appended to the stage report: what the emulator itself allocates on the host for each table,
// register array and the TM at their configured sizes (the stage report models the ASIC).
std::string ShowHostMemory(Switch& sw) {
  std::string out = "host memory (allocated by swemu at the configured sizes):\n";
  uint64_t total = 0;
  for (const MatchTable* t : sw.resources().Tables()) {
    const std::string shape = std::string(KindName(t->kind())) + ", " +
                              std::to_string(t->entries()) + "/" + std::to_string(t->size()) +
                              " entries";
    out += HostLine("table", t->name(), shape, t->HostBytes());
    total += t->HostBytes();
  }
  for (const RegisterArray* r : sw.resources().Registers()) {
    const std::string shape = std::to_string(r->size()) + " x " + std::to_string(r->lanes()) +
                              " lanes x " + std::to_string(r->storage_bytes()) + " B";
    out += HostLine("register", r->name(), shape, r->HostBytes());
    total += r->HostBytes();
  }
  const TrafficManager& tm = sw.tm();
  const std::string shape = std::to_string(tm.num_ports()) + " ports x " +
                            std::to_string(kQueuesPerPort) + " queues, " +
                            std::to_string(tm.RingSlots()) + " ring slots";
  out += HostLine("tm", "queues", shape, tm.HostBytes());
  total += tm.HostBytes();
  out += HostLine("total", "", "", total);
  return out;
}

}  // namespace

Status AddShowCommands(Switch& sw, CommandTable& c) {
  auto add = [&c](const char* name, const char* help, auto fn) {
    return c.Add({name, "", help, 0, 0, [fn](CommandArgs) -> Result<std::string> { return fn(); }});
  };
  SWEMU_RETURN_IF_ERROR(add("show stats", "ports, program counters and drops by reason",
                            [&sw] { return ShowStats(sw); }));
  SWEMU_RETURN_IF_ERROR(add("show ports", "per-port rx/tx packets and bytes, shaping rate",
                            [&sw] { return ShowPorts(sw); }));
  SWEMU_RETURN_IF_ERROR(add("show queues", "per-queue depth, thresholds and counters",
                            [&sw] { return sw.tm().DescribeQueues(); }));
  SWEMU_RETURN_IF_ERROR(add("show drops", "drops by reason", [&sw] { return ShowDrops(sw); }));
  SWEMU_RETURN_IF_ERROR(add("show tables", "every table with fill and hit counters",
                            [&sw] { return ShowTables(sw); }));
  SWEMU_RETURN_IF_ERROR(add("show resources",
                            "the program's stage resource report, then host memory per table, "
                            "register array and the TM",
                            [&sw] { return sw.resource_report().Format() + ShowHostMemory(sw); }));
  return add("show counters", "every counter as JSON", [&sw] { return sw.CountersJson(); });
}

}  // namespace swemu
