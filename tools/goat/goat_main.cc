// swemu-goat: GOAT's control plane. `plan` builds GINA for a leaf-spine (hostlib/goat/gina.h),
// solves its LP relaxation in Clp, rounds it with KRGS (with memory repair) and prints what the
// plan costs beside sending everything to the PS: Eq. 1's traffic (bytes times hops), Eq. 4's
// saving, the bytes reaching the PS, the switches' memory, and KRGS's own counters.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "hostlib/goat/async_k.h"
#include "hostlib/goat/gina.h"
#include "hostlib/goat/gina_lp.h"
#include "hostlib/goat/krgs.h"
#include "hostlib/goat/plan_json.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/engine/rng.h"
#include "tools/option_values.h"
#include "tools/goat/goat_common.h"
#include "tools/goat/goat_demo.h"
#include "tools/goat/goat_publish.h"
#include "tools/goat/goat_server.h"
#include "tools/goat/goat_sim.h"
#include "tools/subcommand.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

using goat_tool::kSlotBytes;

po::options_description PlanOptions() {
  po::options_description options("swemu-goat plan options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("leaf-spine", po::value<std::string>()->default_value("10,10,50"), "SPINES,LEAVES,SERVERS (the PS on the last leaf, the other servers workers)")
      ("programmable", po::value<std::string>()->default_value("20%"), "a share of the switches drawn by --seed (e.g. 20%), a count, or names (leaf0,spine3)")
      ("memory", po::value<std::string>()->default_value("64MB"), "each programmable switch's aggregator memory (256 B per slot)")
      ("model", po::value<std::string>()->default_value("AlexNet"), "the bundled model whose gradients are planned (VGG16, AlexNet, ResNet50)")
      ("submodels", po::value<std::string>()->default_value("16"), "split the model into this many equal sub-models (0: one per layer); any larger than a switch's memory is split again")
      ("seed", po::value<std::string>()->default_value("1"), "seed (switches drawn, KRGS)")
      ("no-classes", "solve the full LP (one y per worker), not the class-reduced one")
      ("json", po::value<std::string>()->value_name("FILE"), "also write the plan here: each switch's sub-models (fan-in, memory base), each worker's node per sub-model");
  // clang-format on
  return options;
}

Status RunPlan(const po::variables_map& vm, std::ostream& out) {
  uint64_t memory = 0, submodels = 0, seed = 0;
  Result<goat_tool::LeafSpineShape> shape = goat_tool::ParseLeafSpine(Text(vm, "leaf-spine"));
  if (!shape.ok()) return shape.status();
  const uint64_t spines = shape->spines, leaves = shape->leaves, servers = shape->servers;
  SWEMU_RETURN_IF_ERROR(Check("memory", ParseBytes(Text(vm, "memory")), &memory));
  if (memory < 256) return Status::Error("--memory: at least one 256-byte slot");
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "submodels", 0, 100000, &submodels));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  std::string json;
  if (vm.count("json")) {
    json = Text(vm, "json");
    SWEMU_RETURN_IF_ERROR(CheckOutputPath(json, "--json"));
  }
  const uint64_t slots = memory / 256;
  Result<goat_tool::ModelSlots> model =
      goat_tool::SizeModel(Text(vm, "model"), submodels, 1, slots);
  if (!model.ok()) return model.status();
  const uint64_t total_slots = model->total_slots;
  std::vector<std::string> all_switches;
  for (const GinaNode& n :
       LeafSpineGraph(shape->spines, shape->leaves, shape->servers, {}, 0).nodes) {
    if (n.kind == GinaNode::Kind::kSwitch) all_switches.push_back(n.name);
  }
  Result<std::vector<std::string>> programmable =
      goat_tool::ProgrammableSwitches(Text(vm, "programmable"), all_switches, seed);
  if (!programmable.ok()) return programmable.status();
  const GinaGraph graph =
      LeafSpineGraph(shape->spines, shape->leaves, shape->servers, *programmable, slots);
  const std::vector<uint64_t>* split = &model->submodels;
  Result<GinaProblem> problem = BuildGinaProblem(graph, *split);
  if (!problem.ok()) return problem.status();
  const bool classes = vm.count("no-classes") == 0;
  Result<GinaLpSolution> lp = SolveGinaLp(*problem, classes);
  if (!lp.ok()) return lp.status();
  KrgsStats st;
  Result<GinaPlan> plan = RoundKrgs(*problem, *lp, seed, &st);
  if (!plan.ok()) return plan.status();
  GinaPlan ps_only;
  ps_only.node.assign(problem->submodels.size(),
                      std::vector<int32_t>(problem->num_workers(), kGinaPs));
  ps_only.Derive(*problem);

  char line[512];
  std::snprintf(line, sizeof(line),
                "GOAT plan: leaf-spine %llu spines x %llu leaves, %llu servers (%zu workers, the "
                "PS on leaf%llu); %zu programmable switches of %s (%llu slots); %s, %.1f MB per "
                "worker in %zu sub-models\n",
                static_cast<unsigned long long>(spines), static_cast<unsigned long long>(leaves),
                static_cast<unsigned long long>(servers), problem->num_workers(),
                static_cast<unsigned long long>(leaves - 1), problem->num_switches(),
                Text(vm, "memory").c_str(), static_cast<unsigned long long>(slots),
                model->name.c_str(), static_cast<double>(total_slots) * kSlotBytes / 1e6,
                problem->submodels.size());
  out << line;
  std::string names;
  for (const std::string& n : problem->switch_names) names += (names.empty() ? "" : ",") + n;
  out << "programmable: " << (names.empty() ? "none" : names) << "\n";
  std::snprintf(line, sizeof(line),
                "LP (Clp): %d columns, %d rows, %zu worker classes, %.3f s; Eq. 1 at the LP "
                "optimum %.4g GB-hops\n",
                lp->columns, lp->rows, lp->classes.size(), lp->seconds, lp->eq1 * kSlotBytes / 1e9);
  out << line;
  std::snprintf(line, sizeof(line),
                "KRGS (seed %llu): %u bins, least S_a %.3f (%u at most 0.5), %u draws normalised; "
                "%u switches over memory before repair (at most %.2f x B), %u sub-models demoted\n",
                static_cast<unsigned long long>(seed), st.bins, st.min_bin_sum,
                st.bins_at_most_half, st.normalised, st.switches_over_before_repair, st.max_overuse,
                st.demoted);
  out << line;
  auto row = [&](const char* name, const GinaPlan& p) {
    std::snprintf(line, sizeof(line), "%-10s %14.4g %14.4g %14.4g\n", name,
                  GinaPlanEq1(*problem, p) * kSlotBytes / 1e9,
                  static_cast<double>(GinaPlanPsSlots(*problem, p)) * kSlotBytes / 1e9,
                  GinaPlanEq4(*problem, p) * kSlotBytes / 1e9);
    out << line;
  };
  std::snprintf(line, sizeof(line), "\n%-10s %14s %14s %14s\n", "plan", "Eq.1 GB-hops",
                "to the PS GB", "Eq.4 GB-hops");
  out << line;
  row("GOAT", *plan);
  row("PS only", ps_only);
  out << "memory used (slots): ";
  for (std::size_t s = 0; s < problem->num_switches(); ++s) {
    out << (s ? ", " : "") << problem->switch_names[s] << " " << plan->used[s];
  }
  out << "\n";
  if (!json.empty()) {
    SWEMU_RETURN_IF_ERROR(WriteTextFile(json, GinaPlanJson(*problem, *plan), "--json"));
    out << "wrote " << json << "\n";
  }
  return Status::Ok();
}

