// GoatFabricSpec::FromTopology: a GOAT network from a topology file (swemu/topology_config.h).
#include <string>

#include "hostlib/goat/fabric.h"

namespace swemu {
namespace {

// slots from a goat switch's [program] options; 0 for any other program or without slots.
Result<uint32_t> ProgrammableSlots(const SwitchConfig& config) {
  if (config.program != "goat" || !config.program_options.Has("slots")) return 0u;
  Result<uint64_t> slots = config.program_options.GetUint("slots", 0, 1, 1 << 22);
  if (!slots.ok()) return Status::Error("switch " + config.name + ": slots: " + slots.message());
  return static_cast<uint32_t>(*slots);
}

}  // namespace

Result<GoatFabricSpec> GoatFabricSpec::FromTopology(const TopologyConfig& topo) {
  const std::string file = topo.path + ": ";
  GoatFabricSpec spec;
  for (const LoadedSwitchConfig& loaded : topo.switches) {
    const SwitchConfig& c = loaded.config;
    if (spec.switches.size() >= 65534) return Status::Error(file + "more than 65534 switches");
    Result<uint32_t> slots = ProgrammableSlots(c);
    if (!slots.ok()) return Status::Error(file + slots.message());
    spec.switches.push_back({c.name, static_cast<uint16_t>(spec.switches.size() + 1),
                             static_cast<uint16_t>(c.num_ports), *slots, c.tm.port_rate_bps});
  }
  for (const LinkSpec& l : topo.links) {
    spec.links.push_back({l.a, static_cast<uint16_t>(l.a_port), l.b,
                          static_cast<uint16_t>(l.b_port), l.rate_bps,
                          static_cast<int64_t>(l.delay_ns), l.loss});
  }
  std::string ps_names;
  Host ps;
  for (const TopologyHost& h : topo.hosts) {
    if (h.role != "worker" && h.role != "ps") continue;
    const Host host{h.name,
                    h.sw,
                    static_cast<uint16_t>(h.port),
                    h.role == "ps",
                    static_cast<int64_t>(h.delay_ns),
                    h.loss};
    if (host.ps) {
      ps_names += (ps_names.empty() ? "" : ", ") + h.name;
      ps = host;
    } else {
      spec.hosts.push_back(host);
    }
  }
  if (ps_names.empty()) {
    return Status::Error(file + "no PS: one host should say role=ps (host = SW:PORT role=ps)");
  }
  if (ps_names.find(',') != std::string::npos) {
    return Status::Error(file + "more than one host says role=ps (" + ps_names +
                         "); GOAT has one PS");
  }
  if (spec.hosts.empty()) {
    return Status::Error(file + "no workers: the workers' hosts should say role=worker " +
                         "(host = SW:PORT role=worker)");
  }
  spec.hosts.push_back(ps);
  return spec;
}

}  // namespace swemu
