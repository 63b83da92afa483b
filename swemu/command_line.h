#pragma once
// swemu's command line (Boost.Program_options). Parsing only checks syntax; what the values
// name (ports, files) is checked when the run is set up.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/pcap_fixlen.h"

namespace swemu {

// One --in: "PORT=FILE" (single switch) or "SW:PORT=FILE" (topology).
struct InputSpec {
  std::string text;  // as typed, for messages
  std::string sw;    // empty when only a port was given
  uint16_t port = 0;
  std::string file;
};

// --also-switch CONFIG=SOCKET: one more switch in the same real-time process.
struct AlsoSwitch {
  std::string config;
  std::string control_socket;  // "none": no socket
};

struct CommandLine {
  bool help = false;
  bool version = false;
  bool offline = false;
  bool show_resources = false;
  // --bench (swemu/bench.h): stage throughput over the --in frames, offline, no output files.
  bool bench = false;
  double bench_seconds = 3;   // stop once stable, or after this long
  uint32_t bench_repeat = 0;  // 0: until stable; else exactly this many rounds
  bool json = false;          // --bench's figures as JSON
  bool quiet = false;
  std::string config;    // --config
  std::string topology;  // --topology
  std::vector<InputSpec> inputs;
  std::string out_dir;
  std::optional<uint64_t> seed;
  // Offline: bounds on a run that cannot end (a forwarding loop). Unset: the defaults of
  // RunOffline (the inputs' time span + 1 h; 10 M events + 1000 per input frame).
  std::optional<uint64_t> max_virtual_ns;
  std::optional<uint64_t> max_events;
  // Offline: the engine's partitions (0: one agenda, the default's order; N >= 1: N partitions
  // at once, each on a thread, the same output for every N).
  uint32_t partitions = 0;
  // Offline: what to do with input records cut short by their capture's snap length.
  Fixlen fixlen = Fixlen::kNone;
  std::string telemetry;             // empty: no telemetry record
  uint64_t telemetry_period_ns = 0;  // 0: the mode's default
  // Real time (without --offline).
  std::string backend;  // --topology in real time: "netns" (hostlib/testbed); empty: none
  uint32_t workers = 1;  // --backend: each switch's [dpdk] workers (lcores)
  bool busy_poll = false;
  uint64_t run_for_ns = 0;            // 0: until SIGINT/SIGTERM
  uint64_t stats_interval_ns = 0;     // 0: no periodic stats line
  bool stats_stages = false;          // each stats line followed by the per-stage cycles
  std::vector<std::string> eal_args;  // everything after "--"
  std::string control_socket;         // empty: DefaultControlSocketPath(); "none": no socket
  // Real time: more switches run by this process on the same lcore as --config's, in order.
  std::vector<AlsoSwitch> also_switches;
  uint32_t control_mode = 0600;
  std::string control_tcp;           // empty: no TCP listener
  std::string pcap_dir;              // empty: no recording
  std::vector<uint16_t> pcap_ports;  // empty: every port with devargs
  uint32_t pcap_snaplen = 256;
  uint64_t pcap_max_bytes = 0;  // all of --pcap-dir's files together; 0: no cap
};

// One-line errors naming the option: "--in: ...".
Result<CommandLine> ParseCommandLine(int argc, const char* const argv[]);
std::string Usage();
Result<InputSpec> ParseInputSpec(const std::string& text);

}  // namespace swemu