struct Command {
  const char* name;
  const char* help;
  po::options_description (*options)();
  Status (*run)(const po::variables_map&, std::ostream&);
  const char* examples;  // printed after the options by COMMAND --help
};

// Each command's examples, after README.md, docs/cli.md and tests/tools/goat/goat_tool_test.cc.
constexpr char kPlanExamples[] =
    "  swemu-goat plan                               the paper's simulated leaf-spine, AlexNet\n"
    "  swemu-goat plan --model VGG16 --memory 32MB   another model, less memory per switch\n"
    "  swemu-goat plan --leaf-spine 2,4,17 --programmable leaf0,leaf1,spine1 --memory 8MB \\\n"
    "      --json plan.json                          three named switches, the plan as JSON too\n";

constexpr char kSimExamples[] =
    "  swemu-goat sim                                            GOAT vs ATP-style vs PS-only\n"
    "  swemu-goat sim --fabric leaf-spine --workers 35           "
    "the paper's leaf-spine (Exp. #6, #7)\n"
    "  swemu-goat sim --per-switch 8 --csv sim.csv               "
    "16 workers, a CSV row per scheme\n"
    "  swemu-goat sim --async --k 7 --delay 5=100ms --rounds 3   K = 7 of 8, a straggler\n"
    "  swemu-goat sim --topology configs/goat_leaf_spine.topo --model AlexNet\n"
    "                                                            the leaf-spine from its file\n";

