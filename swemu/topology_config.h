#pragma once
// A topology file (INI, one [topology] section): switches, the links between them (rate, delay,
// loss) and the host ports, e.g.
//   switch = leaf1 leaf1.ini
//   link = leaf1:2 spine:0 rate=10G delay=1us loss=0.001
//   host = leaf1:0 delay=500ns
//   seed = 1
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "swemu/switch_config.h"

namespace swemu {

struct TopologyHost {
  std::string sw;
  PortId port = 0;
  TimeNs delay_ns = 0;
  double loss = 0;
};

struct TopologyConfig {
  std::string path;
  uint64_t seed = 1;
  std::vector<LoadedSwitchConfig> switches;  // config.name is the topology's name for it
  std::vector<LinkSpec> links;
  std::vector<TopologyHost> hosts;
};

// Loads the file and every switch config it names (paths relative to the topology file).
// Which ports exist and are free is checked when the engine is built from it.
Result<TopologyConfig> LoadTopology(const std::string& path);

// "NAME:PORT" -> name and port.
Status ParseSwitchPort(const std::string& text, std::string* sw, PortId* port);

}  // namespace swemu
