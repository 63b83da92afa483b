#pragma once
// `swemu-goat publish`: a plan (GOAT's, ATP-style sharing or PS-only) for a network written out
// as files users run: per switch a startup script (dmac and goat_route for the network, the
// plan's goat_node entries) and a real-time config (net_vhost host ports; each link a vhost-user
// socket on the switch listed first and virtio_user on the other), a topology of them for the
// virtual-time engine (`swemu --topology`), and the job file the hosts read
// (hostlib/goat/job_file.h: each worker's node per sub-model).
#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/goat/experiment.h"
#include "hostlib/testbed/swemu_network.h"
#include "pipeline/control/units.h"
#include "pipeline/tm/tm_config.h"
#include "tools/goat/goat_sim.h"

namespace swemu {

struct GoatPublishLayout {
  std::string dir;         // where the files go
  std::string socket_dir;  // where the vhost-user sockets go (absolute)
  std::string file_prefix;
  std::string link_rate = FormatRate(kDefaultPortRateBps);  // every port's shaping (swemu's rate syntax; "0": unshaped)
  std::string command = "swemu-goat";  // named in the files' headers
  // The socket of `sw`'s port (a host port, or the vhost-user side of a link).
  std::string VhostSocket(const std::string& sw, uint16_t port) const;
  // The network's switches (in the spec's order) and links as swemu processes with this layout.
  SwemuNetwork Network(const GoatFabricSpec& spec) const;
};

// The plan of `scheme` on the setup's network and model, and the job it gives the hosts.
struct GoatPublishedPlan {
  GoatPublished published;
  GoatJob job;
  KrgsStats krgs;
};
Result<GoatPublishedPlan> MakeGoatPlan(const GoatSetup& setup, GoatScheme scheme, uint32_t k);

// Writes <sw>.cli, <sw>.ini (every switch), goat.topo and goat.job into layout.dir; returns the
// paths written.
Result<std::vector<std::string>> WriteGoatFiles(const GoatSetup& setup,
                                                const GoatPublishedPlan& plan,
                                                const GoatPublishLayout& layout);

// Each worker's round-0 fragments (values GoatDemoValue) as DIR/<worker>.pcap, paced at 1 Gbit/s:
// inputs for an offline run of goat.topo.
Result<std::vector<std::string>> WriteGoatWorkerPcaps(const GoatSetup& setup, const GoatJob& job,
                                                      const std::string& dir);
// Worker w's value at element i of `round` in the demo and the pcaps (small: 64 workers never
// overflow int32).
int32_t GoatDemoValue(uint32_t round, uint32_t worker, uint64_t i);

// A hosts list (hostlib/testbed/hosts_list.h) naming planned hosts (w1.., ps) with their real
// IP and MAC, each at its planned role and switch port; the others keep the made-up addresses.
// Errors: "hosts ...: problem" (no MAC `learn`: the switches' dmac entries need it).
Status ApplyGoatHosts(std::string_view text, GoatFabric* fabric);

boost::program_options::options_description GoatPublishOptions();
// `command` is the command line, recorded in the files so that they can be made again.
Status RunGoatPublish(const boost::program_options::variables_map& vm, std::ostream& out,
                      const std::string& command);

}  // namespace swemu
