#pragma once
// The [interface.N] sections of a switch file (router interfaces, docs/cli.md): read for
// LoadSwitchConfig, written for FormatSwitchConfig.
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/status.h"
#include "swemu/switch_config.h"

namespace swemu {

// One "interface.N.KEY" entry (mac, ip, ports) into out.config.interfaces; the error without
// the file and key, which the caller adds.
Status ApplyInterfaceKey(const std::string& key, const std::string& value, LoadedSwitchConfig& out);
// After every entry: each interface complete (mac, ip and ports given), sorted by N, and not
// with several workers. An error "interface.N: problem".
Status FinishInterfaces(LoadedSwitchConfig& out);
// One [interface.N] section's keys, as ApplyInterfaceKey reads them back.
std::vector<std::pair<std::string, std::string>> InterfaceLines(const RouterInterface& rif);

}  // namespace swemu
