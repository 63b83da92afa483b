// swemu-plink: PLink on emulated datacenters (tools/plink/plink_tool.h lists the commands).
#include <cstdio>
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
  const char* examples;  // printed after the options by COMMAND --help
};

// Each command's examples, after README.md, docs/cli.md and tests/swemu/plink_*_test.cc.
constexpr char kProbeExamples[] =
    "  swemu-plink probe                                          16 hosts, 2 rows of 2 racks\n"
    "  swemu-plink probe --samples 5 --seed 2 --json probe.json   "
    "5 echoes per pair, the groups as JSON\n"
    "  swemu-plink probe --fanout 2,2,2 --per-rack 8 \\\n"
    "      --tier-delays 32us,16us,4us,1us                        64 hosts in 8 racks\n";

constexpr char kExperimentExamples[] =
    "  swemu-plink experiment --assignments 5                  "
    "Figure 8, short (50: the paper's)\n"
    "  swemu-plink experiment --alpha 1 --assignments 5        Eq. (1)'s alpha 1 instead of 2\n"
    "  swemu-plink experiment --assignments 5 --csv fig8.csv   one CSV row per reduction\n"
    "  swemu-plink experiment --fanout 2,2 --rack-hosts 7,2,4,3 --assignments 3 \\\n"
    "      --buffer 256KB --chunk 8KB --background 4           16 hosts in 4 unbalanced racks\n"
    "  swemu-plink experiment --topology configs/leaf_spine.topo  a topology file's switches, hosts\n";

constexpr char kDemoExamples[] =
    "  swemu-plink demo                                    "
    "real time: 3 swemu processes, 8 hosts\n"
    "  swemu-plink demo --buffer 256KB --out-dir /tmp/pd   "
    "a smaller buffer, the files in /tmp/pd\n"
    "  swemu-plink demo --transport kernel-udp             "
    "no swemu: the hosts on loopback UDP sockets\n"
    "  swemu-plink demo --topology configs/leaf_spine.topo "
    "a topology file's switches and hosts\n";

constexpr char kPublishExamples[] =
    "  swemu-plink publish --topology configs/leaf_spine.topo --out-dir out/plink_job\n"
    "      plink.job: every host a node, 2LHA over the racks (the hosts' switches)\n"
    "  swemu-plink publish --topology my.topo --floats 1000000 --plan flat\n";

constexpr char kNodeExamples[] =
    "  swemu-plink node --job plink.job --name h0                 "
    "this machine's node of the job, 3 iterations\n"
    "  swemu-plink node --job plink.job --name h0 --iterations 10 --timeout 30s\n"
    "  swemu-plink node --job plink.job --name h0 --port 0000:3b:00.0   on a DPDK port\n";

const Command kCommands[] = {
    {"probe",
     "ProbeEmbed on an emulated datacenter: probes, embedding, groups, 2LHA's cross-rack "
     "bytes",
     PlinkProbeOptions, RunPlinkProbe, kProbeExamples},
    {"experiment",
     "Figure 8: reduction latency of FA and 2LHA over Balanced Random, rack and ProbeEmbed "
     "groups",
     PlinkExperimentOptions, RunPlinkExperiment, kExperimentExamples},
    {"demo",
     "in real time: probes, embedding, groups and FA/2LHA reductions over swemu processes (or "
     "kernel UDP)",
     PlinkDemoOptions, RunPlinkDemo, kDemoExamples},
    {"publish", "the job file of `node` (plink.job) from a topology's hosts: groups = their racks",
     PlinkPublishOptions, RunPlinkPublish, kPublishExamples},
    {"node",
     "one node of a job (plink.job) on this machine, over kernel UDP or a DPDK port: all-reduces "
     "checked exactly",
     PlinkNodeOptions, RunPlinkNode, kNodeExamples},
};

// swemu-plink --help: one example per command.
constexpr char kExamples[] =
    "  swemu-plink probe                        16 hosts, 2 rows of 2 racks\n"
    "  swemu-plink experiment --assignments 5   Figure 8, short (50: the paper's)\n"
    "  swemu-plink demo                         real time: 3 swemu processes, 8 hosts\n";

int Main(int argc, char** argv) {
  const std::string first = argc < 2 ? "" : argv[1];
  if (argc < 2 || first == "--help" || first == "-h") {
    std::cout << "usage: swemu-plink COMMAND [options]   (COMMAND --help for its options)\n";
    for (const Command& c : kCommands) std::printf("  %-10s  %s\n", c.name, c.what);
    std::cout << "\nexamples:\n" << kExamples << "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  std::string names;
  for (const Command& c : kCommands) {
    names += names.empty() ? c.name : std::string(", ") + c.name;
    if (first != c.name) continue;
    po::variables_map vm;
    const int exit_now =
        ParseSubcommand("swemu-plink", c.name, "[options]", c.options(), argc - 1, argv + 1, &vm);
    if (exit_now == 0 && vm.count("help")) std::cout << "\nexamples:\n" << c.examples;
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
