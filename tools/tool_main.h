#pragma once
// The main() of every swemu tool: exceptions (from Boost.Program_options, say) become one line
// naming the tool and exit status 2, as every bad input does; a signal ends the tool without
// leaving its temporary files or child switches behind (pipeline/core/interrupt.h). A tool
// started by mpirun among several processes says, once, that it runs as one, and ends (each
// process would run the whole experiment and print it again).
#include <exception>
#include <iostream>

#include "pipeline/core/interrupt.h"
#include "pipeline/engine/rank_exchange.h"

namespace swemu {

template <typename Fn>
int RunToolMain(const char* tool, Fn&& tool_main) {
  InstallInterruptCleanup(tool);
  if (const LaunchedRank launched = LaunchedByMpirun(); launched.ranks > 1) {
    if (launched.rank == 0) {
      std::cerr << tool << ": runs as one process, not " << launched.ranks
                << " under mpirun (only swemu --offline spreads over ranks: docs/cli.md, "
                   "\"Ranks\")\n";
    }
    return 2;
  }
  try {
    return tool_main();
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << '\n';
    return 2;
  }
}

}  // namespace swemu
