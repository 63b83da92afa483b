#pragma once
// A switch config file (INI): [switch], [budget], [tm], [port.N], [program], and for real time
// [eal] and [dpdk] sections, every
// key optional with the default documented in docs/cli.md. Values use the units of
// pipeline/control/units.h (10G, 16MiB, 2us).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"
#include "pipeline/switch/switch.h"

namespace swemu {

// [port.N] loss and delay: what the wire does to frames the port sends (real time).
struct PortWireEffects {
  double loss = 0;        // probability in [0, 1]
  uint64_t delay_ns = 0;  // at most kMaxPortDelayNs
};
inline constexpr uint64_t kMaxPortDelayNs = 1'000'000'000;

struct LoadedSwitchConfig {
  std::string path;            // the file it came from
  // Validated; [port.N] rate is in config.tm.port_rates, [port.N] queue_depth, ecn_threshold and
  // drop_threshold in config.tm.port_queues.
  SwitchConfig config;
  std::string startup_script;  // [switch] cli, resolved against the file's directory; may be empty
  // Real time only (docs/cli.md): EAL arguments, the mbuf pool, and each port's DPDK device.
  std::string eal_args;  // [eal] args, whitespace-separated
  uint32_t mbufs = 16383;
  uint32_t mbuf_cache = 256;
  uint32_t workers = 1;     // lcores running the switch (1: run to completion on the main lcore)
  bool cut_through = true;  // a run for an idle unshaped port skips the TM's queue (Datapath)
  std::vector<std::pair<PortId, std::string>> port_devargs;  // [port.N] devargs
  std::map<PortId, PortWireEffects> port_effects;            // [port.N] loss, delay
};

// One-line errors: "PATH: KEY: problem" (or "PATH: problem" for syntax errors).
Result<LoadedSwitchConfig> LoadSwitchConfig(const std::string& path);

}  // namespace swemu
