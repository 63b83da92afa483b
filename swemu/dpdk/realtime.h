#pragma once
// swemu in real time (no --offline): one switch from --config on DPDK ports, run to completion
// on the EAL main lcore until SIGINT/SIGTERM or --run-for. Set-up errors are one line and exit
// status 2 before any traffic; an mbuf leak found at shutdown is one line and status 1.
#include <ostream>

#include "swemu/command_line.h"

namespace swemu {

int RunRealtime(const CommandLine& cmd, std::ostream& out, std::ostream& err);

}  // namespace swemu
