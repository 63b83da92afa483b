#include "hostlib/testbed/testbed_backends.h"

#include <unistd.h>

#include "hostlib/testbed/netns_plan.h"
#include "hostlib/testbed/processes_plan.h"

namespace swemu {
namespace {

int Run(const Result<TestbedPlan>& plan, const TopologyConfig& topology,
        const TestbedOptions& options, std::ostream& out, std::ostream& err) {
  if (!plan.ok()) {
    err << "swemu: " << plan.message() << "\n";
    return 2;
  }
  return RunTestbed(*plan, options, topology.path, out, err);
}

}  // namespace

int RunNetnsTestbed(const TopologyConfig& topology, const TestbedOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (geteuid() != 0) {
    err << "swemu: --backend netns: needs root (it makes network namespaces and veth pairs)\n";
    return 2;
  }
  return Run(
      PlanNetnsTestbed(topology, options.out_dir, getpid(), options.replays, options.replay_binary,
                       options.workers),
      topology, options, out, err);
}

int RunProcessesTestbed(const TopologyConfig& topology, const TestbedOptions& options,
                        std::ostream& out, std::ostream& err) {
  return Run(PlanProcessesTestbed(topology, options.out_dir, getpid(), options.replays,
                                  options.replay_binary, options.workers),
             topology, options, out, err);
}

}  // namespace swemu
