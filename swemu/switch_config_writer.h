#pragma once
// The inverse of LoadSwitchConfig (swemu/switch_config.h): the INI text of a switch config, so
// that code which makes a switch's file (the testbeds, the tools' demos) builds a
// LoadedSwitchConfig and writes it instead of spelling the keys out by hand.
#include <string>

#include "pipeline/core/status.h"
#include "swemu/switch_config.h"

namespace swemu {

// INI text that LoadSwitchConfig reads back into an equal LoadedSwitchConfig (every field but
// `path`). [switch] name, ports, program and seed are always written, every other key only when
// it differs from its default; [port.N] sections follow the order of tm.port_rates and port_devargs.
// `startup_script` is written as an absolute path (made absolute against the current directory
// when it is relative), so the file may live anywhere. Sizes, rates and durations are exact
// ("16MiB", "10G", "1500B", "50us"); a loss is the shortest decimal that reads back the same.
// Fields no key sets (tm.num_ports, parser.max_vlan_tags, a queue's weight and rate_pps) are
// not written. Values holding '#' or a line break cannot be written: WriteSwitchConfig refuses.
std::string FormatSwitchConfig(const LoadedSwitchConfig& config);

// Writes FormatSwitchConfig's text as `path` (aside, then renamed into place: OutputFiles);
// an error, writing nothing, when a value could not be read back as it is (a '#', a line break,
// blanks at either end, an empty name, program, devargs or [eal] args, a bad [program] key).
Status WriteSwitchConfig(const LoadedSwitchConfig& config, const std::string& path);

}  // namespace swemu
