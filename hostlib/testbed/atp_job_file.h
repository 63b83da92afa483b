#pragma once
// The ATP job file of a topology: hostlib's ATP job text (hostlib/atp/job_config.h) whose host
// lines say where each host is plugged in ("rack_a:0": switch rack_a, port 0). From it come the
// two jobs run on the topology: the job itself (in-network aggregation) and the same workers as
// a plain job (id + 1, group + 1; the switch scripts map it to `atp_job forward_only`). Read by
// swemu-atp sim and demo and by the Python module's AtpFabric (topology=, job=).
#include <map>
#include <string>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "pipeline/core/status.h"
#include "pipeline/switch/switch.h"
#include "swemu/topology_config.h"

namespace swemu {

struct JobPlacement {
  std::string sw;
  PortId port = 0;
};

struct AtpJobFile {
  AtpJobConfig aggregate;             // the file's job
  AtpJobConfig plain;                 // id + 1, group + 1
  std::vector<JobPlacement> workers;  // worker i's switch port
  JobPlacement ps;
};

// `programs` maps each switch name to its program: a worker whose switch does not run "atp"
// is counted at the first ATP switch on its way, the PS's (backward compatibility, section 4.2).
Result<AtpJobFile> LoadAtpJobFile(const std::string& path,
                                  const std::map<std::string, std::string>& programs);

// A job published for hosts on their own machines (swemu-atp publish): each host is placed as
// SWITCH:PORT, and every switch named runs atp. A host's rack, which sets the workers' fan-in,
// is its switch: read with the port as the rack, each worker would be a rack of its own (fan-in
// 1), and the switch would send every worker's packet on to the PS as a "result". Read by
// swemu-atp worker and ps and by the Python module's Worker.from_job. Errors start "PATH: ".
Result<AtpJobFile> LoadPublishedAtpJob(const std::string& path);

// A topology file and the job file that runs on it (swemu-atp sim and demo --topology). Every
// host of the job is on a `host =` port of the topology (an error names the first that is not).
struct AtpTopologyJob {
  TopologyConfig topology;
  AtpJobFile job;
};
Result<AtpTopologyJob> LoadAtpTopologyJob(const std::string& topology_path,
                                          const std::string& job_path);
// The same on a topology already loaded, for a caller that words the topology file's own
// problems itself (swemu-atp: "--topology PATH: ...").
Result<AtpTopologyJob> LoadAtpTopologyJob(TopologyConfig topology, const std::string& job_path);

// The topology's host on `at`'s port, or nullptr.
const TopologyHost* FindJobHost(const TopologyConfig& topology, const JobPlacement& at);

}  // namespace swemu
