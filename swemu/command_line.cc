#include "swemu/command_line.h"

#include <boost/program_options.hpp>
#include <sstream>

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
      ("offline", "run in virtual time from pcap files (required in this version)")
      ("in,i", po::value<std::vector<std::string>>()->value_name("SPEC"),
       "replay a pcap into a port: PORT=FILE (--config) or SW:PORT=FILE (--topology); repeatable")
      ("out-dir,o", po::value<std::string>()->value_name("DIR"),
       "write one pcap per host port and counters.json here (created if missing)")
      ("seed", po::value<std::string>()->value_name("N"),
       "replace every seed in the config files (switch seeds and loss)")
      ("show-resources", "print the loaded program's resource report and exit")
      ("quiet,q", "do not print the per-port summary");
  // clang-format on
  return options;
}

}  // namespace

std::string Usage() {
  std::ostringstream out;
  out << "usage: swemu --config FILE --offline [--in PORT=FILE.pcap ...] --out-dir DIR [--seed N]\n"
         "       swemu --topology FILE --offline [--in SW:PORT=FILE.pcap ...] --out-dir DIR\n"
         "       swemu (--config FILE | --topology FILE) --show-resources\n\n"
      << Options();
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

Result<CommandLine> ParseCommandLine(int argc, const char* const argv[]) {
  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not silently ignored.
    po::positional_options_description none;
    po::store(po::command_line_parser(argc, argv).options(Options()).positional(none).run(), vm);
  } catch (const po::error& e) {
    return Status::Error(e.what());
  }
  CommandLine cmd;
  cmd.help = vm.count("help") != 0;
  cmd.version = vm.count("version") != 0;
  cmd.offline = vm.count("offline") != 0;
  cmd.show_resources = vm.count("show-resources") != 0;
  cmd.quiet = vm.count("quiet") != 0;
  if (vm.count("config")) cmd.config = vm["config"].as<std::string>();
  if (vm.count("topology")) cmd.topology = vm["topology"].as<std::string>();
  if (vm.count("out-dir")) cmd.out_dir = vm["out-dir"].as<std::string>();
  if (vm.count("seed")) {
    Result<uint64_t> seed = ParseUint(vm["seed"].as<std::string>());
    if (!seed.ok()) return Status::Error("--seed: " + seed.message());
    cmd.seed = *seed;
  }
  if (vm.count("in")) {
    for (const std::string& text : vm["in"].as<std::vector<std::string>>()) {
      Result<InputSpec> spec = ParseInputSpec(text);
      if (!spec.ok()) return spec.status();
      cmd.inputs.push_back(std::move(*spec));
    }
  }
  return cmd;
}

}  // namespace swemu
