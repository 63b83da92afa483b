#pragma once
// What a real-time back end of a topology will do, decided before anything is touched: the
// system steps that make the network (each with its undo), each switch's config and how it is
// launched, the hosts and the commands run on them. Back ends (netns_plan.h, processes_plan.h)
// plan; testbed_run.h carries a plan out and undoes it on every way out. Pure, so tests read it.
#include <sys/types.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "swemu/topology_config.h"

namespace swemu {

using Argv = std::vector<std::string>;

// A system command that makes part of the network, and the one that removes it (empty: nothing
// to remove). A best-effort step's failure is ignored (offloads some kernels lack).
struct TestbedStep {
  Argv make;
  Argv undo;
  bool best_effort = false;
};

struct TestbedSwitch {
  std::string name;
  LoadedSwitchConfig config;  // the topology's, its used ports on the back end's devices
  std::string ini_path, control_socket, log_path;
  std::string file_prefix;          // EAL's, unique to this run
  Argv launch;                      // before the swemu binary (ip netns exec NS), may be empty
  std::vector<std::string> served;  // sockets it serves, awaited before the next one starts
};

struct TestbedHost {
  std::string name, attachment;  // attachment: "SW:PORT"
  std::string reach;             // how a user reaches it (printed)
};

struct TestbedRun {
  std::string host, command, log_path;
  Argv launch;                   // before `sh -c COMMAND`, may be empty
  std::vector<std::string> env;  // NAME=VALUE for the command
};

struct TestbedPlan {
  std::string backend;  // "netns" or "processes", for messages
  std::vector<TestbedStep> steps;
  std::vector<TestbedSwitch> switches;
  std::vector<TestbedHost> hosts;
  std::vector<TestbedRun> runs;
  std::vector<std::string> host_namespaces;  // every process left in them is stopped at the end
  std::vector<std::string> file_prefixes;    // EAL runtime directories removed at the end
};

// A pcap replayed by the host at SW:PORT (swemu --in SW:PORT=FILE).
struct TestbedReplay {
  std::string sw;
  PortId port = 0;
  std::string file;
};

// Every port a host or link uses exists and is used once.
Status CheckTopologyPorts(const TopologyConfig& topology);

// The ports of `sw` a host or link uses, in order.
std::set<PortId> UsedPorts(const TopologyConfig& topology, const std::string& sw);

// Switch `index` of the topology for a real-time back end: each used port's devargs from
// `devargs`, each link's rate as its ports' rate, links' and hosts' delay and loss as the
// sending ports' wire effects, [eal] args `eal_args` plus a file prefix unique to `tag`, and
// [dpdk] workers `workers`: lcores 0..workers-1 on consecutive CPUs from index * workers (round
// the machine's CPUs: more lcores than CPUs share them).
TestbedSwitch PlanTestbedSwitch(const TopologyConfig& topology, std::size_t index,
                                const std::string& out_dir, pid_t tag,
                                const std::function<std::string(PortId)>& devargs,
                                const std::string& eal_args, uint32_t workers = 1);

// The host a replay runs on, or an error naming the --in.
Result<TopologyHost> ReplayHost(const TopologyConfig& topology, const TestbedReplay& replay);

// Single quotes for sh -c.
std::string ShellQuoted(const std::string& text);

// The topology's `run` lines as runs with `launch` per host (from `launch_of`).
void AddTopologyRuns(const TopologyConfig& topology, const std::string& out_dir,
                     const std::function<Argv(const std::string& host)>& launch_of,
                     const std::function<std::vector<std::string>(const std::string& host)>& env_of,
                     TestbedPlan& plan);

}  // namespace swemu
