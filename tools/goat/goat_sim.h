#pragma once
// `swemu-goat sim`: a GOAT job packet by packet in the virtual-time engine
// (hostlib/goat/experiment.h), on the paper's testbed (three switches), a leaf-spine or a
// topology file's network (--topology: GoatFabricSpec::FromTopology), for one
// or more schemes (GOAT, ATP-style sharing, PS-only), printing the PS's aggregation traffic and
// the total communication beside each other.
#include <boost/program_options.hpp>
#include <ostream>

#include "hostlib/goat/fabric.h"
#include "pipeline/core/status.h"
#include "pipeline/wire/goat.h"
#include "tools/goat/goat_common.h"

namespace swemu {

// The network and the model of sim, publish and demo: --fabric (testbed or leaf-spine) and its
// shape, --programmable, --memory, or --topology FILE instead of those; --model, --submodels,
// --scale, --elements, --seed.
struct GoatSetup {
  GoatFabric fabric;
  std::string description;
  std::string memory;  // as given; empty with --topology (the switches' own slots)
  uint64_t slots = 0;  // per programmable switch, scaled (--topology: the largest switch's)
  double scale = 1;
  uint64_t seed = 1;
  uint16_t elements = kGoatDefaultElements;
  goat_tool::ModelSlots model;  // scaled, split into sub-models of at most `slots`
};
void AddGoatSetupOptions(boost::program_options::options_description& options);
Result<GoatSetup> MakeGoatSetup(const boost::program_options::variables_map& vm);
// --delay W=TIME (repeatable): each worker's start delay, 0 for the others.
Result<std::vector<TimeNs>> WorkerDelays(const boost::program_options::variables_map& vm,
                                         uint32_t workers);

boost::program_options::options_description GoatSimOptions();
Status RunGoatSim(const boost::program_options::variables_map& vm, std::ostream& out);

}  // namespace swemu
