#include "swemu/command_line.h"

#include <boost/program_options.hpp>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "pipeline/control/units.h"
#include "swemu/topology_config.h"

namespace swemu {
namespace po = boost::program_options;
namespace {

po::options_description Options() {
  po::options_description options("Options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("config,c", po::value<std::string>()->value_name("FILE"),
       "one switch: its config file (INI); every port is a host port")
      ("topology,t", po::value<std::string>()->value_name("FILE"),
       "several switches, links and host ports (topology INI)")
      ("offline", "run in virtual time from pcap files (default: real time on DPDK ports)")
      ("backend", po::value<std::string>()->value_name("NAME"),
       "real time with --topology: netns (a swemu per switch on net_af_packet, each host a "
       "network namespace) or processes (a swemu per switch on vhost-user, hosts on virtio_user)")
      ("workers", po::value<std::string>()->value_name("N"),
       "with --backend: each switch on N lcores, its [dpdk] workers = N (default 1: one lcore a "
       "switch)")
      ("in,i", po::value<std::vector<std::string>>()->value_name("SPEC"),
       "replay a pcap into a port: PORT=FILE (--config) or SW:PORT=FILE (--topology); repeatable")
      ("out-dir,o", po::value<std::string>()->value_name("DIR"),
       "write one pcap per host port and counters.json here (created if missing)")
      ("seed", po::value<std::string>()->value_name("N"),
       "replace every seed in the config files (switch seeds and loss)")
      ("max-virtual-time", po::value<std::string>()->value_name("DURATION"),
       "offline: stop with an error once virtual time passes the first event by this much "
       "(default: the inputs' span + 1h)")
      ("max-events", po::value<std::string>()->value_name("N"),
       "offline: stop with an error after N events (default: 10M + 1000 per input frame)")
      ("partitions", po::value<std::string>()->value_name("N"),
       "offline: run the topology's switches in N partitions at once, one thread each (1..256, "
       "at most the switches); the same output for every N")
      ("fixlen", po::value<std::string>()->value_name("MODE"),
       "offline: input frames cut short by the capture's snap length: pad (zeros to the wire "
       "length), trunc (rewrite IPv4/UDP lengths and checksums to the captured bytes) or none "
       "(send as captured; the default)")
      ("telemetry", po::value<std::string>()->value_name("FILE"),
       "sample every active queue's depth, CE marks and drops into FILE (CSV) each "
       "--telemetry-period: exact in virtual time offline, sampled off the fast path in real "
       "time (swemu-analyze reads DIR/telemetry.csv)")
      ("telemetry-period", po::value<std::string>()->value_name("DURATION"),
       "the telemetry sampling period (default 100us offline, 1ms in real time)")
      ("show-resources", "print the loaded program's resource report and exit")
      ("bench", "measure the stage throughput of --config over the --in frames (offline, one "
       "core): ns/packet and Mpps of the parser, each stage, the TM, the deparser and the whole")
      ("bench-seconds", po::value<std::string>()->value_name("SECONDS"),
       "--bench: stop once the figures are stable or after this long (default 3)")
      ("bench-repeat", po::value<std::string>()->value_name("N"),
       "--bench: exactly N rounds, stable or not (default: until stable)")
      ("json", "--bench: print the figures as JSON")
      ("quiet,q", "do not print the per-port summary")
      ("busy-poll", "real time: never back off when idle (benchmarks)")
      ("run-for", po::value<std::string>()->value_name("DURATION"),
       "real time: stop after this long (e.g. 2s), as on SIGINT")
      ("stats-interval", po::value<std::string>()->value_name("SECONDS"),
       "real time: print rates and drops every SECONDS (e.g. 1, 0.5)")
      ("stats-stages", "real time, with --stats-interval: after each line, the cycles per "
       "packet of each stage since the start (`show runtime`'s per-stage lines)")
      ("control-socket", po::value<std::string>()->value_name("PATH"),
       "real time: control socket path (default /run/swemu.sock as root, else "
       "/tmp/swemu-<uid>.sock; \"none\" for no socket)")
      ("also-switch", po::value<std::vector<std::string>>()->value_name("CONFIG=SOCKET"),
       "real time: run this config's switch too, in this process and on the same lcore as "
       "--config's (one loop runs each in turn, so several switches need one core, not one "
       "each), its control socket at SOCKET (\"none\": no socket); repeatable. The first "
       "--config's [dpdk] EAL settings apply; every switch needs [dpdk] workers = 1")
      ("control-mode", po::value<std::string>()->value_name("OCTAL"),
       "real time: permissions of the control socket (default 0600)")
      ("control-tcp", po::value<std::string>()->value_name("[ADDR:]PORT"),
       "real time: also listen on TCP; ADDR defaults to 127.0.0.1 (loopback)")
      ("pcap-dir", po::value<std::string>()->value_name("DIR"),
       "real time: record ports' rx and tx to DIR/port<N>-rx.pcap and -tx.pcap")
      ("pcap-ports", po::value<std::string>()->value_name("LIST"),
       "real time: the ports --pcap-dir records, e.g. 0,2 (default: every port with devargs)")
      ("pcap-snaplen", po::value<std::string>()->value_name("BYTES"),
       "real time: bytes of each frame --pcap-dir keeps (default 256)")
      ("pcap-max-bytes", po::value<std::string>()->value_name("SIZE"),
       "real time: stop recording once --pcap-dir's files hold SIZE in all, e.g. 500MB (default: "
       "no cap; a warning past 1 GB)");
  // clang-format on
  return options;
}

// "0,2,3": port numbers, each once.
Result<std::vector<uint16_t>> ParsePortList(const std::string& text) {
  std::vector<uint16_t> ports;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? comma : comma - at);
    Result<uint64_t> port = ParseUint(item, 0, 0xFFFE);
    if (!port.ok()) return Status::Error("port " + port.message());
    for (uint16_t seen : ports) {
      if (seen == *port) return Status::Error("port " + item + " given twice");
    }
    ports.push_back(static_cast<uint16_t>(*port));
    if (comma == std::string::npos) return ports;
    at = comma + 1;
  }
}

