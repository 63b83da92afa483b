#pragma once
// swemu-gen --workload flows (the default): UDP or TCP flows with chosen MACs, IPs, ports,
// sizes, count, rate and seed, from the FrameBuilder the tests use.
#include "pipeline/core/status.h"
#include "tools/gen/gen_common.h"

namespace swemu::gen {

// The options only this workload takes.
po::options_description FlowsOptions();
// Checks the options (one error line) and writes --out.
Status RunFlows(const po::variables_map& vm);

}  // namespace swemu::gen