constexpr char kPublishExamples[] =
    "  swemu-goat publish --out-dir out/goat --pcap                   "
    "the testbed's plan as files\n"
    "  swemu-goat publish --scheme atp-style --out-dir out/goat_atp   ATP-style sharing instead\n"
    "  swemu-goat publish --fabric leaf-spine --leaf-spine 2,4,17 \\\n"
    "      --out-dir out/goat_ls                                      a small leaf-spine\n";

constexpr char kDemoExamples[] =
    "  swemu-goat demo                                 "
    "3 rounds, 3 swemu processes (the testbed)\n"
    "  swemu-goat demo --async --k 7 --delay 5=100ms   "
    "a straggler: rounds done by the 7 fastest\n"
    "  swemu-goat demo --scheme atp-style --rounds 5   ATP-style sharing in real time\n"
    "  swemu-goat demo --topology configs/goat_testbed/goat.topo   the testbed from its file\n";

constexpr char kWorkerExamples[] =
    "  swemu-goat worker --job goat.job --name w1      one worker on this server, kernel UDP\n"
    "  swemu-goat worker --job goat.job --name w1 --rounds 10 --timeout 30s\n"
    "  swemu-goat worker --job goat.job --name w1 --port 0000:3b:00.0   on a DPDK port\n";

constexpr char kPsExamples[] =
    "  swemu-goat ps --job goat.job                    the PS on this server, until Ctrl-C\n"
    "  swemu-goat ps --job goat.job --idle-exit 2s     ... or 2 s after the last gradient\n"
    "  swemu-goat ps --job goat.job --port 0000:3b:00.0   on a DPDK port\n";

const Command kCommands[] = {
    {"plan", "GINA's LP in Clp and KRGS's rounding for a leaf-spine and a model", PlanOptions,
     RunPlan, kPlanExamples},
    {"sim", "a GOAT job packet by packet in virtual time: GOAT, ATP-style sharing, PS-only",
     GoatSimOptions, RunGoatSim, kSimExamples},
    {"publish", "a plan as files: switch configs and startup scripts, a topology, the job",
     GoatPublishOptions, nullptr, kPublishExamples},
    {"demo", "real time: a published plan on one swemu per switch, hosts over virtio_user",
     GoatDemoOptions, RunGoatDemo, kDemoExamples},
    {"worker", "one worker of a published job on this server (kernel UDP sockets or --port)",
     GoatWorkerCommandOptions, RunGoatWorkerCommand, kWorkerExamples},
    {"ps", "the parameter server of a published job on this server (kernel UDP or --port)",
     GoatPsCommandOptions, RunGoatPsCommand, kPsExamples},
};

// swemu-goat --help: one example per command.
constexpr char kExamples[] =
    "  swemu-goat plan                                 "
    "the paper's simulated leaf-spine, AlexNet\n"
    "  swemu-goat sim                                  "
    "GOAT vs ATP-style vs PS-only, virtual time\n"
    "  swemu-goat publish --out-dir out/goat --pcap    the testbed's plan as files\n"
    "  swemu-goat demo --async --k 7 --delay 5=100ms   "
    "real time: 3 swemu processes, a straggler\n"
    "  swemu-goat worker --job goat.job --name w1      one worker on a server, kernel UDP\n";

int Main(int argc, char** argv) {
  const std::string first = argc < 2 ? "" : argv[1];
  if (argc < 2 || first == "--help" || first == "-h") {
    std::cout << "usage: swemu-goat COMMAND [options]   (COMMAND --help for its options)\n";
    for (const Command& c : kCommands) std::printf("  %-7s %s\n", c.name, c.help);
    std::cout << "\nexamples:\n" << kExamples << "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : kCommands) {
    if (first != c.name) continue;
    po::variables_map vm;
    const int exit_now =
        ParseSubcommand("swemu-goat", c.name, "[options]", c.options(), argc - 1, argv + 1, &vm);
    if (exit_now == 0 && vm.count("help")) std::cout << "\nexamples:\n" << c.examples;
    if (exit_now >= 0) return exit_now;
    std::cout.flush();
    std::string command = "swemu-goat";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    Status status =
        c.run != nullptr ? c.run(vm, std::cout) : RunGoatPublish(vm, std::cout, command);
    if (!status.ok()) {
      std::cerr << "swemu-goat " << c.name << ": " << status.message() << "\n";
      const std::string& m = status.message();
      return m.starts_with("--") || m.starts_with("GINA") || m.starts_with("goat fabric") ? 2 : 1;
    }
    return 0;
  }
  std::cerr << "swemu-goat: unknown command " << first
            << " (expected plan, sim, publish, demo, worker or ps)\n";
  return 2;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-goat", [&] { return swemu::Main(argc, argv); });
}