// A positive duration within a day; a plain number means seconds ("0.5", "500ms").
Result<uint64_t> ParseSeconds(const std::string& text) {
  Result<uint64_t> ns = ParseDurationOption(text);
  if (!ns.ok()) return ns;
  if (*ns == 0 || *ns > 86400ull * 1'000'000'000)
    return Status::Error(text + " is not in (0, 86400] s");
  return ns;
}

}  // namespace

std::string Usage() {
  std::ostringstream out;
  out << "usage: swemu --config FILE [--busy-poll] [--run-for D] [--stats-interval S] [-- EAL...]\n"
         "       swemu --config FILE --offline [--in PORT=FILE.pcap ...] --out-dir DIR [--seed N]\n"
         "             [--fixlen pad|trunc|none]\n"
         "       swemu --topology FILE --offline [--in SW:PORT=FILE.pcap ...] --out-dir DIR\n"
         "       swemu --topology FILE --backend netns|processes [--run-for D] [--out-dir DIR]\n"
         "       swemu (--config FILE | --topology FILE) --show-resources\n"
         "       swemu --config FILE --bench --in PORT=FILE.pcap ... [--bench-seconds S] "
         "[--json]\n\n"
      << Options()
      << "\nexamples:\n"
         "  swemu --config configs/leaf.ini --offline --in 0=configs/pcap/h0_to_all.pcap "
         "--out-dir out/leaf\n"
         "  swemu --config configs/leaf.ini --offline --in 0=snapped.pcap --fixlen pad "
         "--out-dir out/snapped\n"
         "  swemu --topology configs/leaf_spine.topo --offline "
         "--in leaf1:0=configs/pcap/h0_to_all.pcap --out-dir out/fabric\n"
         "  swemu --config configs/ring.ini --run-for 2s --stats-interval 1 -- -l 0\n"
         "  swemu --config configs/atp_rack.ini --show-resources\n"
         "  swemu --config configs/atp_rack.ini --bench --in 0=configs/pcap/atp_rack.pcap\n"
         "every option: docs/cli.md\n";
  return out.str();
}

Result<InputSpec> ParseInputSpec(const std::string& text) {
  InputSpec spec;
  spec.text = text;
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::Error("--in " + text + ": expected PORT=FILE or SW:PORT=FILE");
  }
  std::string where = text.substr(0, eq);
  spec.file = text.substr(eq + 1);
  if (where.find(':') != std::string::npos) {
    Status parsed = ParseSwitchPort(where, &spec.sw, &spec.port);
    if (!parsed.ok()) return Status::Error("--in " + text + ": " + parsed.message());
    return spec;
  }
  Result<uint64_t> port = ParseUint(where, 0, 0xFFFE);
  if (!port.ok()) return Status::Error("--in " + text + ": port " + port.message());
  spec.port = static_cast<uint16_t>(*port);
  return spec;
}

