// swemu-plink: PLink on emulated datacenters (tools/plink/plink_tool.h lists the commands).
#include <iostream>
#include <string>

#include "tools/plink/plink_tool.h"
#include "tools/subcommand.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

struct Command {
  const char* name;
  const char* what;
  po::options_description (*options)();
  Status (*run)(const po::variables_map&, std::ostream&);
};

const Command kCommands[] = {
    {"probe",
     "ProbeEmbed on an emulated datacenter: probes, embedding, groups, 2LHA's cross-rack "
     "bytes",
     PlinkProbeOptions, RunPlinkProbe},
    {"experiment",
     "Figure 8: reduction latency of FA and 2LHA over Balanced Random, rack and ProbeEmbed "
     "groups",
     PlinkExperimentOptions, RunPlinkExperiment},
    {"demo",
     "in real time: probes, embedding, groups and FA/2LHA reductions over swemu processes (or "
     "kernel UDP)",
     PlinkDemoOptions, RunPlinkDemo},
};

int Main(int argc, char** argv) {
  const std::string first = argc < 2 ? "" : argv[1];
  if (argc < 2 || first == "--help" || first == "-h") {
    std::cout << "usage: swemu-plink COMMAND [options]   (COMMAND --help for its options)\n";
    for (const Command& c : kCommands) std::cout << "  " << c.name << "  " << c.what << "\n";
    std::cout << "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  std::string names;
  for (const Command& c : kCommands) {
    names += names.empty() ? c.name : std::string(", ") + c.name;
    if (first != c.name) continue;
    po::variables_map vm;
    const int exit_now =
        ParseSubcommand("swemu-plink", c.name, "[options]", c.options(), argc - 1, argv + 1, &vm);
    if (exit_now >= 0) return exit_now;
    Status status = c.run(vm, std::cout);
    if (!status.ok()) {
      std::cerr << "swemu-plink " << c.name << ": " << status.message() << "\n";
      return status.message().starts_with("--") ? 2 : 1;
    }
    return 0;
  }
  std::cerr << "swemu-plink: unknown command " << first << " (expected " << names << ")\n";
  return 2;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-plink", [&] { return swemu::Main(argc, argv); });
}
