#pragma once
// What the namespace back end will make for a topology, decided before anything is touched:
// namespace and interface names, the ip/tc/sysctl commands of each host and link, and each
// switch's config with its ports on net_af_packet. Pure (no system calls), so tests read it.
#include <sys/types.h>

#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "swemu/topology_config.h"

namespace swemu {

using Argv = std::vector<std::string>;

struct NetnsSwitchPlan {
  std::string name;
  std::string netns;          // the switch's own namespace (af_packet fanout ids are per namespace)
  LoadedSwitchConfig config;  // the topology's config, ports on net_af_packet, [eal] set
  std::string ini_path, control_socket, log_path;
  std::string file_prefix;  // EAL's, unique to this run
};

struct NetnsHostPlan {
  std::string name, netns, attachment;  // attachment: "SW:PORT"
  std::string switch_netns;             // where the switch's end of the veth pair is
  std::string iface;                    // the switch's end ("p<PORT>")
  std::string ip;                       // as in the topology, may be empty
  std::vector<Argv> setup;              // after `ip netns add`, in order
};

struct NetnsLinkPlan {
  std::string a_iface, a_netns, b_iface, b_netns;
  std::vector<Argv> setup;  // after `ip link add a netns A type veth peer name b netns B`
};

struct NetnsRunPlan {
  std::string host, netns, command, log_path;
};

struct NetnsPlan {
  std::vector<NetnsSwitchPlan> switches;
  std::vector<NetnsHostPlan> hosts;
  std::vector<NetnsLinkPlan> links;
  std::vector<NetnsRunPlan> runs;
  std::vector<Argv> best_effort;  // offloads off: failures ignored
};

// A pcap replayed into a host port (swemu --in SW:PORT=FILE): the host runs swemu-replay on its
// eth0, sending FILE at the pcap's pace and recording what it receives.
struct NetnsReplay {
  std::string sw;
  PortId port = 0;
  std::string file;
};

// Checks the topology for this back end (ports exist and are used once, no namespace of the
// names it needs exists yet under /run/netns) and plans the run. Each switch runs in namespace
// swemu-sw-<switch>, each host in swemu-<host>; a switch's port N is its veth end "pN". `tag`
// (the process id) keeps EAL file prefixes apart from other runs.
// Each replay adds a run on the host at SW:PORT (which must be a host of the topology):
// `replay_binary --iface eth0 --in FILE --out DIR/<host>-rx.pcap`.
Result<NetnsPlan> PlanNetnsTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                   pid_t tag, const std::vector<NetnsReplay>& replays = {},
                                   const std::string& replay_binary = "swemu-replay");

}  // namespace swemu
