#pragma once
// The inverse of LoadSwitchConfig (swemu/switch_config.h): the INI text of a switch config, so
// that code which makes a switch's file (the testbeds, the tools' demos) builds a
// LoadedSwitchConfig and writes it instead of spelling the keys out by hand.
#include <string>

#include "pipeline/core/status.h"
#include "swemu/switch_config.h"

namespace swemu {

// How the text is laid out besides the config's own values.
struct SwitchConfigFormat {
  // Comment lines written first: each begins with '#' and ends with '\n' (may be empty).
  std::string header;
  // Empty: `cli` is written as an absolute path, so the file may live anywhere. Otherwise the
  // directory the file is written to: `cli` is written relative to it (LoadSwitchConfig resolves
  // it against the file's directory), so the file and its script can move together, as bundled
  // configs do.
  std::string cli_relative_to;
};

// INI text that LoadSwitchConfig reads back into an equal LoadedSwitchConfig (every field but
// `path`): the header, then [switch] name, ports and program always, every other key only when
// it differs from its default; [program] right after [switch], its keys in the order they were
// set (a loaded file's order); [port.N] sections follow the order of tm.port_rates and
// port_devargs (a port's queue_depth, ecn_threshold, drop_threshold, loss and delay go in its
// first section). `startup_script` (a path from the current directory) is written as `format`
// says. Sizes, rates and durations are exact ("16MiB", "10G", "1500B", "50us"); a loss is the
// shortest decimal that reads back the same. Fields no key sets (tm.num_ports,
// parser.max_vlan_tags, a queue's weight and rate_pps) are not written. Values holding '#' or a
// line break cannot be written: WriteSwitchConfig refuses.
std::string FormatSwitchConfig(const LoadedSwitchConfig& config,
                               const SwitchConfigFormat& format = {});

// Writes FormatSwitchConfig's text as `path` (aside, then renamed into place: OutputFiles);
// an error, writing nothing, when a value could not be read back as it is (a '#', a line break,
// blanks at either end, an empty name, program, devargs or [eal] args, a bad [program] key, a
// header line that is not a comment, a tm.port_queues entry that sets nothing).
Status WriteSwitchConfig(const LoadedSwitchConfig& config, const std::string& path,
                         const SwitchConfigFormat& format = {});

}  // namespace swemu
