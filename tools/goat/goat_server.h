#pragma once
// swemu-goat's commands for real servers behind swemu switches (docs/cli.md, "swemu-goat"):
//   worker  one worker of a published job (goat.job) on this machine;
//   ps      the job's parameter server on this machine;
// each over kernel UDP sockets, or with --port DEVARGS over one DPDK port (kernel bypass: whole
// frames with the job file's MACs). Both reuse hostlib/goat's GoatWorker and GoatPs on a
// hostlib/dpdk HostNet (a UdpSocketTransport or a DPDK port). The PS sends each
// result to each worker it counted as a unicast datagram to the worker's address and the job's
// port, so results reach kernel sockets with no multicast; a host takes its place in the job by
// owning its address and holding the job's port on it alone (docs/wire.md, "GOAT on servers").
#include <boost/program_options.hpp>
#include <ostream>

#include "pipeline/core/status.h"

namespace swemu {

boost::program_options::options_description GoatWorkerCommandOptions();
boost::program_options::options_description GoatPsCommandOptions();
// Bad input (exit 2) returns a message starting with the option at fault ("--job ...").
Status RunGoatWorkerCommand(const boost::program_options::variables_map& vm, std::ostream& out);
Status RunGoatPsCommand(const boost::program_options::variables_map& vm, std::ostream& out);

}  // namespace swemu
