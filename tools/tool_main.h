#pragma once
// The main() of every swemu tool: exceptions (from Boost.Program_options, say) become one line
// naming the tool and exit status 2, as every bad input does.
#include <exception>
#include <iostream>

namespace swemu {

template <typename Fn>
int RunToolMain(const char* tool, Fn&& tool_main) {
  try {
    return tool_main();
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << '\n';
    return 2;
  }
}

}  // namespace swemu
