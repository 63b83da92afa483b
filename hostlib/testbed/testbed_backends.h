#pragma once
// The real-time back ends of a topology file (swemu --topology FILE --backend NAME):
// - netns (netns_plan.h): one real-time swemu per switch on net_af_packet ports, each host in
//   its own network namespace on a veth pair (the kernel's stack, as between servers), each
//   link between switches a veth pair; root only.
// - processes (processes_plan.h): one real-time swemu per switch on vhost-user ports, hosts
//   are processes attached with virtio_user (swemu's own hosts, swemu-replay, testpmd).
// Links keep their rate, delay and loss as the sending switch ports' shaping and [port.N] wire
// effects: a link between switches in both directions, a host's link toward the host. Hosts
// run the topology's `run` commands and replay --in pcaps.
#include <ostream>

#include "hostlib/testbed/testbed_run.h"
#include "swemu/topology_config.h"

namespace swemu {

// As RunTestbed (testbed_run.h), with 2 for a topology the back end refuses (or no root).
int RunNetnsTestbed(const TopologyConfig& topology, const TestbedOptions& options,
                    std::ostream& out, std::ostream& err);
int RunProcessesTestbed(const TopologyConfig& topology, const TestbedOptions& options,
                        std::ostream& out, std::ostream& err);

}  // namespace swemu
