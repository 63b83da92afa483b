#pragma once
// A topology file (INI, one [topology] section): switches, the links between them (rate, delay,
// loss) and the host ports, e.g.
//   switch = leaf1 leaf1.ini
//   link = leaf1:2 spine:0 rate=10G delay=1us loss=0.001
//   host = leaf1:0 delay=500ns name=h0 ip=10.0.1.1/24 mac=02:00:00:00:01:01 gw=10.0.1.254
//   host = leaf1:1 name=ps role=ps   (a role for the experiments that take --topology)
//   run = h0 iperf3 -s
//   include = leaf_spine.topo   (another file's lines, as if written here)
//   seed = 1
// A host's name, address, MAC and gateway matter to the real-time back ends, where the host is a
// network namespace; `run` lines are shell commands run in a host's namespace (the engine, which
// co-simulates its hosts, ignores them).
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "swemu/switch_config.h"

namespace swemu {

struct TopologyHost {
  std::string sw;
  PortId port = 0;
  TimeNs delay_ns = 0;
  double loss = 0;
  std::string name;     // unique; default "SW-pPORT"
  std::string ip;       // "A.B.C.D/LEN" or empty
  std::string mac;      // "aa:bb:cc:dd:ee:ff" or empty (the kernel picks one)
  std::string gateway;  // "A.B.C.D" within ip's subnet, or empty
  std::string gateway_mac;  // the gateway's MAC, installed as a permanent neighbour, or empty
  // What the host is to the system an experiment runs (e.g. worker, ps, background): each
  // experiment that takes --topology names the roles it knows; empty when the file says none.
  std::string role;
};

// One `run = HOST COMMAND...` line: a shell command for host HOST's namespace.
struct TopologyRun {
  std::string host;
  std::string command;
};

struct TopologyConfig {
  std::string path;
  uint64_t seed = 1;
  std::vector<LoadedSwitchConfig> switches;  // config.name is the topology's name for it
  std::vector<LinkSpec> links;
  std::vector<TopologyHost> hosts;
  std::vector<TopologyRun> runs;
  // `switch = NAME FILE partition=K`: the partitions the file gives (swemu --partitions), by name.
  std::vector<std::pair<std::string, uint32_t>> partitions;
};

// Loads the file and every switch config it names (paths relative to the topology file).
// Which ports exist and are free is checked when the engine is built from it.
Result<TopologyConfig> LoadTopology(const std::string& path);

// Adds the switches, each with its links' rates as its ports' rates (ApplyLinkRates), then the
// links, to an engine (hosts are the caller's). An engine of several partitions gets the
// switches spread as AssignPartitions says (by links; hosts are not known here).
Status AddSwitchesAndLinks(Engine& engine, const std::vector<LoadedSwitchConfig>& switches,
                           const std::vector<LinkSpec>& links);

// "NAME:PORT" -> name and port.
Status ParseSwitchPort(const std::string& text, std::string* sw, PortId* port);

}  // namespace swemu