namespace {

// --backend: the real-time back end of a topology, and the options it cannot take.
Status ReadBackend(const po::variables_map& vm, CommandLine& cmd) {
  cmd.backend = vm["backend"].as<std::string>();
  if (cmd.backend != "netns" && cmd.backend != "processes") {
    return Status::Error("--backend: \"" + cmd.backend +
                         "\" is not a back end (expected netns or processes; the engine is "
                         "--offline)");
  }
  if (!vm.count("topology")) return Status::Error("--backend: needs --topology");
  if (vm.count("workers")) {
    Result<uint64_t> n = ParseUint(vm["workers"].as<std::string>(), 1, 64);
    if (!n.ok()) return Status::Error("--workers: " + n.message());
    cmd.workers = static_cast<uint32_t>(*n);
  }
  for (const char* option : {"offline", "config", "bench", "show-resources", "pcap-dir",
                             "control-socket", "control-tcp", "stats-interval"}) {
    if (vm.count(option)) {
      return Status::Error(std::string("--backend: not with --") + option +
                           " (each switch gets its own control socket and log in --out-dir)");
    }
  }
  return Status::Ok();
}

// --also-switch CONFIG=SOCKET ...: real time with --config, without what serves one switch only.
Status ReadAlsoSwitches(const po::variables_map& vm, CommandLine& cmd) {
  for (const char* option : {"offline", "topology", "bench", "show-resources", "pcap-dir",
                             "control-tcp", "stats-interval", "telemetry"}) {
    if (vm.count(option)) {
      return Status::Error(std::string("--also-switch: not with --") + option +
                           " (it serves one switch)");
    }
  }
  if (cmd.config.empty()) return Status::Error("--also-switch: needs --config");
  for (const std::string& text : vm["also-switch"].as<std::vector<std::string>>()) {
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
      return Status::Error("--also-switch " + text + ": expected CONFIG=SOCKET");
    }
    cmd.also_switches.push_back({text.substr(0, eq), text.substr(eq + 1)});
  }
  return Status::Ok();
}

// Stores argv[1..own) in vm. No positional arguments: a stray word is an error, not silently
// ignored.
Status StoreOptions(int own, const char* const argv[], po::variables_map& vm) {
  try {
    po::positional_options_description none;
    po::store(po::command_line_parser(own, argv).options(Options()).positional(none).run(), vm);
  } catch (const po::error& e) {
    return Status::Error(e.what());
  }
  return Status::Ok();
}

// --json, --bench-seconds and --bench-repeat: only with --bench.
Status ReadBench(const po::variables_map& vm, CommandLine& cmd) {
  if (cmd.json && !cmd.bench) return Status::Error("--json: only with --bench");
  if (vm.count("bench-seconds")) {
    if (!cmd.bench) return Status::Error("--bench-seconds: only with --bench");
    Result<uint64_t> ns = ParseSeconds(vm["bench-seconds"].as<std::string>());
    if (!ns.ok()) return Status::Error("--bench-seconds: " + ns.message());
    cmd.bench_seconds = static_cast<double>(*ns) / 1e9;
  }
  if (vm.count("bench-repeat")) {
    if (!cmd.bench) return Status::Error("--bench-repeat: only with --bench");
    Result<uint64_t> n = ParseUint(vm["bench-repeat"].as<std::string>(), 1, 1000);
    if (!n.ok()) return Status::Error("--bench-repeat: " + n.message());
    cmd.bench_repeat = static_cast<uint32_t>(*n);
  }
  return Status::Ok();
}

// --seed, and the offline run's --max-virtual-time, --max-events and --fixlen.
Status ReadOfflineLimits(const po::variables_map& vm, CommandLine& cmd) {
  if (vm.count("seed")) {
    Result<uint64_t> seed = ParseUint(vm["seed"].as<std::string>());
    if (!seed.ok()) return Status::Error("--seed: " + seed.message());
    cmd.seed = *seed;
  }
  if (vm.count("max-virtual-time")) {
    Result<uint64_t> ns = ParseDurationOption(vm["max-virtual-time"].as<std::string>());
    if (!ns.ok()) return Status::Error("--max-virtual-time: " + ns.message());
    if (*ns == 0) return Status::Error("--max-virtual-time: must be > 0");
    cmd.max_virtual_ns = *ns;
  }
  if (vm.count("max-events")) {
    Result<uint64_t> events = ParseUint(vm["max-events"].as<std::string>(), 1, UINT64_MAX);
    if (!events.ok()) return Status::Error("--max-events: " + events.message());
    cmd.max_events = *events;
  }
  if (vm.count("fixlen")) {
    Result<Fixlen> fixlen = ParseFixlen(vm["fixlen"].as<std::string>());
    if (!fixlen.ok()) return Status::Error("--fixlen: " + fixlen.message());
    if (!cmd.offline) return Status::Error("--fixlen: only with --offline");
    cmd.fixlen = *fixlen;
  }
  if (vm.count("partitions")) {
    Result<uint64_t> n = ParseUint(vm["partitions"].as<std::string>(), 1, 256);
    if (!n.ok()) return Status::Error("--partitions: " + n.message());
    if (!cmd.offline) return Status::Error("--partitions: only with --offline");
    cmd.partitions = static_cast<uint32_t>(*n);
  }
  if (!cmd.offline && (cmd.max_virtual_ns || cmd.max_events)) {
    return Status::Error(std::string(cmd.max_events ? "--max-events" : "--max-virtual-time") +
                         ": only with --offline");
  }
  return Status::Ok();
}

