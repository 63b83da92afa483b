// Traffic-manager commands: BMv2's set_queue_depth/set_queue_rate and mc_* (same argument
// order), and swemu's own for shaping, thresholds and scheduling.
#include <string>

#include "pipeline/control/units.h"
#include "pipeline/switch/switch.h"
#include "pipeline/switch/switch_commands.h"

namespace swemu {
namespace {

struct Targets {
  std::vector<uint16_t> ports;
  std::vector<int> queues;
};

// [port [queue]] as in BMv2: omitted means all.
Result<Targets> OptionalPortQueue(const Switch& sw, CommandArgs args, std::size_t first) {
  Result<std::vector<uint16_t>> ports = ParsePorts(sw, args.size() > first ? args[first] : "all");
  if (!ports.ok()) return ports.status();
  Result<std::vector<int>> queues = ParseQueues(args.size() > first + 1 ? args[first + 1] : "all");
  if (!queues.ok()) return queues.status();
  return Targets{*ports, *queues};
}

Result<Targets> PortQueue(const Switch& sw, const std::string& port, const std::string& queue) {
  Result<std::vector<uint16_t>> ports = ParsePorts(sw, port);
  if (!ports.ok()) return ports.status();
  Result<std::vector<int>> queues = ParseQueues(queue);
  if (!queues.ok()) return queues.status();
  return Targets{*ports, *queues};
}

// Applies fn to every (port, queue); the first call validates the value, so a bad value fails
// before anything changed.
template <typename Fn>
Result<std::string> ForEachQueue(const Targets& t, Fn fn) {
  for (uint16_t port : t.ports) {
    for (int queue : t.queues) SWEMU_RETURN_IF_ERROR(fn(port, queue));
  }
  return std::string();
}

Result<std::string> SetQueueDepth(Switch& sw, CommandArgs args) {
  Result<uint64_t> depth = ParseUint(args[0], 1, UINT32_MAX);
  if (!depth.ok()) return Status::Error("depth " + depth.message());
  Result<Targets> t = OptionalPortQueue(sw, args, 1);
  if (!t.ok()) return t.status();
  return ForEachQueue(*t, [&](uint16_t p, int q) {
    return sw.tm().SetQueueDepth(p, q, static_cast<uint32_t>(*depth));
  });
}

Result<std::string> SetQueueRate(Switch& sw, CommandArgs args) {
  Result<uint64_t> pps = ParseUint(args[0]);
  if (!pps.ok()) return Status::Error("rate " + pps.message());
  Result<Targets> t = OptionalPortQueue(sw, args, 1);
  if (!t.ok()) return t.status();
  return ForEachQueue(*t, [&](uint16_t p, int q) { return sw.tm().SetQueueRate(p, q, *pps); });
}

Result<std::string> SetPortRate(Switch& sw, CommandArgs args) {
  Result<std::vector<uint16_t>> ports = ParsePorts(sw, args[0]);
  if (!ports.ok()) return ports.status();
  Result<uint64_t> rate = ParseRate(args[1]);
  if (!rate.ok()) return rate.status();
  for (uint16_t p : *ports) SWEMU_RETURN_IF_ERROR(sw.tm().SetPortRate(p, *rate));
  return std::string();
}

template <bool kEcn>
Result<std::string> SetThreshold(Switch& sw, CommandArgs args) {
  Result<Targets> t = PortQueue(sw, args[0], args[1]);
  if (!t.ok()) return t.status();
  Result<uint64_t> bytes = ParseBytes(args[2]);
  if (!bytes.ok()) return bytes.status();
  return ForEachQueue(*t, [&](uint16_t p, int q) {
    return kEcn ? sw.tm().SetEcnThresholdChecked(p, q, *bytes)
                : sw.tm().SetDropThresholdChecked(p, q, *bytes);
  });
}

Result<std::string> SetRedThreshold(Switch& sw, CommandArgs args) {
  Result<Targets> t = PortQueue(sw, args[0], args[1]);
  if (!t.ok()) return t.status();
  Result<uint64_t> pkts = ParseUint(args[2], 0, kTmMaxQueueDepthPkts);
  if (!pkts.ok()) return pkts.status();
  return ForEachQueue(*t, [&](uint16_t p, int q) { return sw.tm().SetRedThresholdChecked(p, q, *pkts); });
}

// set_queue_alpha PORT|all QUEUE|all VALUE: ParseAlpha's spellings (1/8, 2^-3, 0.125, 0 = off).
Result<std::string> SetQueueAlpha(Switch& sw, CommandArgs args) {
  Result<Targets> t = PortQueue(sw, args[0], args[1]);
  if (!t.ok()) return t.status();
  Result<double> alpha = ParseAlpha(args[2]);
  if (!alpha.ok()) return alpha.status();
  return ForEachQueue(*t, [&](uint16_t p, int q) { return sw.tm().SetQueueAlpha(p, q, *alpha); });
}

Result<std::string> SetGuaranteedMin(Switch& sw, CommandArgs args) {
  Result<Targets> t = PortQueue(sw, args[0], args[1]);
  if (!t.ok()) return t.status();
  Result<uint64_t> bytes = ParseBytes(args[2]);
  if (!bytes.ok()) return bytes.status();
  // One call for the whole selection, so a set of minimums that would not fit changes nothing.
  std::optional<PortId> port;
  if (t->ports.size() == 1) port = t->ports[0];
  std::optional<int> queue;
  if (t->queues.size() == 1) queue = t->queues[0];
  SWEMU_RETURN_IF_ERROR(sw.tm().SetGuaranteedMin(port, queue, *bytes));
  return std::string();
}

Result<std::string> SetScheduler(Switch& sw, CommandArgs args) {
  Result<std::vector<uint16_t>> ports = ParsePorts(sw, args[0]);
  if (!ports.ok()) return ports.status();
  SchedulerKind kind;
  if (args[1] == "strict") {
    kind = SchedulerKind::kStrict;
  } else if (args[1] == "weighted") {
    kind = SchedulerKind::kWeighted;
  } else {
    return Status::Error("scheduler \"" + args[1] + "\" is not strict or weighted");
  }
  for (uint16_t p : *ports) SWEMU_RETURN_IF_ERROR(sw.tm().SetScheduler(p, kind));
  return std::string();
}

Result<std::string> SetQueueWeight(Switch& sw, CommandArgs args) {
  Result<Targets> t = PortQueue(sw, args[0], args[1]);
  if (!t.ok()) return t.status();
  Result<uint64_t> weight = ParseUint(args[2], 1, 1024);
  if (!weight.ok()) return Status::Error("weight " + weight.message());
  return ForEachQueue(*t, [&](uint16_t p, int q) {
    return sw.tm().SetQueueWeight(p, q, static_cast<uint32_t>(*weight));
  });
}

Result<uint16_t> ParseGroup(const std::string& text) {
  Result<uint64_t> grp = ParseUint(text, 1, 65535);
  if (!grp.ok()) return Status::Error("group " + grp.message());
  return static_cast<uint16_t>(*grp);
}

Result<uint32_t> ParseNode(const std::string& text) {
  Result<uint64_t> node = ParseUint(text, 0, UINT32_MAX);
  if (!node.ok()) return Status::Error("node handle " + node.message());
  return static_cast<uint32_t>(*node);
}

Result<std::string> McGroupCreate(Switch& sw, CommandArgs args) {
  Result<uint16_t> grp = ParseGroup(args[0]);
  if (!grp.ok()) return grp.status();
  Result<uint16_t> created = sw.tm().McGroupCreate(*grp);
  if (!created.ok()) return created.status();
  return "Creating multicast group " + std::to_string(*created);
}

Result<std::string> McGroupDestroy(Switch& sw, CommandArgs args) {
  Result<uint16_t> grp = ParseGroup(args[0]);
  if (!grp.ok()) return grp.status();
  SWEMU_RETURN_IF_ERROR(sw.tm().McGroupDestroy(*grp));
  return std::string();
}

// mc_node_create <rid> <port...>
Result<std::string> McNodeCreate(Switch& sw, CommandArgs args) {
  Result<uint64_t> rid = ParseUint(args[0], 0, 65535);
  if (!rid.ok()) return Status::Error("rid " + rid.message());
  std::vector<PortId> ports;
  for (std::size_t i = 1; i < args.size(); ++i) {
    Result<std::vector<uint16_t>> port = ParsePorts(sw, args[i]);
    if (!port.ok()) return port.status();
    ports.insert(ports.end(), port->begin(), port->end());
  }
  Result<uint32_t> handle = sw.tm().McNodeCreate(static_cast<uint16_t>(*rid), ports);
  if (!handle.ok()) return handle.status();
  return "node was created with handle " + std::to_string(*handle);
}

template <bool kAssociate>
Result<std::string> McNodeLink(Switch& sw, CommandArgs args) {
  Result<uint16_t> grp = ParseGroup(args[0]);
  if (!grp.ok()) return grp.status();
  Result<uint32_t> node = ParseNode(args[1]);
  if (!node.ok()) return node.status();
  SWEMU_RETURN_IF_ERROR(kAssociate ? sw.tm().McNodeAssociate(*grp, *node)
                                   : sw.tm().McNodeDissociate(*grp, *node));
  return std::string();
}

Result<std::string> McNodeDestroy(Switch& sw, CommandArgs args) {
  Result<uint32_t> node = ParseNode(args[0]);
  if (!node.ok()) return node.status();
  SWEMU_RETURN_IF_ERROR(sw.tm().McNodeDestroy(*node));
  return std::string();
}

}  // namespace

Status AddTmCommands(Switch& sw, CommandTable& c) {
  constexpr std::size_t kAny = CommandTable::kUnbounded;
  auto bind = [&sw](Result<std::string> (*fn)(Switch&, CommandArgs)) {
    return [&sw, fn](CommandArgs args) { return fn(sw, args); };
  };
  struct Entry {
    const char* name;
    const char* usage;
    const char* help;
    std::size_t min_args;
    std::size_t max_args;
    Result<std::string> (*fn)(Switch&, CommandArgs);
  };
  const Entry entries[] = {
      {"set_queue_depth", "<packets> [port [queue]]", "queue limit in packets (BMv2)", 1, 3,
       SetQueueDepth},
      {"set_queue_rate", "<pps> [port [queue]]", "queue rate in packets/s, 0 = off (BMv2)", 1, 3,
       SetQueueRate},
      {"set_port_rate", "<port|all> <rate>", "shape a port to a link rate, e.g. 10G; 0 = off", 2, 2,
       SetPortRate},
      {"set_ecn_threshold", "<port|all> <queue|all> <bytes>",
       "mark ECT packets when the queue holds at least this much; 0 = off", 3, 3,
       SetThreshold<true>},
      {"set_red_threshold", "<port|all> <queue|all> <packets>",
       "RED with ECN: from this many queued packets, mark ECT and drop Not-ECT; 0 = off", 3, 3,
       SetRedThreshold},
      {"set_drop_threshold", "<port|all> <queue|all> <bytes>",
       "drop when the queue would exceed this; 0 = off", 3, 3, SetThreshold<false>},
      {"set_queue_alpha", "<port|all> <queue|all> <alpha>",
       "dynamic threshold: queue may hold alpha x the free shared buffer (1/8, 2^-3); 0 = off", 3,
       3, SetQueueAlpha},
      {"set_guaranteed_min", "<port|all> <queue|all> <bytes>",
       "bytes reserved for the queue out of the shared buffer, used first; 0 = none", 3, 3,
       SetGuaranteedMin},
      {"set_scheduler", "<port|all> <strict|weighted>", "queue scheduling of a port", 2, 2,
       SetScheduler},
      {"set_queue_weight", "<port|all> <queue|all> <weight>", "weight for weighted scheduling", 3,
       3, SetQueueWeight},
      {"mc_mgrp_create", "<group>", "create a multicast group", 1, 1, McGroupCreate},
      {"mc_mgrp_destroy", "<group>", "destroy a multicast group", 1, 1, McGroupDestroy},
      {"mc_node_create", "<rid> <port...>", "create a replication node; prints its handle", 2, kAny,
       McNodeCreate},
      {"mc_node_destroy", "<handle>", "destroy a replication node", 1, 1, McNodeDestroy},
      {"mc_node_associate", "<group> <handle>", "add a node to a group", 2, 2, McNodeLink<true>},
      {"mc_node_dissociate", "<group> <handle>", "remove a node from a group", 2, 2,
       McNodeLink<false>},
  };
  for (const Entry& e : entries) {
    SWEMU_RETURN_IF_ERROR(c.Add({e.name, e.usage, e.help, e.min_args, e.max_args, bind(e.fn)}));
  }
  return c.Add({"mc_dump", "", "list multicast groups and nodes", 0, 0,
                [&sw](CommandArgs) -> Result<std::string> { return sw.tm().McDump(); }});
}

}  // namespace swemu
