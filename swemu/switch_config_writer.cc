#include "swemu/switch_config_writer.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "swemu/switch_config_interfaces.h"

namespace swemu {
namespace {

using Lines = std::vector<std::pair<std::string, std::string>>;  // key, value of one section

// What LoadSwitchConfig starts from before it reads a file.
LoadedSwitchConfig Defaults() {
  LoadedSwitchConfig defaults;
  defaults.config.tm.port_rate_bps = kDefaultPortRateBps;
  return defaults;
}

// Exact spellings that ParseRate, ParseBytes, ParseDuration and ParseProbability read back.
std::string Rate(uint64_t bps) { return bps == 0 ? "0" : FormatRate(bps); }
std::string Size(uint64_t bytes) { return FormatBytes(bytes); }
std::string Bool(bool value) { return value ? "true" : "false"; }

std::string Duration(uint64_t ns) {
  if (ns != 0 && ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns != 0 && ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

// The shortest fixed-point decimal that reads back as `p` (ParseProbability takes no exponent).
std::string Probability(double p) {
  char text[400];
  auto [end, ec] = std::to_chars(text, text + sizeof(text), p, std::chars_format::fixed);
  return ec == std::errc() ? std::string(text, end) : "0";
}

template <typename T>
void AddIf(Lines& lines, const T& value, const T& fallback, std::string key, std::string text) {
  if (value != fallback) lines.emplace_back(std::move(key), std::move(text));
}

void AddSection(std::string& out, const std::string& name, const Lines& lines) {
  if (lines.empty()) return;
  if (!out.empty()) out += '\n';
  out += "[" + name + "]\n";
  for (const auto& line : lines) {
    out += line.first + (line.second.empty() ? " =\n" : " = " + line.second + "\n");
  }
}

std::filesystem::path AbsolutePath(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

// The startup script as `cli` says it: absolute, or relative to format.cli_relative_to (absolute
// still when no relative path leads there, as to another drive).
std::string CliPath(const std::string& script, const SwitchConfigFormat& format) {
  const std::filesystem::path absolute = AbsolutePath(script);
  if (format.cli_relative_to.empty()) return absolute.string();
  const std::filesystem::path relative =
      absolute.lexically_relative(AbsolutePath(format.cli_relative_to));
  return relative.empty() ? absolute.string() : relative.string();
}

Lines SwitchLines(const LoadedSwitchConfig& in, const SwitchConfig& d,
                  const SwitchConfigFormat& format) {
  const SwitchConfig& c = in.config;
  Lines lines = {{"name", c.name}, {"ports", std::to_string(c.num_ports)}, {"program", c.program}};
  if (!in.startup_script.empty()) lines.emplace_back("cli", CliPath(in.startup_script, format));
  AddIf(lines, c.seed, d.seed, "seed", std::to_string(c.seed));
  AddIf(lines, c.pipeline.ingress_stages, d.pipeline.ingress_stages, "ingress_stages",
        std::to_string(c.pipeline.ingress_stages));
  AddIf(lines, c.pipeline.egress_stages, d.pipeline.egress_stages, "egress_stages",
        std::to_string(c.pipeline.egress_stages));
  AddIf(lines, c.parser.parse_depth, d.parser.parse_depth, "parse_depth",
        std::to_string(c.parser.parse_depth));
  AddIf(lines, c.pipeline.max_recirculations, d.pipeline.max_recirculations, "max_recirculations",
        std::to_string(c.pipeline.max_recirculations));
  AddIf(lines, c.parser.verify_ipv4_checksum, d.parser.verify_ipv4_checksum, "verify_ipv4_checksum",
        Bool(c.parser.verify_ipv4_checksum));
  AddIf(lines, c.deparser.zero_udp_checksum, d.deparser.zero_udp_checksum, "zero_udp_checksum",
        Bool(c.deparser.zero_udp_checksum));
  AddIf(lines, c.cpu.queue_packets, d.cpu.queue_packets, "cpu_queue",
        std::to_string(c.cpu.queue_packets));
  AddIf(lines, c.cpu.latency_ns, d.cpu.latency_ns, "cpu_latency", Duration(c.cpu.latency_ns));
  return lines;
}

Lines BudgetLines(const StageBudget& c, const StageBudget& d) {
  Lines lines;
  AddIf(lines, c.sram_bytes, d.sram_bytes, "sram", Size(c.sram_bytes));
  AddIf(lines, c.tcam_entries, d.tcam_entries, "tcam", std::to_string(c.tcam_entries));
  AddIf(lines, c.tables, d.tables, "tables", std::to_string(c.tables));
  AddIf(lines, c.stateful_alus, d.stateful_alus, "alus", std::to_string(c.stateful_alus));
  return lines;
}

// port_rate is always written: the link rate is what a reader of a switch's file looks for.
Lines TmLines(const TmConfig& c, const TmConfig& d) {
  Lines lines = {{"port_rate", Rate(c.port_rate_bps)}};
  AddIf(lines, c.shared_buffer_bytes, d.shared_buffer_bytes, "shared_buffer",
        Size(c.shared_buffer_bytes));
  AddIf(lines, c.port_buffer_bytes, d.port_buffer_bytes, "port_buffer", Size(c.port_buffer_bytes));
  AddIf(lines, c.wire_overhead_bytes, d.wire_overhead_bytes, "wire_overhead",
        std::to_string(c.wire_overhead_bytes));
  AddIf(lines, c.scheduler, d.scheduler, "scheduler",
        std::string(c.scheduler == SchedulerKind::kWeighted ? "weighted" : "strict"));
  AddIf(lines, c.pushout, d.pushout, "pushout", Bool(c.pushout));
  AddIf(lines, c.queue.depth_pkts, d.queue.depth_pkts, "queue_depth",
        std::to_string(c.queue.depth_pkts));
  AddIf(lines, c.queue.ecn_threshold_bytes, d.queue.ecn_threshold_bytes, "ecn_threshold",
        Size(c.queue.ecn_threshold_bytes));
  AddIf(lines, c.queue.drop_threshold_bytes, d.queue.drop_threshold_bytes, "drop_threshold",
        Size(c.queue.drop_threshold_bytes));
  AddIf(lines, c.queue.alpha, d.queue.alpha, "alpha", FormatAlpha(c.queue.alpha));
  AddIf(lines, c.queue.guaranteed_min_bytes, d.queue.guaranteed_min_bytes, "guaranteed_min",
        Size(c.queue.guaranteed_min_bytes));
  AddIf(lines, c.quantum_bytes, d.quantum_bytes, "quantum", Size(c.quantum_bytes));
  return lines;
}

Lines DpdkLines(const LoadedSwitchConfig& c, const LoadedSwitchConfig& d) {
  Lines lines;
  AddIf(lines, c.mbufs, d.mbufs, "mbufs", std::to_string(c.mbufs));
  AddIf(lines, c.mbuf_cache, d.mbuf_cache, "mbuf_cache", std::to_string(c.mbuf_cache));
  AddIf(lines, c.workers, d.workers, "workers", std::to_string(c.workers));
  AddIf(lines, c.cut_through, d.cut_through, "cut_through", Bool(c.cut_through));
  return lines;
}

// A port's queue_depth, ecn_threshold, drop_threshold, loss and delay: the keys kept by port (in
// the port's first section). loss is written when delay is not, so that a port_effects entry
// always reads back.
void AddPortKeys(Lines& lines, const LoadedSwitchConfig& c, PortId port) {
  auto queues = c.config.tm.port_queues.find(port);
  if (queues != c.config.tm.port_queues.end()) {
    const PortQueueOverrides& q = queues->second;
    if (q.depth_pkts) lines.emplace_back("queue_depth", std::to_string(*q.depth_pkts));
    if (q.ecn_threshold_bytes) lines.emplace_back("ecn_threshold", Size(*q.ecn_threshold_bytes));
    if (q.drop_threshold_bytes) lines.emplace_back("drop_threshold", Size(*q.drop_threshold_bytes));
    if (q.alpha) lines.emplace_back("alpha", FormatAlpha(*q.alpha));
    if (q.guaranteed_min_bytes) {
      lines.emplace_back("guaranteed_min", Size(*q.guaranteed_min_bytes));
    }
  }
  auto it = c.port_effects.find(port);
  if (it == c.port_effects.end()) return;
  const PortWireEffects& e = it->second;
  if (e.loss != 0 || e.delay_ns == 0) lines.emplace_back("loss", Probability(e.loss));
  if (e.delay_ns != 0) lines.emplace_back("delay", Duration(e.delay_ns));
}

// One [port.N] per port when tm.port_rates and port_devargs both go up by port, as in every file
// people write; otherwise a port may get two sections, so that each list keeps its order.
void AddPortSections(std::string& out, const LoadedSwitchConfig& c) {
  const auto& rates = c.config.tm.port_rates;
  const auto& devargs = c.port_devargs;
  std::set<PortId> done;
  std::size_t r = 0;
  std::size_t d = 0;
  while (r < rates.size() || d < devargs.size()) {
    const bool take_rate =
        d == devargs.size() || (r < rates.size() && rates[r].port <= devargs[d].first);
    const PortId port = take_rate ? rates[r].port : devargs[d].first;
    Lines lines;
    if (r < rates.size() && rates[r].port == port) lines.emplace_back("rate", Rate(rates[r++].bps));
    if (d < devargs.size() && devargs[d].first == port)
      lines.emplace_back("devargs", devargs[d++].second);
    if (done.insert(port).second) AddPortKeys(lines, c, port);
    AddSection(out, "port." + std::to_string(port), lines);
  }
  std::set<PortId> rest;
  for (const auto& queues : c.config.tm.port_queues) rest.insert(queues.first);
  for (const auto& effects : c.port_effects) rest.insert(effects.first);
  for (PortId port : rest) {
    if (!done.insert(port).second) continue;
    Lines lines;
    AddPortKeys(lines, c, port);
    AddSection(out, "port." + std::to_string(port), lines);
  }
}

// A value the INI syntax gives back unchanged: '#' starts a comment, a line ends the entry,
// and the reader trims blanks at both ends.
Status CheckValue(const std::string& key, const std::string& value, bool may_be_empty) {
  if (value.empty())
    return may_be_empty ? Status::Ok() : Status::Error(key + ": must not be empty");
  if (value.find_first_of("#\n\r") != std::string::npos) {
    return Status::Error(key + ": \"" + value + "\" holds a '#' or a line break");
  }
  if (std::isspace(static_cast<unsigned char>(value.front())) ||
      std::isspace(static_cast<unsigned char>(value.back()))) {
    return Status::Error(key + ": \"" + value + "\" begins or ends with a blank");
  }
  return Status::Ok();
}

// A [program] key the reader splits off unchanged: no '=', '[', ']' or blank either.
Status CheckProgramKey(const std::string& key) {
  SWEMU_RETURN_IF_ERROR(CheckValue("program key", key, false));
  if (key.find_first_of("=[] \t") != std::string::npos) {
    return Status::Error("program." + key + ": not a key an INI file can hold");
  }
  return Status::Ok();
}

// Every [port.N] names a port of the switch.
Status CheckPorts(const LoadedSwitchConfig& c) {
  std::set<PortId> ports;
  for (const PortRate& rate : c.config.tm.port_rates) ports.insert(rate.port);
  for (const auto& devargs : c.port_devargs) ports.insert(devargs.first);
  for (const auto& effects : c.port_effects) ports.insert(effects.first);
  for (const auto& [port, queues] : c.config.tm.port_queues) {
    ports.insert(port);
    if (queues == PortQueueOverrides{}) {  // a file can only say what a port's queues differ in
      return Status::Error("port." + std::to_string(port) + ": a port_queues entry that sets nothing");
    }
  }
  if (!ports.empty() && *ports.rbegin() >= c.config.num_ports) {
    return Status::Error("port." + std::to_string(*ports.rbegin()) +
                         ": port out of range (switch.ports is " +
                         std::to_string(c.config.num_ports) + ")");
  }
  return Status::Ok();
}

// Every line of the header is a comment, ended by '\n'.
Status CheckHeader(const std::string& header) {
  for (std::size_t at = 0; at < header.size();) {
    const std::size_t end = header.find('\n', at);
    if (header[at] != '#' || end == std::string::npos || header.find('\r', at) < end) {
      return Status::Error("header: every line must begin with '#' and end with a line break");
    }
    at = end + 1;
  }
  return Status::Ok();
}

// Whatever LoadSwitchConfig would refuse, or read back differently, is not written.
Status CheckWritable(const LoadedSwitchConfig& c, const SwitchConfigFormat& format) {
  SWEMU_RETURN_IF_ERROR(CheckHeader(format.header));
  SWEMU_RETURN_IF_ERROR(CheckValue("switch.name", c.config.name, false));
  SWEMU_RETURN_IF_ERROR(CheckValue("switch.program", c.config.program, false));
  SWEMU_RETURN_IF_ERROR(CheckValue("switch.cli", c.startup_script, true));
  SWEMU_RETURN_IF_ERROR(CheckValue("eal.args", c.eal_args, true));
  for (const auto& [key, value] : c.config.program_options.values()) {
    SWEMU_RETURN_IF_ERROR(CheckProgramKey(key));
    SWEMU_RETURN_IF_ERROR(CheckValue("program." + key, value, true));
  }
  for (const auto& [port, devargs] : c.port_devargs) {
    SWEMU_RETURN_IF_ERROR(CheckValue("port." + std::to_string(port) + ".devargs", devargs, false));
  }
  SWEMU_RETURN_IF_ERROR(CheckPorts(c));
  return c.config.Validate();
}

}  // namespace

std::string FormatSwitchConfig(const LoadedSwitchConfig& config,
                               const SwitchConfigFormat& format) {
  const LoadedSwitchConfig defaults = Defaults();
  const SwitchConfig& c = config.config;
  const SwitchConfig& d = defaults.config;
  std::string out;
  AddSection(out, "switch", SwitchLines(config, d, format));
  Lines program;
  for (const std::string& key : c.program_options.order()) {
    program.emplace_back(key, c.program_options.values().at(key));
  }
  AddSection(out, "program", program);
  AddSection(out, "budget", BudgetLines(c.pipeline.budget, d.pipeline.budget));
  AddSection(out, "tm", TmLines(c.tm, d.tm));
  if (!config.eal_args.empty()) AddSection(out, "eal", {{"args", config.eal_args}});
  AddSection(out, "dpdk", DpdkLines(config, defaults));
  AddPortSections(out, config);
  for (const RouterInterface& rif : c.interfaces) {
    AddSection(out, "interface." + std::to_string(rif.id), InterfaceLines(rif));
  }
  return format.header + out;
}

Status WriteSwitchConfig(const LoadedSwitchConfig& config, const std::string& path,
                         const SwitchConfigFormat& format) {
  Status writable = CheckWritable(config, format);
  if (!writable.ok()) return Status::Error("cannot write " + path + ": " + writable.message());
  return WriteTextFile(path, FormatSwitchConfig(config, format));
}

}  // namespace swemu
