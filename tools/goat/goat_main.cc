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
#include "pipeline/core/text_file.h"
#include "pipeline/engine/rng.h"
#include "tools/gen/gen_common.h"
#include "tools/subcommand.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;
using gen::Check;
using gen::CheckUint;
using gen::Text;

constexpr double kSlotBytes = 256;  // 64 float32 values

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

Result<std::vector<std::string>> Programmable(const std::string& text, const GinaGraph& g,
                                               uint64_t seed) {
  std::vector<std::string> switches;
  for (const GinaNode& n : g.nodes) {
    if (n.kind == GinaNode::Kind::kSwitch) switches.push_back(n.name);
  }
  uint64_t count = 0;
  if (text.ends_with('%')) {
    Result<double> share = ParseProbability(text);
    if (!share.ok()) return Status::Error("--programmable: " + share.message());
    count = static_cast<uint64_t>(std::llround(*share * static_cast<double>(switches.size())));
  } else if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit)) {
    Result<uint64_t> n = ParseUint(text, 0, switches.size());
    if (!n.ok()) return Status::Error("--programmable: " + n.message());
    count = *n;
  } else {
    std::vector<std::string> names;
    std::stringstream in(text);
    for (std::string name; std::getline(in, name, ',');) {
      if (std::find(switches.begin(), switches.end(), name) == switches.end()) {
        return Status::Error("--programmable: no switch " + name);
      }
      names.push_back(name);
    }
    return names;
  }
  SplitMix64 rng(seed);
  for (std::size_t i = switches.size(); i > 1; --i) std::swap(switches[i - 1], switches[rng.Next() % i]);
  switches.resize(count);
  return switches;
}

Status RunPlan(const po::variables_map& vm, std::ostream& out) {
  uint64_t spines = 0, leaves = 0, servers = 0, memory = 0, submodels = 0, seed = 0;
  {
    std::stringstream in(Text(vm, "leaf-spine"));
    std::string a, b, c, rest;
    if (!std::getline(in, a, ',') || !std::getline(in, b, ',') || !std::getline(in, c, ',') ||
        std::getline(in, rest)) {
      return Status::Error("--leaf-spine " + Text(vm, "leaf-spine") + ": SPINES,LEAVES,SERVERS");
    }
    SWEMU_RETURN_IF_ERROR(Check("leaf-spine", ParseUint(a, 1, 64), &spines));
    SWEMU_RETURN_IF_ERROR(Check("leaf-spine", ParseUint(b, 1, 256), &leaves));
    SWEMU_RETURN_IF_ERROR(Check("leaf-spine", ParseUint(c, 2, 4096), &servers));
  }
  SWEMU_RETURN_IF_ERROR(Check("memory", ParseBytes(Text(vm, "memory")), &memory));
  if (memory < 256) return Status::Error("--memory: at least one 256-byte slot");
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "submodels", 0, 100000, &submodels));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  Result<ModelLayers> model = BundledModel(Text(vm, "model"));
  if (!model.ok()) return Status::Error("--model: " + model.message());
  std::string json;
  if (vm.count("json")) {
    json = Text(vm, "json");
    SWEMU_RETURN_IF_ERROR(CheckOutputFile(json, "--json"));
  }
  const uint64_t slots = memory / 256;
  GinaGraph probe = LeafSpineGraph(static_cast<uint32_t>(spines), static_cast<uint32_t>(leaves),
                                   static_cast<uint32_t>(servers), {}, 0);
  Result<std::vector<std::string>> programmable = Programmable(Text(vm, "programmable"), probe, seed);
  if (!programmable.ok()) return programmable.status();
  const GinaGraph graph =
      LeafSpineGraph(static_cast<uint32_t>(spines), static_cast<uint32_t>(leaves),
                     static_cast<uint32_t>(servers), *programmable, slots);
  uint64_t total_slots = 0;
  std::vector<uint64_t> sizes;
  for (const LayerSize& l : model->layers) {
    sizes.push_back(GinaSlotsOfBytes(l.params * 4));
    total_slots += sizes.back();
  }
  if (submodels != 0) {
    sizes.assign(submodels, total_slots / submodels);
    for (uint64_t k = 0; k < total_slots % submodels; ++k) ++sizes[k];
    sizes.erase(std::remove(sizes.begin(), sizes.end(), 0u), sizes.end());
  }
  Result<std::vector<uint64_t>> split = SplitSubmodels(sizes, slots);
  if (!split.ok()) return split.status();
  Result<GinaProblem> problem = BuildGinaProblem(graph, *split);
  if (!problem.ok()) return problem.status();
  const bool classes = vm.count("no-classes") == 0;
  Result<GinaLpSolution> lp = SolveGinaLp(*problem, classes);
  if (!lp.ok()) return lp.status();
  KrgsStats st;
  Result<GinaPlan> plan = RoundKrgs(*problem, *lp, seed, &st);
  if (!plan.ok()) return plan.status();
  GinaPlan ps_only;
  ps_only.node.assign(problem->submodels.size(), std::vector<int32_t>(problem->num_workers(), kGinaPs));
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
                model->model.c_str(), static_cast<double>(total_slots) * kSlotBytes / 1e6,
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
                st.bins_at_most_half, st.normalised, st.switches_over_before_repair,
                st.max_overuse, st.demoted);
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
    SWEMU_RETURN_IF_ERROR(WriteTextFile(json, GinaPlanJson(*problem, *plan)));
    out << "wrote " << json << "\n";
  }
  return Status::Ok();
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << "usage: swemu-goat plan [options]   (plan --help for its options)\n"
                 "  plan  GINA's LP in Clp and KRGS's rounding for a leaf-spine and a model\n"
                 "every option: docs/cli.md\n";
    return argc < 2 ? 2 : 0;
  }
  if (std::string(argv[1]) != "plan") {
    std::cerr << "swemu-goat: unknown command " << argv[1] << " (expected plan)\n";
    return 2;
  }
  po::variables_map vm;
  const int exit_now = ParseSubcommand("swemu-goat", "plan", "[options]", PlanOptions(), argc - 1,
                                       argv + 1, &vm);
  if (exit_now >= 0) return exit_now;
  Status status = RunPlan(vm, std::cout);
  if (!status.ok()) {
    std::cerr << "swemu-goat plan: " << status.message() << "\n";
    return status.message().starts_with("--") || status.message().starts_with("GINA") ? 2 : 1;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-goat", [&] { return swemu::Main(argc, argv); });
}
