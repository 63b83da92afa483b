#pragma once
// `swemu --config FILE --bench --in PORT=FILE.pcap ...`: the stage throughput of a configured
// switch (program, tables, startup script) over a pcap's frames, on one core, no DPDK. The frames
// go through the switch in bursts of up to 32, pass after pass, until the figures are stable;
// every pass starts from cleared register arrays, so a stateful program does the same work in
// each. Prints ns/packet and Mpps of the parser, each stage holding a table or register array,
// the program's work between stages, the TM's enqueue and dequeue, the deparser and the whole
// pipeline (docs/cli.md, "swemu --bench").
#include <ostream>

#include "pipeline/core/status.h"
#include "swemu/command_line.h"

namespace swemu {

Status RunBench(const CommandLine& cmd, std::ostream& out);

}  // namespace swemu
