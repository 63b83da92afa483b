#pragma once
// A switch config file (INI): [switch], [budget], [tm], [port.N] and [program] sections, every
// key optional with the default documented in docs/cli.md. Values use the units of
// pipeline/control/units.h (10G, 16MiB, 2us).
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "pipeline/switch/switch.h"

namespace swemu {

struct LoadedSwitchConfig {
  std::string path;            // the file it came from
  SwitchConfig config;         // validated
  std::string startup_script;  // [switch] cli, resolved against the file's directory; may be empty
  std::vector<PortRate> port_rates;  // [port.N] rate, applied after the switch is created
};

// The default shaping rate of a port when the file does not set tm.port_rate.
inline constexpr uint64_t kDefaultPortRateBps = 10'000'000'000;

// One-line errors: "PATH: KEY: problem" (or "PATH: problem" for syntax errors).
Result<LoadedSwitchConfig> LoadSwitchConfig(const std::string& path);

}  // namespace swemu