// --telemetry FILE and its --telemetry-period.
Status ReadTelemetry(const po::variables_map& vm, CommandLine& cmd) {
  if (vm.count("telemetry")) {
    cmd.telemetry = vm["telemetry"].as<std::string>();
    if (cmd.telemetry.empty()) return Status::Error("--telemetry: must not be empty");
  }
  if (vm.count("telemetry-period")) {
    if (cmd.telemetry.empty()) return Status::Error("--telemetry-period: only with --telemetry");
    Result<uint64_t> ns = ParseDurationOption(vm["telemetry-period"].as<std::string>());
    if (!ns.ok()) return Status::Error("--telemetry-period: " + ns.message());
    if (*ns < 1000) return Status::Error("--telemetry-period: at least 1us");
    if (!cmd.offline && *ns < 100'000) {
      return Status::Error("--telemetry-period: at least 100us in real time");
    }
    cmd.telemetry_period_ns = *ns;
  }
  return Status::Ok();
}

// Real time: --busy-poll, --run-for, --stats-interval and --stats-stages.
Status ReadRealTimeRun(const po::variables_map& vm, CommandLine& cmd) {
  cmd.busy_poll = vm.count("busy-poll") != 0;
  if (vm.count("run-for")) {
    Result<uint64_t> ns = ParseSeconds(vm["run-for"].as<std::string>());
    if (!ns.ok()) return Status::Error("--run-for: " + ns.message());
    cmd.run_for_ns = *ns;
  }
  if (vm.count("stats-interval")) {
    Result<uint64_t> ns = ParseSeconds(vm["stats-interval"].as<std::string>());
    if (!ns.ok()) return Status::Error("--stats-interval: " + ns.message());
    // A line per lcore per interval: below 10 ms the lines are a flood, not a report.
    if (*ns < 10'000'000) return Status::Error("--stats-interval: at least 10ms");
    cmd.stats_interval_ns = *ns;
  }
  cmd.stats_stages = vm.count("stats-stages") != 0;
  if (cmd.stats_stages && cmd.stats_interval_ns == 0) {
    return Status::Error("--stats-stages: only with --stats-interval");
  }
  return Status::Ok();
}

// Paths given as "" are refused by name.
Status CheckPathsNotEmpty(const po::variables_map& vm) {
  for (const char* option : {"control-socket", "control-tcp", "out-dir", "config", "topology"}) {
    if (vm.count(option) && vm[option].as<std::string>().empty()) {
      return Status::Error(std::string("--") + option + ": an empty path");
    }
  }
  return Status::Ok();
}

// Real time: --control-socket, --control-tcp and --control-mode.
Status ReadControl(const po::variables_map& vm, CommandLine& cmd) {
  if (vm.count("control-socket")) cmd.control_socket = vm["control-socket"].as<std::string>();
  if (vm.count("control-tcp")) cmd.control_tcp = vm["control-tcp"].as<std::string>();
  if (vm.count("control-mode")) {
    const std::string& text = vm["control-mode"].as<std::string>();
    char* end = nullptr;
    unsigned long mode = std::strtoul(text.c_str(), &end, 8);
    if (text.empty() || end != text.c_str() + text.size() || mode > 0777) {
      return Status::Error("--control-mode: \"" + text + "\" is not an octal mode like 0600");
    }
    cmd.control_mode = static_cast<uint32_t>(mode);
  }
  return Status::Ok();
}

