// swemu-goat's network and model options (goat_sim.h, GoatSetup), shared by sim, publish, demo.
#include <sstream>

#include "pipeline/control/units.h"
#include "swemu/topology_config.h"
#include "tools/goat/goat_sim.h"
#include "tools/option_values.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;

void AddGoatSetupOptions(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("topology", po::value<std::string>()->value_name("FILE"), "the network from a topology file (configs/goat_testbed/goat.topo, configs/goat_leaf_spine.topo): its hosts say role=worker (worker ids in file order) and role=ps (one); a goat switch's [program] slots is its memory; instead of --fabric and its shape options")
      ("fabric", po::value<std::string>()->default_value("testbed"), "testbed (the paper's Fig. 4: s1, s2 with workers, the PS on s3, links s1-s3, s2-s3, s1-s2), leaf-spine or fat-tree")
      ("per-switch", po::value<std::string>()->default_value("4"), "testbed: workers on each of s1 and s2")
      ("leaf-spine", po::value<std::string>()->default_value("10,10,50"), "leaf-spine: SPINES,LEAVES,SERVERS (the PS on the last leaf)")
      ("fat-tree", po::value<std::string>()->default_value("8,6"), "fat-tree: K,SERVERS_PER_EDGE (k-ary: (k/2)^2 cores, k pods of k/2 aggregation and k/2 edge switches; the PS on the last edge)")
      ("workers", po::value<std::string>()->default_value("0"), "leaf-spine, fat-tree: use the first N workers (0: every server but the PS; at most 64, the header's bitmap)")
      ("programmable", po::value<std::string>()->default_value("20%"), "leaf-spine, fat-tree: a share of the switches drawn by --seed, a count, or names")
      ("memory", po::value<std::string>(), "each programmable switch's aggregator memory before --scale (default 20MB testbed, 64MB leaf-spine and fat-tree)")
      ("model", po::value<std::string>(), "a bundled model (VGG16, AlexNet, ResNet50) or a size (default 44MB, ResNet-18, testbed; AlexNet leaf-spine and fat-tree)")
      ("submodels", po::value<std::string>()->default_value("16"), "equal sub-models (0: one per layer of a bundled model); larger than a switch's memory: split")
      ("scale", po::value<std::string>()->default_value("1000"), "divide the model and the memory by this (1: the full sizes; sim then needs --stage-sram 4MiB and a --window, docs/papers.md, GOAT)")
      ("elements", po::value<std::string>()->default_value(std::to_string(kGoatDefaultElements)), "int32 values per fragment")
      ("seed", po::value<std::string>()->default_value("1"), "seed (switches drawn, KRGS, gradients, rates)");
  // clang-format on
}

namespace {

// --fabric testbed, leaf-spine or fat-tree, and their shape options.
Result<GoatFabricSpec> BuiltInSpec(const po::variables_map& vm, bool testbed, uint64_t slots,
                                   uint64_t seed, std::ostringstream& what) {
  // Checked whatever the fabric: "--workers -1" on the testbed ran with it silently ignored.
  uint64_t workers = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "workers", 0, kGoatMaxWorkers, &workers));
  if (testbed && !vm["workers"].defaulted()) {
    return Status::Error(
        "--workers: only with --fabric leaf-spine or fat-tree (the testbed's are --per-switch)");
  }
  if (testbed) {
    uint64_t per_switch = 0;
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-switch", 1, 32, &per_switch));
    what << "testbed: s1, s2 with " << per_switch << " workers each, the PS on s3";
    return GoatFabricSpec::ThreeSwitch(static_cast<uint32_t>(per_switch),
                                       static_cast<uint32_t>(slots));
  }
  const bool fat_tree = Text(vm, "fabric") == "fat-tree";
  if (!fat_tree && Text(vm, "fabric") != "leaf-spine") {
    return Status::Error("--fabric " + Text(vm, "fabric") + ": testbed, leaf-spine or fat-tree");
  }
  Result<goat_tool::LeafSpineShape> shape = goat_tool::ParseLeafSpine(Text(vm, "leaf-spine"));
  if (!shape.ok()) return shape.status();
  Result<goat_tool::FatTreeShape> tree = goat_tool::ParseFatTree(Text(vm, "fat-tree"));
  if (!tree.ok()) return tree.status();
  auto build = [&](const std::vector<std::string>& programmable, uint32_t slots_each) {
    return fat_tree ? GoatFabricSpec::FatTree(tree->k, tree->servers(), programmable, slots_each)
                    : GoatFabricSpec::LeafSpine(shape->spines, shape->leaves, shape->servers,
                                                programmable, slots_each);
  };
  GoatFabricSpec all = build({}, 0);
  std::vector<std::string> names;
  for (const auto& s : all.switches) names.push_back(s.name);
  Result<std::vector<std::string>> programmable =
      goat_tool::ProgrammableSwitches(Text(vm, "programmable"), names, seed);
  if (!programmable.ok()) return programmable.status();
  GoatFabricSpec spec = build(*programmable, static_cast<uint32_t>(slots));
  std::vector<GoatFabricSpec::Host> kept;
  uint64_t taken = 0;
  for (const auto& h : spec.hosts) {
    if (h.ps || workers == 0 || taken++ < workers) kept.push_back(h);
  }
  spec.hosts = kept;
  std::string list;
  for (const std::string& n : *programmable) list += (list.empty() ? "" : ",") + n;
  if (fat_tree) {
    what << "fat-tree k=" << tree->k << ": " << tree->k * tree->k / 4 << " core, "
         << tree->k * tree->k / 2 << " aggregation, " << tree->k * tree->k / 2 << " edge switches, "
         << tree->servers() << " servers";
  } else {
    what << "leaf-spine " << shape->spines << " spines x " << shape->leaves << " leaves, "
         << shape->servers << " servers";
  }
  what << "; programmable: " << (list.empty() ? "none" : list);
  return spec;
}

