#pragma once
// swemu-atp's job file: hostlib's ATP job text (hostlib/atp/job_config.h) whose host lines say
// where each host is plugged in ("rack_a:0": switch rack_a, port 0). From it come the two jobs
// swemu-atp runs: the job itself (in-network aggregation) and the same workers as a plain job
// (id + 1, group + 1; the switch scripts map it to `atp_job forward_only`).
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

// A topology file and the job file that runs on it (swemu-atp sim and demo --topology).
struct AtpTopologyJob {
  TopologyConfig topology;
  AtpJobFile job;
};
Result<AtpTopologyJob> LoadAtpTopologyJob(const std::string& topology_path,
                                          const std::string& job_path);

}  // namespace swemu
