#pragma once
// `swemu-goat sim`: a GOAT job packet by packet in the virtual-time engine
// (hostlib/goat/experiment.h), on the paper's testbed (three switches) or a leaf-spine, for one
// or more schemes (GOAT, ATP-style sharing, PS-only), printing the PS's aggregation traffic and
// the total communication beside each other.
#include <boost/program_options.hpp>
#include <ostream>

#include "pipeline/core/status.h"

namespace swemu {

boost::program_options::options_description GoatSimOptions();
Status RunGoatSim(const boost::program_options::variables_map& vm, std::ostream& out);

}  // namespace swemu