// Real time: --pcap-dir and the options that shape its recording.
Status ReadPcap(const po::variables_map& vm, CommandLine& cmd) {
  if (vm.count("pcap-dir")) {
    cmd.pcap_dir = vm["pcap-dir"].as<std::string>();
    if (cmd.pcap_dir.empty()) return Status::Error("--pcap-dir: must not be empty");
    if (cmd.offline) return Status::Error("--pcap-dir: only in real time (offline, see --out-dir)");
  }
  if (vm.count("pcap-ports")) {
    if (cmd.pcap_dir.empty()) return Status::Error("--pcap-ports: only with --pcap-dir");
    Result<std::vector<uint16_t>> ports = ParsePortList(vm["pcap-ports"].as<std::string>());
    if (!ports.ok()) return Status::Error("--pcap-ports: " + ports.message());
    cmd.pcap_ports = *ports;
  }
  if (vm.count("pcap-snaplen")) {
    if (cmd.pcap_dir.empty()) return Status::Error("--pcap-snaplen: only with --pcap-dir");
    Result<uint64_t> snaplen = ParseUint(vm["pcap-snaplen"].as<std::string>(), 14, 65535);
    if (!snaplen.ok()) return Status::Error("--pcap-snaplen: " + snaplen.message());
    cmd.pcap_snaplen = static_cast<uint32_t>(*snaplen);
  }
  if (vm.count("pcap-max-bytes")) {
    if (cmd.pcap_dir.empty()) return Status::Error("--pcap-max-bytes: only with --pcap-dir");
    Result<uint64_t> max = ParseBytes(vm["pcap-max-bytes"].as<std::string>());
    if (!max.ok() || *max == 0) {
      return Status::Error("--pcap-max-bytes: " +
                           (max.ok() ? std::string("must be above 0") : max.message()));
    }
    cmd.pcap_max_bytes = *max;
  }
  return Status::Ok();
}

// --in SPEC ...: the pcaps to replay.
Status ReadInputs(const po::variables_map& vm, CommandLine& cmd) {
  if (!vm.count("in")) return Status::Ok();
  for (const std::string& text : vm["in"].as<std::vector<std::string>>()) {
    Result<InputSpec> spec = ParseInputSpec(text);
    if (!spec.ok()) return spec.status();
    cmd.inputs.push_back(std::move(*spec));
  }
  return Status::Ok();
}

}  // namespace

// Each option is read and checked in a fixed order, so that of several bad options the same
// one is always named.
Result<CommandLine> ParseCommandLine(int argc, const char* const argv[]) {
  // Everything after the first "--" belongs to DPDK's EAL.
  int own = 1;
  while (own < argc && std::string_view(argv[own]) != "--") ++own;
  po::variables_map vm;
  SWEMU_RETURN_IF_ERROR(StoreOptions(own, argv, vm));
  CommandLine cmd;
  cmd.help = vm.count("help") != 0;
  cmd.version = vm.count("version") != 0;
  cmd.offline = vm.count("offline") != 0;
  cmd.show_resources = vm.count("show-resources") != 0;
  cmd.quiet = vm.count("quiet") != 0;
  cmd.bench = vm.count("bench") != 0;
  cmd.json = vm.count("json") != 0;
  SWEMU_RETURN_IF_ERROR(ReadBench(vm, cmd));
  if (vm.count("config")) cmd.config = vm["config"].as<std::string>();
  if (vm.count("topology")) cmd.topology = vm["topology"].as<std::string>();
  if (vm.count("out-dir")) cmd.out_dir = vm["out-dir"].as<std::string>();
  if (vm.count("backend")) SWEMU_RETURN_IF_ERROR(ReadBackend(vm, cmd));
  if (vm.count("workers") && !vm.count("backend")) {
    return Status::Error("--workers: only with --backend (a --config switch's lcores are its "
                         "[dpdk] workers)");
  }
  if (vm.count("run-for") && vm.count("offline")) {
    return Status::Error(
        "--run-for: only in real time (offline, a run ends with its inputs; "
        "see --max-virtual-time)");
  }
  SWEMU_RETURN_IF_ERROR(ReadOfflineLimits(vm, cmd));
  SWEMU_RETURN_IF_ERROR(ReadTelemetry(vm, cmd));
  SWEMU_RETURN_IF_ERROR(ReadRealTimeRun(vm, cmd));
  SWEMU_RETURN_IF_ERROR(CheckPathsNotEmpty(vm));
  SWEMU_RETURN_IF_ERROR(ReadControl(vm, cmd));
  SWEMU_RETURN_IF_ERROR(ReadPcap(vm, cmd));
  if (vm.count("also-switch")) SWEMU_RETURN_IF_ERROR(ReadAlsoSwitches(vm, cmd));
  for (int i = own + 1; i < argc; ++i) cmd.eal_args.emplace_back(argv[i]);
  SWEMU_RETURN_IF_ERROR(ReadInputs(vm, cmd));
  return cmd;
}

}  // namespace swemu
