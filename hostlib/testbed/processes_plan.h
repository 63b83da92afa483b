#pragma once
// The processes back end's plan (swemu --topology FILE --backend processes): one real-time
// swemu per switch, as the demos run them, with vhost-user ports: a host port is a net_vhost
// socket DIR/<switch>-p<port>.sock that a host process attaches to with net_virtio_user; a
// link between switches is a net_vhost socket on the switch listed first and net_virtio_user
// on the other, so switches start in the topology's order. No root needed. A host is its
// commands: each `run` gets SWEMU_DEVARGS (the virtio_user devargs of its port) and SWEMU_EAL
// (EAL arguments of its own) in its environment, and each --in replays a pcap through
// swemu-replay on that port.
#include <sys/types.h>

#include <string>
#include <vector>

#include "hostlib/testbed/testbed_plan.h"

namespace swemu {

// The devargs with which a process attaches its port `index` (net_virtio_user<index>) to host
// port `port` of switch `sw` of a plan made for `out_dir`.
std::string ProcessesHostDevargs(const std::string& out_dir, const std::string& sw, PortId port,
                                 uint32_t index);

// The net_vhost socket of host port `port` of switch `sw` of a plan made for `out_dir`.
std::string ProcessesHostSocket(const std::string& out_dir, const std::string& sw, PortId port);

// The EAL --file-prefix of host `host`'s DPDK commands (SWEMU_EAL).
std::string HostFilePrefix(pid_t tag, const std::string& host);

Result<TestbedPlan> PlanProcessesTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                         pid_t tag, const std::vector<TestbedReplay>& replays = {},
                                         const std::string& replay_binary = "swemu-replay",
                                         uint32_t workers = 1);

}  // namespace swemu
