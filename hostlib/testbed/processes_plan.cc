#include "hostlib/testbed/processes_plan.h"

#include <algorithm>
#include <map>
#include <thread>

namespace swemu {
namespace {

constexpr std::size_t kMaxSocketPath = 107;  // sun_path less its terminating zero

std::string PortSocket(const std::string& out_dir, const std::string& sw, PortId port) {
  return out_dir + "/" + sw + "-p" + std::to_string(port) + ".sock";
}

// Where each link's later end attaches: (switch, port) -> the earlier end's socket.
std::map<std::pair<std::string, PortId>, std::string> LinkClients(const TopologyConfig& topology,
                                                                  const std::string& out_dir) {
  std::map<std::string, std::size_t> order;
  for (std::size_t s = 0; s < topology.switches.size(); ++s) {
    order[topology.switches[s].config.name] = s;
  }
  std::map<std::pair<std::string, PortId>, std::string> clients;
  for (const LinkSpec& link : topology.links) {
    const bool a_first = order[link.a] < order[link.b];
    const std::string& server = a_first ? link.a : link.b;
    const PortId server_port = a_first ? link.a_port : link.b_port;
    clients[{a_first ? link.b : link.a, a_first ? link.b_port : link.a_port}] =
        PortSocket(out_dir, server, server_port);
  }
  return clients;
}

std::string VirtioUser(PortId index, const std::string& socket) {
  return "net_virtio_user" + std::to_string(index) + ",path=" + socket +
         ",queues=1,queue_size=1024";
}

// The environment of a host's commands: its port's devargs and EAL arguments of its own.
std::vector<std::string> HostEnv(const TopologyHost& host, const std::string& out_dir, pid_t tag,
                                 std::size_t index) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return {"SWEMU_DEVARGS=" + VirtioUser(0, PortSocket(out_dir, host.sw, host.port)),
          "SWEMU_EAL=-l " + std::to_string(index % cpus) +
              " --no-pci --no-huge -m 256 --file-prefix " + HostFilePrefix(tag, host.name)};
}

}  // namespace

std::string ProcessesHostDevargs(const std::string& out_dir, const std::string& sw, PortId port,
                                 uint32_t index) {
  return VirtioUser(static_cast<PortId>(index), PortSocket(out_dir, sw, port));
}

std::string ProcessesHostSocket(const std::string& out_dir, const std::string& sw, PortId port) {
  return PortSocket(out_dir, sw, port);
}

std::string HostFilePrefix(pid_t tag, const std::string& host) {
  return "swemu-tb" + std::to_string(tag) + "-host-" + host;
}

Result<TestbedPlan> PlanProcessesTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                         pid_t tag, const std::vector<TestbedReplay>& replays,
                                         const std::string& replay_binary, uint32_t workers) {
  const std::string where = topology.path + ": ";
  Status ports = CheckTopologyPorts(topology);
  if (!ports.ok()) return Status::Error(where + ports.message());
  const auto clients = LinkClients(topology, out_dir);
  TestbedPlan plan;
  plan.backend = "processes";
  for (std::size_t s = 0; s < topology.switches.size(); ++s) {
    const std::string& name = topology.switches[s].config.name;
    std::vector<std::string> served;
    const auto devargs = [&](PortId port) {
      auto client = clients.find({name, port});
      if (client != clients.end()) return VirtioUser(port, client->second);
      served.push_back(PortSocket(out_dir, name, port));
      return "net_vhost" + std::to_string(port) + ",iface=" + served.back() + ",queues=1";
    };
    plan.switches.push_back(
        PlanTestbedSwitch(topology, s, out_dir, tag, devargs, "--no-pci", workers));
    plan.switches.back().served = served;
    for (const std::string& socket : served) {
      if (socket.size() > kMaxSocketPath) {
        return Status::Error(where + socket + ": longer than a socket path may be (" +
                             std::to_string(kMaxSocketPath) + "); use a shorter --out-dir");
      }
    }
    plan.file_prefixes.push_back(plan.switches.back().file_prefix);
  }
  std::map<std::string, std::vector<std::string>> env;
  for (const TopologyHost& host : topology.hosts) {
    env[host.name] = HostEnv(host, out_dir, tag, plan.hosts.size() + topology.switches.size());
    plan.hosts.push_back({host.name, host.sw + ":" + std::to_string(host.port),
                          "virtio_user " + env[host.name][0].substr(14)});
    plan.file_prefixes.push_back(HostFilePrefix(tag, host.name));
  }
  AddTopologyRuns(
      topology, out_dir, [](const std::string&) { return Argv{}; },
      [&](const std::string& host) { return env[host]; }, plan);
  for (const TestbedReplay& replay : replays) {
    Result<TopologyHost> host = ReplayHost(topology, replay);
    if (!host.ok()) return Status::Error(where + host.message());
    plan.runs.push_back({host->name,
                         ShellQuoted(replay_binary) + " --port \"$SWEMU_DEVARGS\" --in " +
                             ShellQuoted(replay.file) + " --out " +
                             ShellQuoted(out_dir + "/" + host->name + "-rx.pcap") +
                             " -- $SWEMU_EAL",
                         out_dir + "/" + host->name + "-replay.log",
                         {},
                         env[host->name]});
  }
  return plan;
}

}  // namespace swemu
