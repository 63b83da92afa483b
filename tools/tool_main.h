#pragma once
// The main() of every swemu tool: exceptions (from Boost.Program_options, say) become one line
// naming the tool and exit status 2, as every bad input does; a signal ends the tool without
// leaving its temporary files or child switches behind (pipeline/core/interrupt.h).
#include <exception>
#include <iostream>

#include "pipeline/core/interrupt.h"

namespace swemu {

template <typename Fn>
int RunToolMain(const char* tool, Fn&& tool_main) {
  InstallInterruptCleanup(tool);
  try {
    return tool_main();
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << '\n';
    return 2;
  }
}

}  // namespace swemu
