#pragma once
// swemu's command line (Boost.Program_options). Parsing only checks syntax; what the values
// name (ports, files) is checked when the run is set up.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

// One --in: "PORT=FILE" (single switch) or "SW:PORT=FILE" (topology).
struct InputSpec {
  std::string text;  // as typed, for messages
  std::string sw;    // empty when only a port was given
  uint16_t port = 0;
  std::string file;
};

struct CommandLine {
  bool help = false;
  bool version = false;
  bool offline = false;
  bool show_resources = false;
  bool quiet = false;
  std::string config;    // --config
  std::string topology;  // --topology
  std::vector<InputSpec> inputs;
  std::string out_dir;
  std::optional<uint64_t> seed;
};

// One-line errors naming the option: "--in: ...".
Result<CommandLine> ParseCommandLine(int argc, const char* const argv[]);
std::string Usage();
Result<InputSpec> ParseInputSpec(const std::string& text);

}  // namespace swemu
