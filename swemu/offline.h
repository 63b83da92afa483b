#pragma once
// The offline (virtual-time) run: switches from --config or --topology, pcaps in through --in,
// one pcap per host port plus counters.json out to --out-dir. Everything is loaded and checked
// before the first output file is written.
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/engine/engine.h"
#include "swemu/command_line.h"
#include "swemu/switch_config.h"
#include "swemu/topology_config.h"

namespace swemu {

// What a run is made of, from the command line and the config files.
struct RunPlan {
  std::string topology_path;  // empty for a single switch; prefixes link and host errors
  uint64_t seed = 1;
  std::vector<LoadedSwitchConfig> switches;
  std::vector<LinkSpec> links;
  std::vector<HostPortSpec> hosts;  // in_pcap from --in, out_pcap under --out-dir
  // --partitions: 0 one agenda; else partition_of[i] for switches[i] (the topology's, or
  // AssignPartitions').
  uint32_t partitions = 0;
  std::vector<std::pair<std::string, uint32_t>> given_partitions;  // the topology's
  std::vector<uint32_t> partition_of;
};

Result<RunPlan> MakeRunPlan(const CommandLine& cmd);
// Switches (with their startup scripts), links and host ports; nothing is written yet.
Result<std::unique_ptr<Engine>> BuildEngine(const RunPlan& plan);

Status ShowResources(const CommandLine& cmd, std::ostream& out);
// With `ranks` (mpirun), this process's share of the run: see Engine's "Ranks".
Status RunOffline(const CommandLine& cmd, std::ostream& out, RankExchange* ranks = nullptr);

// The whole program behind main(): exit status 0, or 2 after one line on `err` (real time:
// also 1 after an mbuf leak, see swemu/dpdk/realtime.h).
// A real-time back end of a topology (--backend NAME): runs it, returns the exit status. The
// back ends live above swemu/ (hostlib/testbed); main.cc hands them in.
using TopologyBackend = std::function<int(const CommandLine& cmd, const TopologyConfig& topology,
                                          std::ostream& out, std::ostream& err)>;
using TopologyBackends = std::map<std::string, TopologyBackend>;

// Under mpirun every rank calls it with `ranks`; only rank 0 writes to `out` and `err`.
int SwemuMain(int argc, const char* const argv[], std::ostream& out, std::ostream& err,
              const TopologyBackends& backends = {}, RankExchange* ranks = nullptr);

}  // namespace swemu
