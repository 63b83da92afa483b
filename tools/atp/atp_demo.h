#pragma once
// `swemu-atp demo`: the project's main job, in real time. It starts swemu (one rack, or two
// racks as two switches of one swemu process joined by a ring link) on net_vhost ports,
// attaches W workers and a PS to it over virtio_user from this process (DPDK, kernel bypass),
// runs a few iterations of a real model's gradients with in-network aggregation and then
// without, and prints time, goodput, where the aggregation happened, the switches' aggregator
// statistics, the error against the exact float sums and the speed ratio.
#include <ostream>
#include <string>

#include "hostlib/atp/worker.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/atp.h"
#include "tools/atp/atp_workload.h"

namespace swemu {

struct DemoOptions {
  uint32_t workers = 4;
  uint32_t racks = 1;
  uint32_t elements = kAtpDefaultElements;
  uint32_t aggregators = kAtpDefaultAggregators;
  // Every switch port is shaped to this rate, so the PS's link is the bottleneck it is in a
  // real cluster (at the PS, it carries W times the traffic) and queues build up (ECN).
  std::string link_rate = "1G";
  std::string out_dir = "out/atp_demo";
  std::string swemu_binary;  // empty: next to this executable (../swemu/swemu)
  double timeout_s = 600;    // per pass
  bool busy_poll = true;     // swemu (one rack) and the hosts poll without backing off
  bool verbose = false;      // DPDK's routine log lines too
  // Both or neither: this topology's switches (swemu processes on vhost-user, the processes
  // back end of hostlib/testbed) and this job's hosts instead of --racks.
  std::string topology;
  std::string job;
  WorkloadOptions workload;
  AtpWorkerOptions worker;
};

Status RunAtpDemo(const DemoOptions& options, std::ostream& out, bool* bad_input);
// *bad_input is set when the failure came before any traffic (bad files, options, set-up):
// exit status 2 rather than 1.

}  // namespace swemu
