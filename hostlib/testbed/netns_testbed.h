#pragma once
// The namespace back end of a topology file (swemu --topology FILE --backend netns): one
// real-time swemu per switch on net_af_packet ports, each host in its own network namespace on
// a veth pair (the kernel's stack, as between servers), each switch-to-switch link a veth pair
// between the two switches' ports. Links keep their rate, delay and loss as the sending
// switch ports' shaping and [port.N] wire effects: a link between switches in both directions,
// a host's link in the direction toward the host (what the host sends, its kernel sends as is). Hosts get their name, address, MAC, gateway and
// neighbours from the topology, and run its `run` commands. Everything the run made is removed
// when it ends: on success, on an error, and on SIGINT or SIGTERM.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "hostlib/testbed/netns_plan.h"
#include "swemu/topology_config.h"

namespace swemu {

struct NetnsTestbedOptions {
  std::string swemu_binary;  // the swemu to run per switch
  std::string out_dir;       // switch configs, logs and control sockets; host logs
  uint64_t run_for_ns = 0;   // at most this long (0: no bound); also ends when every run ends
  bool busy_poll = false;    // passed to each swemu
  std::vector<NetnsReplay> replays;  // --in SW:PORT=FILE: swemu-replay on that host
  std::string replay_binary;         // swemu-replay
  // --telemetry FILE: each switch samples its queues into FILE (one switch) or, with several,
  // into FILE with "-<switch>" before its extension; every telemetry_period_ns (0: swemu's).
  std::string telemetry;
  uint64_t telemetry_period_ns = 0;
};

// The telemetry file of switch `sw` of `switches` for --telemetry `file`.
std::string SwitchTelemetryPath(const std::string& file, const std::string& sw,
                                std::size_t switches);

// Builds the network, prints how to reach each switch and host on `out`, runs until done and
// tears everything down. Returns the exit status: 0, 1 (a switch or a host failed at run time:
// one line on `err`), 2 (bad topology or set-up refused: one line, nothing left behind), or
// 128 + the signal that stopped it.
int RunNetnsTestbed(const TopologyConfig& topology, const NetnsTestbedOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace swemu
