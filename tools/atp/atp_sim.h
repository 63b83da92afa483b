#pragma once
// `swemu-atp --topology T --job J`: the whole ATP job in virtual time. The topology's switches
// and links run in the offline engine; the job's workers and PS are hostlib Contexts attached
// to their switch ports (co-simulation), so a run is deterministic for a seed.
#include <ostream>
#include <string>

#include "hostlib/atp/worker.h"
#include "pipeline/core/status.h"
#include "tools/atp/atp_workload.h"

namespace swemu {

struct SimOptions {
  std::string topology;
  std::string job;
  std::string out_dir;    // counters.json; empty: none
  double host_loss = -1;  // overrides every host link's loss when >= 0
  int lossy_worker = -1;  // >= 0: host_loss applies to this worker's link only
  WorkloadOptions workload;
  AtpWorkerOptions worker;
};

Status RunAtpSim(const SimOptions& options, std::ostream& out, bool* bad_input);
// *bad_input is set when the failure came before any traffic (bad files, options, set-up):
// exit status 2 rather than 1.

}  // namespace swemu
