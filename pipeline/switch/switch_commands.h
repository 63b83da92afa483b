#pragma once
// The switch's control commands (BMv2 names where one exists, swemu's own otherwise), split by
// what they act on. docs/cli.md lists them all.
#include <string_view>
#include <vector>

#include "pipeline/control/command_table.h"
#include "pipeline/core/status.h"

namespace swemu {

class Switch;

Status AddSwitchCommands(Switch& sw, CommandTable& commands);

Status AddTableCommands(Switch& sw, CommandTable& commands);     // table_*, register_*, counter_*
Status AddTmCommands(Switch& sw, CommandTable& commands);        // set_queue_*, mc_*, thresholds
Status AddShowCommands(Switch& sw, CommandTable& commands);      // show ...
// digest_deliver, control_time, show digests: only for a program with a digest channel.
Status AddDigestCommands(Switch& sw, CommandTable& commands);

// "3" -> {3}; "all" -> every port. Error names the value and the valid range.
Result<std::vector<uint16_t>> ParsePorts(const Switch& sw, std::string_view text);
// "5" -> {5}; "all" -> 0..7.
Result<std::vector<int>> ParseQueues(std::string_view text);

}  // namespace swemu
