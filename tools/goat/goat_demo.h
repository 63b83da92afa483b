#pragma once
// `swemu-goat demo`: GOAT in real time, on the network of --fabric or --topology (goat_sim.h's
// GoatSetup). It publishes a plan (swemu-goat publish's files), starts
// every switch in one swemu process busy-polling one lcore (net_vhost host ports; links as
// swemu_link rings in it, as swemu-atp's two-rack demo), reads the job file back, attaches every worker and
// the PS over virtio_user from this process (DPDK), runs rounds of gradients and checks every
// worker's every result against the exact sum of the workers it counted. In the asynchronous
// mode (--async) each round after the first publishes K per switch and sub-model through the
// switches' control sockets (table_modify), from the previous round's arrival history.
#include <boost/program_options.hpp>
#include <ostream>

#include "pipeline/core/status.h"

namespace swemu {

boost::program_options::options_description GoatDemoOptions();
Status RunGoatDemo(const boost::program_options::variables_map& vm, std::ostream& out);

}  // namespace swemu
