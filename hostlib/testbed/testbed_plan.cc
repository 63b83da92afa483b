#include "hostlib/testbed/testbed_plan.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

namespace swemu {

Status CheckTopologyPorts(const TopologyConfig& topology) {
  std::map<std::string, uint16_t> ports;
  for (const LoadedSwitchConfig& sw : topology.switches)
    ports[sw.config.name] = sw.config.num_ports;
  std::set<std::pair<std::string, PortId>> used;
  auto claim = [&](const std::string& sw, PortId port, const std::string& who) -> Status {
    auto found = ports.find(sw);
    if (found == ports.end()) return Status::Error(who + ": no switch named " + sw);
    if (port >= found->second) {
      return Status::Error(who + ": " + sw + " has " + std::to_string(found->second) +
                           " ports, no port " + std::to_string(port));
    }
    if (!used.emplace(sw, port).second) {
      return Status::Error(who + ": " + sw + ":" + std::to_string(port) + " is already used");
    }
    return Status::Ok();
  };
  for (const TopologyHost& host : topology.hosts) {
    SWEMU_RETURN_IF_ERROR(claim(host.sw, host.port, "host " + host.name));
  }
  for (const LinkSpec& link : topology.links) {
    const std::string who = "link " + link.a + ":" + std::to_string(link.a_port) + " " + link.b +
                            ":" + std::to_string(link.b_port);
    SWEMU_RETURN_IF_ERROR(claim(link.a, link.a_port, who));
    SWEMU_RETURN_IF_ERROR(claim(link.b, link.b_port, who));
  }
  return Status::Ok();
}

std::set<PortId> UsedPorts(const TopologyConfig& topology, const std::string& sw) {
  std::set<PortId> used;
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw == sw) used.insert(host.port);
  }
  for (const LinkSpec& link : topology.links) {
    if (link.a == sw) used.insert(link.a_port);
    if (link.b == sw) used.insert(link.b_port);
  }
  return used;
}

namespace {

// Each port sends through its link's rate, delay and loss (swemu's [port.N] shaping and wire
// effects, seeded): a link between switches both ways, a host's link toward the host.
void ApplyLinks(const TopologyConfig& topology, LoadedSwitchConfig& config) {
  config.port_effects.clear();
  for (const LinkSpec& link : topology.links) {
    for (const auto& end :
         {std::make_pair(link.a, link.a_port), std::make_pair(link.b, link.b_port)}) {
      if (end.first != config.config.name) continue;
      std::vector<PortRate>& rates = config.config.tm.port_rates;
      std::erase_if(rates, [&](const PortRate& r) { return r.port == end.second; });
      rates.push_back({end.second, link.rate_bps});
      if (link.delay_ns != 0 || link.loss != 0) {
        config.port_effects[end.second] = {link.loss, link.delay_ns};
      }
    }
  }
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw != config.config.name || (host.delay_ns == 0 && host.loss == 0)) continue;
    config.port_effects[host.port] = {host.loss, host.delay_ns};
  }
}

}  // namespace

TestbedSwitch PlanTestbedSwitch(const TopologyConfig& topology, std::size_t index,
                                const std::string& out_dir, pid_t tag,
                                const std::function<std::string(PortId)>& devargs,
                                const std::string& eal_args, uint32_t workers) {
  const LoadedSwitchConfig& loaded = topology.switches[index];
  const std::string& name = loaded.config.name;
  TestbedSwitch sw{name,
                   loaded,
                   out_dir + "/" + name + ".ini",
                   out_dir + "/" + name + "-control.sock",
                   out_dir + "/" + name + ".log",
                   "swemu-tb" + std::to_string(tag) + "-" + name,
                   {},
                   {}};
  LoadedSwitchConfig& config = sw.config;
  config.port_devargs.clear();
  for (PortId port : UsedPorts(topology, name))
    config.port_devargs.emplace_back(port, devargs(port));
  ApplyLinks(topology, config);
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  std::string lcores = " -l " + std::to_string(index % cpus);
  if (workers > 1) {  // lcore k on a CPU of its own while there are enough
    lcores = " --lcores ";
    for (uint32_t k = 0; k < workers; ++k) {
      lcores += (k ? "," : "") + std::to_string(k) + "@" +
                std::to_string((index * workers + k) % cpus);
    }
  }
  config.eal_args = eal_args + lcores + " --file-prefix " + sw.file_prefix;
  config.workers = workers;
  return sw;
}

Result<TopologyHost> ReplayHost(const TopologyConfig& topology, const TestbedReplay& replay) {
  const std::string where = replay.sw + ":" + std::to_string(replay.port);
  const std::string option = "--in " + where + "=" + replay.file + ": ";
  if (replay.sw.empty()) return Status::Error(option + "name the switch (SW:PORT=FILE)");
  std::error_code ec;
  if (std::filesystem::is_directory(replay.file, ec)) {
    return Status::Error(option + replay.file + " is a directory, not a pcap");
  }
  if (access(replay.file.c_str(), R_OK) != 0) {
    return Status::Error(option + "cannot read " + replay.file);
  }
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw == replay.sw && host.port == replay.port) return host;
  }
  return Status::Error(option + where + " is not a host port of the topology");
}

std::string ShellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void AddTopologyRuns(const TopologyConfig& topology, const std::string& out_dir,
                     const std::function<Argv(const std::string& host)>& launch_of,
                     const std::function<std::vector<std::string>(const std::string& host)>& env_of,
                     TestbedPlan& plan) {
  for (const TopologyRun& run : topology.runs) {
    plan.runs.push_back(
        {run.host, run.command,
         out_dir + "/" + run.host + "-run" + std::to_string(plan.runs.size()) + ".log",
         launch_of(run.host), env_of(run.host)});
  }
}

}  // namespace swemu
