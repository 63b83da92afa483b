#pragma once
// swemu-gen --workload atp: one ATP job's gradient traffic from W workers of one rack toward
// its PS, as hostlib's workers build it, window-limited and serialized per worker link, with
// optional background TCP flows on the same links. One pcap per worker (`{w}` in --out) or
// all of them merged in time order.
#include <ostream>

#include "pipeline/core/status.h"
#include "tools/gen/gen_common.h"

namespace swemu::gen {

// The options only this workload takes (the background flows' are BackgroundOptions()).
po::options_description AtpOptions();
// Checks the options (one error line), writes the output(s) and prints one summary line.
Status RunAtp(const po::variables_map& vm, std::ostream& out);

}  // namespace swemu::gen
