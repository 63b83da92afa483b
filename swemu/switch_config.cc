#include "swemu/switch_config.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "pipeline/control/units.h"
#include "pipeline/core/text_file.h"
#include "swemu/ini_file.h"
#include "swemu/switch_config_interfaces.h"

namespace swemu {
namespace {

using Setter = std::function<Status(const std::string& value, LoadedSwitchConfig& out)>;

// Each setter parses with units.h, range-checks, then stores into the config.
Setter UintKey(uint64_t min, uint64_t max, std::function<void(uint64_t, SwitchConfig&)> store) {
  return [=](const std::string& value, LoadedSwitchConfig& out) -> Status {
    Result<uint64_t> parsed = ParseUint(value, min, max);
    if (!parsed.ok()) return parsed.status();
    store(*parsed, out.config);
    return Status::Ok();
  };
}

Setter BytesKey(uint64_t min, uint64_t max, std::function<void(uint64_t, SwitchConfig&)> store) {
  return [=](const std::string& value, LoadedSwitchConfig& out) -> Status {
    Result<uint64_t> parsed = ParseBytes(value);
    if (!parsed.ok()) return parsed.status();
    if (*parsed < min || *parsed > max) {
      return Status::Error("\"" + value + "\" is out of range [" + std::to_string(min) + ", " +
                           std::to_string(max) + "] bytes");
    }
    store(*parsed, out.config);
    return Status::Ok();
  };
}

// A dynamic-threshold alpha as ParseAlpha reads it (1/8, 2^-3, 0.125, 0 or off).
Setter AlphaKey(std::function<void(double, SwitchConfig&)> store) {
  return [=](const std::string& value, LoadedSwitchConfig& out) -> Status {
    Result<double> parsed = ParseAlpha(value);
    if (!parsed.ok()) return parsed.status();
    store(*parsed, out.config);
    return Status::Ok();
  };
}

Setter BoolKey(std::function<void(bool, SwitchConfig&)> store) {
  return [=](const std::string& value, LoadedSwitchConfig& out) -> Status {
    Result<bool> parsed = ParseBool(value);
    if (!parsed.ok()) return parsed.status();
    store(*parsed, out.config);
    return Status::Ok();
  };
}

Status SetRate(const std::string& value, uint64_t* bps) {
  Result<uint64_t> parsed = ParseRate(value);
  if (!parsed.ok()) return parsed.status();
  SWEMU_RETURN_IF_ERROR(ValidatePortRate(*parsed));
  *bps = *parsed;
  return Status::Ok();
}

Status SetUint32(const std::string& value, uint32_t min, uint32_t max, uint32_t* field) {
  Result<uint64_t> parsed = ParseUint(value, min, max);
  if (!parsed.ok()) return parsed.status();
  *field = static_cast<uint32_t>(*parsed);
  return Status::Ok();
}

Status SetNonEmpty(const std::string& value, std::string* field) {
  if (value.empty()) return Status::Error("must not be empty");
  *field = value;
  return Status::Ok();
}

// The [tm] keys (the defaults of every port and queue).
std::map<std::string, Setter> TmSetters() {
  return {
      {"tm.shared_buffer",
       BytesKey(1, UINT64_MAX, [](uint64_t v, SwitchConfig& c) { c.tm.shared_buffer_bytes = v; })},
      {"tm.port_buffer",
       BytesKey(0, UINT64_MAX, [](uint64_t v, SwitchConfig& c) { c.tm.port_buffer_bytes = v; })},
      {"tm.port_rate",
       [](const std::string& v, LoadedSwitchConfig& o) {
         return SetRate(v, &o.config.tm.port_rate_bps);
       }},
      {"tm.wire_overhead",
       UintKey(0, kTmMaxWireOverheadBytes,
               [](uint64_t v, SwitchConfig& c) { c.tm.wire_overhead_bytes = uint32_t(v); })},
      {"tm.scheduler",
       [](const std::string& v, LoadedSwitchConfig& o) -> Status {
         if (v == "strict") {
           o.config.tm.scheduler = SchedulerKind::kStrict;
         } else if (v == "weighted") {
           o.config.tm.scheduler = SchedulerKind::kWeighted;
         } else {
           return Status::Error("\"" + v + "\" is not strict or weighted");
         }
         return Status::Ok();
       }},
      {"tm.pushout", BoolKey([](bool v, SwitchConfig& c) { c.tm.pushout = v; })},
      {"tm.queue_depth",
       UintKey(1, kTmMaxQueueDepthPkts,
               [](uint64_t v, SwitchConfig& c) { c.tm.queue.depth_pkts = uint32_t(v); })},
      {"tm.ecn_threshold",
       BytesKey(0, UINT64_MAX,
                [](uint64_t v, SwitchConfig& c) { c.tm.queue.ecn_threshold_bytes = v; })},
      {"tm.drop_threshold",
       BytesKey(0, UINT64_MAX,
                [](uint64_t v, SwitchConfig& c) { c.tm.queue.drop_threshold_bytes = v; })},
      {"tm.alpha", AlphaKey([](double v, SwitchConfig& c) { c.tm.queue.alpha = v; })},
      {"tm.guaranteed_min",
       BytesKey(0, UINT64_MAX,
                [](uint64_t v, SwitchConfig& c) { c.tm.queue.guaranteed_min_bytes = v; })},
      {"tm.quantum",
       BytesKey(1, kTmMaxQuantumBytes,
                [](uint64_t v, SwitchConfig& c) { c.tm.quantum_bytes = uint32_t(v); })},
  };
}

const std::map<std::string, Setter>& Setters() {
  static const auto* setters = [] {
    auto* all = new std::map<std::string, Setter>{
      {"switch.name",
       [](const std::string& v, LoadedSwitchConfig& o) { return SetNonEmpty(v, &o.config.name); }},
      {"switch.ports", UintKey(1, kTmMaxPorts,
                               [](uint64_t v, SwitchConfig& c) { c.num_ports = uint16_t(v); })},
      {"switch.program", [](const std::string& v,
                            LoadedSwitchConfig& o) { return SetNonEmpty(v, &o.config.program); }},
      {"switch.seed", UintKey(0, UINT64_MAX, [](uint64_t v, SwitchConfig& c) { c.seed = v; })},
      {"switch.cli",
       [](const std::string& v, LoadedSwitchConfig& o) -> Status {
         if (v.empty()) return Status::Error("must not be empty");
         o.startup_script = ResolveRelative(o.path, v);
         return CheckTextFile(o.startup_script, "startup script");
       }},
      {"switch.ingress_stages",
       UintKey(1, 64, [](uint64_t v, SwitchConfig& c) { c.pipeline.ingress_stages = uint16_t(v); })},
      {"switch.egress_stages",
       UintKey(0, 64, [](uint64_t v, SwitchConfig& c) { c.pipeline.egress_stages = uint16_t(v); })},
      {"switch.parse_depth",
       UintKey(14, 65535, [](uint64_t v, SwitchConfig& c) { c.parser.parse_depth = uint16_t(v); })},
      {"switch.max_recirculations", UintKey(0, 255,
                                            [](uint64_t v, SwitchConfig& c) {
                                              c.pipeline.max_recirculations = uint8_t(v);
                                            })},
      {"switch.verify_ipv4_checksum",
       BoolKey([](bool v, SwitchConfig& c) { c.parser.verify_ipv4_checksum = v; })},
      {"switch.zero_udp_checksum",
       BoolKey([](bool v, SwitchConfig& c) { c.deparser.zero_udp_checksum = v; })},
      {"switch.cpu_queue", UintKey(1, 1 << 20, [](uint64_t v, SwitchConfig& c) {
         c.cpu.queue_packets = uint32_t(v);
       })},
      {"switch.cpu_latency", [](const std::string& v, LoadedSwitchConfig& o) -> Status {
         Result<uint64_t> ns = ParseDuration(v);
         if (!ns.ok()) return ns.status();
         o.config.cpu.latency_ns = *ns;
         return Status::Ok();
       }},
      {"budget.sram", BytesKey(0, UINT64_MAX,
                               [](uint64_t v, SwitchConfig& c) { c.pipeline.budget.sram_bytes = v; })},
      {"budget.tcam", UintKey(0, UINT64_MAX, [](uint64_t v, SwitchConfig& c) {
         c.pipeline.budget.tcam_entries = v;
       })},
      {"budget.tables", UintKey(0, UINT32_MAX, [](uint64_t v, SwitchConfig& c) {
         c.pipeline.budget.tables = uint32_t(v);
       })},
      {"budget.alus", UintKey(0, UINT32_MAX, [](uint64_t v, SwitchConfig& c) {
         c.pipeline.budget.stateful_alus = uint32_t(v);
       })},
      {"eal.args", [](const std::string& v, LoadedSwitchConfig& o) { return SetNonEmpty(v, &o.eal_args); }},
      {"dpdk.mbufs", [](const std::string& v, LoadedSwitchConfig& o) {
         return SetUint32(v, 1023, 1u << 24, &o.mbufs);
       }},
      {"dpdk.mbuf_cache", [](const std::string& v, LoadedSwitchConfig& o) {
         return SetUint32(v, 0, 512, &o.mbuf_cache);
       }},
      {"dpdk.workers", [](const std::string& v, LoadedSwitchConfig& o) {
         return SetUint32(v, 1, 64, &o.workers);
       }},
      {"dpdk.cut_through", [](const std::string& v, LoadedSwitchConfig& o) -> Status {
         Result<bool> parsed = ParseBool(v);
         if (!parsed.ok()) return parsed.status();
         o.cut_through = *parsed;
         return Status::Ok();
       }},
    };
    all->merge(TmSetters());
    return all;
  }();
  return *setters;
}

// The keys of a [port.N] section, in the order "unknown key" lists them.
constexpr const char* kPortKeys[] = {"rate",           "queue_depth", "ecn_threshold",
                                     "drop_threshold", "alpha",       "guaranteed_min",
                                     "devargs",        "loss",        "delay"};
// The [port.N] keys kept in tm.port_queues.
bool IsPortQueueKey(const std::string& field) {
  return field == "queue_depth" || field == "ecn_threshold" || field == "drop_threshold" ||
         field == "alpha" || field == "guaranteed_min";
}

// "port.N.rate" / "port.N.devargs": the port number, or an error naming what is wrong.
Result<PortId> PortOfKey(const std::string& key) {
  std::size_t dot = key.find('.', 5);
  std::string number = key.substr(5, dot == std::string::npos ? std::string::npos : dot - 5);
  Result<uint64_t> port = ParseUint(number, 0, kTmMaxPorts - 1);
  if (dot == std::string::npos || !port.ok()) {
    return Status::Error("unknown key (a port section is [port.N] with N a port number)");
  }
  const std::string field = key.substr(dot + 1);
  if (std::find(std::begin(kPortKeys), std::end(kPortKeys), field) == std::end(kPortKeys)) {
    std::string list;
    for (std::size_t i = 0; i < std::size(kPortKeys); ++i) {
      list += (i == 0                          ? ""
               : i + 1 == std::size(kPortKeys) ? " and "
                                               : ", ") +
              std::string(kPortKeys[i]);
    }
    return Status::Error("unknown key (a [port.N] section has only " + list + ")");
  }
  return static_cast<PortId>(*port);
}

// [port.N] queue_depth, ecn_threshold, drop_threshold, alpha and guaranteed_min: port N's queues
// over [tm]'s, parsed as [tm]'s keys are.
Status ApplyPortQueueKey(PortId port, const std::string& field, const std::string& value,
                         LoadedSwitchConfig& out) {
  auto queues = [port](SwitchConfig& c) -> PortQueueOverrides& { return c.tm.port_queues[port]; };
  const PortQueueOverrides& now = queues(out.config);
  const bool given = field == "queue_depth"      ? now.depth_pkts.has_value()
                     : field == "ecn_threshold"  ? now.ecn_threshold_bytes.has_value()
                     : field == "alpha"          ? now.alpha.has_value()
                     : field == "guaranteed_min" ? now.guaranteed_min_bytes.has_value()
                                                 : now.drop_threshold_bytes.has_value();
  if (given) {  // [port.1], [port.01]
    std::string name = field;
    std::replace(name.begin(), name.end(), '_', ' ');
    return Status::Error("port " + name + " given twice");
  }
  if (field == "queue_depth") {
    return UintKey(1, kTmMaxQueueDepthPkts, [&](uint64_t v, SwitchConfig& c) {
      queues(c).depth_pkts = uint32_t(v);
    })(value, out);
  }
  if (field == "ecn_threshold") {
    return BytesKey(0, UINT64_MAX, [&](uint64_t v, SwitchConfig& c) {
      queues(c).ecn_threshold_bytes = v;
    })(value, out);
  }
  if (field == "alpha") {
    return AlphaKey([&](double v, SwitchConfig& c) { queues(c).alpha = v; })(value, out);
  }
  if (field == "guaranteed_min") {
    return BytesKey(0, UINT64_MAX, [&](uint64_t v, SwitchConfig& c) {
      queues(c).guaranteed_min_bytes = v;
    })(value, out);
  }
  return BytesKey(0, UINT64_MAX, [&](uint64_t v, SwitchConfig& c) {
    queues(c).drop_threshold_bytes = v;
  })(value, out);
}

Status Apply(const IniEntry& entry, LoadedSwitchConfig& out, std::set<PortId>* rated_ports) {
  const std::string& key = entry.key;
  auto it = Setters().find(key);
  if (it != Setters().end()) return it->second(entry.value, out);
  if (key.rfind("program.", 0) == 0 && key.size() > 8) {
    out.config.program_options.Set(key.substr(8), entry.value);
    return Status::Ok();
  }
  if (key.rfind("interface.", 0) == 0) return ApplyInterfaceKey(key, entry.value, out);
  if (key.rfind("port.", 0) == 0) {
    Result<PortId> port = PortOfKey(key);
    if (!port.ok()) return port.status();
    if (key.ends_with(".devargs")) {
      if (entry.value.empty()) return Status::Error("must not be empty");
      out.port_devargs.emplace_back(*port, entry.value);
      return Status::Ok();
    }
    if (key.ends_with(".loss")) {
      Result<double> loss = ParseProbability(entry.value);
      if (!loss.ok()) return loss.status();
      out.port_effects[*port].loss = *loss;
      return Status::Ok();
    }
    const std::string field = key.substr(key.rfind('.') + 1);
    if (IsPortQueueKey(field)) return ApplyPortQueueKey(*port, field, entry.value, out);
    if (key.ends_with(".delay")) {
      Result<uint64_t> ns = ParseDuration(entry.value);
      if (!ns.ok()) return ns.status();
      if (*ns > kMaxPortDelayNs) return Status::Error("\"" + entry.value + "\" is over 1s");
      out.port_effects[*port].delay_ns = *ns;
      return Status::Ok();
    }
    uint64_t bps = 0;
    SWEMU_RETURN_IF_ERROR(SetRate(entry.value, &bps));
    if (!rated_ports->insert(*port).second) return Status::Error("port rate given twice");
    out.config.tm.port_rates.push_back({*port, bps});
    return Status::Ok();
  }
  std::size_t dot = key.find('.');
  if (dot == std::string::npos) {
    return Status::Error("unknown key (every key belongs in a section such as [switch])");
  }
  static const std::set<std::string> kSections = {"switch",  "budget", "tm",
                                                  "program", "eal",    "dpdk"};
  if (kSections.count(key.substr(0, dot)) == 0) {
    return Status::Error("unknown section [" + key.substr(0, dot) + "]");
  }
  return Status::Error("unknown key");
}

}  // namespace

Result<LoadedSwitchConfig> LoadSwitchConfig(const std::string& path) {
  Result<std::vector<IniEntry>> entries = ReadIniFile(path);
  if (!entries.ok()) return entries.status();
  LoadedSwitchConfig out;
  out.path = path;
  out.config.tm.port_rate_bps = kDefaultPortRateBps;
  std::set<std::string> seen;
  std::set<PortId> rated_ports;
  for (const IniEntry& entry : *entries) {
    if (!seen.insert(entry.key).second) {
      return Status::Error(path + ": " + entry.key + ": given twice");
    }
    Status applied = Apply(entry, out, &rated_ports);
    if (!applied.ok()) return Status::Error(path + ": " + entry.key + ": " + applied.message());
  }
  for (const PortRate& rate : out.config.tm.port_rates) {
    if (rate.port >= out.config.num_ports) {
      return Status::Error(path + ": port." + std::to_string(rate.port) + ".rate: port " +
                           std::to_string(rate.port) + " out of range (switch.ports is " +
                           std::to_string(out.config.num_ports) + ")");
    }
  }
  for (const auto& [port, queues] : out.config.tm.port_queues) {
    if (port >= out.config.num_ports) {
      const char* field = queues.depth_pkts             ? "queue_depth"
                          : queues.ecn_threshold_bytes  ? "ecn_threshold"
                          : queues.drop_threshold_bytes ? "drop_threshold"
                          : queues.alpha                ? "alpha"
                                                        : "guaranteed_min";
      return Status::Error(path + ": port." + std::to_string(port) + "." + field + ": port " +
                           std::to_string(port) + " out of range (switch.ports is " +
                           std::to_string(out.config.num_ports) + ")");
    }
  }
  for (const auto& [port, effects] : out.port_effects) {
    if (port >= out.config.num_ports) {
      return Status::Error(path + ": port." + std::to_string(port) + ": port " +
                           std::to_string(port) + " out of range (switch.ports is " +
                           std::to_string(out.config.num_ports) + ")");
    }
  }
  for (const auto& [port, devargs] : out.port_devargs) {
    if (port >= out.config.num_ports) {
      return Status::Error(path + ": port." + std::to_string(port) + ".devargs: port " +
                           std::to_string(port) + " out of range (switch.ports is " +
                           std::to_string(out.config.num_ports) + ")");
    }
  }
  Status interfaces = FinishInterfaces(out);
  if (!interfaces.ok()) return Status::Error(path + ": " + interfaces.message());
  SwitchConfig checked = out.config;
  checked.tm.num_ports = checked.num_ports;
  Status valid = checked.Validate();
  if (!valid.ok()) return Status::Error(path + ": " + valid.message());
  return out;
}

}  // namespace swemu
