#pragma once
// The namespace back end's plan (swemu --topology FILE --backend netns): each switch in its own
// namespace swemu-sw-<switch> (af_packet's fanout group ids are per namespace) on net_af_packet
// ports, its port N the veth end "pN"; each host in namespace swemu-<host> with eth0 on a veth
// pair to its switch port, its address, MAC, gateway and neighbours; each link between
// switches a veth pair between their namespaces.
#include <sys/types.h>

#include <string>
#include <vector>

#include "hostlib/testbed/testbed_plan.h"

namespace swemu {

// Checks the topology for this back end (ports exist and are used once, no namespace of the
// names it needs exists yet under /run/netns) and plans it. Each replay makes its host run
// `replay_binary --iface eth0 --in FILE --out DIR/<host>-rx.pcap`. `tag` (the process id) keeps
// EAL file prefixes apart from other runs. Each switch runs on `workers` lcores.
Result<TestbedPlan> PlanNetnsTestbed(const TopologyConfig& topology, const std::string& out_dir,
                                     pid_t tag, const std::vector<TestbedReplay>& replays = {},
                                     const std::string& replay_binary = "swemu-replay",
                                     uint32_t workers = 1);

}  // namespace swemu