// --topology FILE: the network the file describes; *slots becomes its largest switch memory.
Result<GoatFabricSpec> TopologySpec(const po::variables_map& vm, uint64_t* slots,
                                    std::ostringstream& what) {
  SWEMU_RETURN_IF_ERROR(opt::RefuseWithTopology(
      vm, {"fabric", "per-switch", "leaf-spine", "fat-tree", "workers", "programmable", "memory"}));
  const std::string path = Text(vm, "topology");
  Result<TopologyConfig> topo = LoadTopology(path);
  if (!topo.ok()) return Status::Error("--topology " + topo.message());
  Result<GoatFabricSpec> spec = GoatFabricSpec::FromTopology(*topo);
  if (!spec.ok()) return Status::Error("--topology " + spec.message());
  *slots = 0;
  std::string list;
  for (const auto& sw : spec->switches) {
    *slots = std::max<uint64_t>(*slots, sw.slots);
    if (sw.slots != 0) list += (list.empty() ? "" : ",") + sw.name;
  }
  what << "topology " << path << ": " << spec->switches.size() << " switches, "
       << spec->hosts.size() - 1 << " workers, the PS on " << spec->hosts.back().sw
       << "; programmable: " << (list.empty() ? "none" : list);
  return spec;
}

}  // namespace

Result<GoatSetup> MakeGoatSetup(const po::variables_map& vm) {
  const bool from_file = vm.count("topology") != 0;
  const bool testbed = Text(vm, "fabric") == "testbed";
  uint64_t seed = 0, submodels = 0, elements = 0;
  double scale = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "submodels", 0, 100000, &submodels));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "elements", 1, goat_tool::kMaxElements, &elements));
  SWEMU_RETURN_IF_ERROR(Check("scale", ParseDouble(Text(vm, "scale"), 1, 1e9), &scale));
  std::string memory;
  uint64_t slots = 0;
  std::ostringstream what;
  Result<GoatFabricSpec> spec = Status::Error("no network");
  if (from_file) {
    spec = TopologySpec(vm, &slots, what);
  } else {
    memory = vm.count("memory") ? Text(vm, "memory") : testbed ? "20MB" : "64MB";
    Result<uint64_t> bytes = ParseBytes(memory);
    if (!bytes.ok()) return Status::Error("--memory: " + bytes.message());
    // A slot holds one fragment's values: 4 B per element (kSlotBytes at the default 64).
    slots = static_cast<uint64_t>(static_cast<double>(*bytes) / (4.0 * elements) / scale);
    if (slots == 0 || slots > (1u << 22)) {
      return Status::Error("--memory " + memory + " / --scale gives " + std::to_string(slots) +
                           " slots per switch (1.." + std::to_string(1u << 22) + ")");
    }
    spec = BuiltInSpec(vm, testbed, slots, seed, what);
  }
  if (!spec.ok()) return spec.status();
  Result<GoatFabric> fabric = GoatFabric::Create(std::move(*spec));
  if (!fabric.ok()) {
    return from_file ? Status::Error("--topology " + Text(vm, "topology") + ": " + fabric.message())
                     : fabric.status();
  }
  const std::string model_text = vm.count("model")      ? Text(vm, "model")
                                 : testbed || from_file ? "44MB"
                                                        : "AlexNet";
  // Sub-models above the largest switch memory are split (none programmable: not split).
  Result<goat_tool::ModelSlots> model = goat_tool::SizeModel(
      model_text, submodels, scale, slots != 0 ? slots : 1u << 22, 4 * elements);
  if (!model.ok()) return model.status();
  return GoatSetup{
      std::move(*fabric), what.str(), memory, slots, scale, seed, static_cast<uint16_t>(elements),
      std::move(*model)};
}

Result<std::vector<TimeNs>> WorkerDelays(const po::variables_map& vm, uint32_t workers) {
  std::vector<TimeNs> delay(workers, 0);
  if (!vm.count("delay")) return delay;
  for (const std::string& d : vm["delay"].as<std::vector<std::string>>()) {
    const std::size_t eq = d.find('=');
    Result<uint64_t> w = ParseUint(d.substr(0, eq), 0, workers - 1);
    Result<TimeNs> t = eq == std::string::npos ? Result<TimeNs>(Status::Error("no '='"))
                                               : ParseDurationOption(d.substr(eq + 1));
    if (!w.ok() || !t.ok()) {
      return Status::Error("--delay " + d + ": W=TIME with W in 0.." + std::to_string(workers - 1));
    }
    delay[*w] = *t;
  }
  return delay;
}

}  // namespace swemu
