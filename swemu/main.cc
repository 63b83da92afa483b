// swemu: the emulated PISA switch. Everything lives in swemu_app; main() hands it the real-time
// back ends of a topology (hostlib/testbed: main.cc is the one front end in swemu/) and catches
// what escaped (no library throws on purpose) so even that ends with one line and status 2.
#include <csignal>
#include <exception>
#include <iostream>

#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/testbed_backends.h"
#include "pipeline/core/interrupt.h"
#include "pipeline/mpi/mpi_ranks.h"
#include "swemu/offline.h"

namespace {

// --backend: this same binary runs each switch, swemu-replay beside it each --in.
swemu::TestbedOptions Options(const swemu::CommandLine& cmd) {
  swemu::TestbedOptions options;
  options.swemu_binary = swemu::SelfDirectory() + "/swemu";
  options.out_dir = cmd.out_dir.empty() ? "out/testbed" : cmd.out_dir;
  options.run_for_ns = cmd.run_for_ns;
  options.busy_poll = cmd.busy_poll;
  options.workers = cmd.workers;
  options.telemetry = cmd.telemetry;
  options.telemetry_period_ns = cmd.telemetry_period_ns;
  options.tools_dir = swemu::SelfDirectory() + "/../tools";
  options.replay_binary = options.tools_dir + "/swemu-replay";
  for (const swemu::InputSpec& in : cmd.inputs)
    options.replays.push_back({in.sw, in.port, in.file});
  return options;
}

int RunNetns(const swemu::CommandLine& cmd, const swemu::TopologyConfig& topology,
             std::ostream& out, std::ostream& err) {
  return swemu::RunNetnsTestbed(topology, Options(cmd), out, err);
}

int RunProcesses(const swemu::CommandLine& cmd, const swemu::TopologyConfig& topology,
                 std::ostream& out, std::ostream& err) {
  return swemu::RunProcessesTestbed(topology, Options(cmd), out, err);
}

}  // namespace

int main(int argc, char** argv) {
  // A vhost-user or virtio_user peer that goes away must not kill the switch with SIGPIPE; the
  // write fails with EPIPE instead and the port is handled as down.
  std::signal(SIGPIPE, SIG_IGN);
  // Offline runs remove their staging files after a signal; real time installs its own stop.
  swemu::InstallInterruptCleanup("swemu");
  try {
    // Under mpirun with several processes, each is a rank of one offline run.
    std::unique_ptr<swemu::MpiRanks> ranks = swemu::MpiRanks::Join(&argc, &argv);
    if (ranks != nullptr) {
      // mpirun ends the others with SIGTERM when a rank dies: each says why (one line with
      // two ranks), as no survivor can tell whether rank 0 is among them.
      swemu::SetInterruptNote(
          " (under mpirun: a rank ended before the run did, or the job was stopped); no output "
          "was written");
    }
    const int status = swemu::SwemuMain(argc, argv, std::cout, std::cerr,
                                        {{"netns", RunNetns}, {"processes", RunProcesses}},
                                        ranks.get());
    if (ranks != nullptr) {
      // The run is over on this rank (its outputs in place or removed). A rank that ends with an
      // error makes mpirun stop the others, which lose nothing now: silently.
      swemu::SetInterruptMessageFd(-1);
      ranks.reset();  // a barrier, then MPI_Finalize
    }
    return status;
  } catch (const std::exception& e) {
    std::cerr << "swemu: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "swemu: unknown exception\n";
  }
  return 2;
}
