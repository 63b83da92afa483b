// swemu-goat's network and model options (goat_sim.h, GoatSetup), shared by sim, publish, demo.
#include <sstream>

#include "pipeline/control/units.h"
#include "tools/option_values.h"
#include "tools/goat/goat_sim.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::CheckUint;
using opt::Text;
using goat_tool::kSlotBytes;

void AddGoatSetupOptions(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("fabric", po::value<std::string>()->default_value("testbed"), "testbed (the paper's Fig. 4: s1, s2 with workers, the PS on s3, links s1-s3, s2-s3, s1-s2) or leaf-spine")
      ("per-switch", po::value<std::string>()->default_value("4"), "testbed: workers on each of s1 and s2")
      ("leaf-spine", po::value<std::string>()->default_value("10,10,50"), "leaf-spine: SPINES,LEAVES,SERVERS (the PS on the last leaf)")
      ("workers", po::value<std::string>()->default_value("0"), "leaf-spine: use the first N workers (0: every server but the PS; at most 64)")
      ("programmable", po::value<std::string>()->default_value("20%"), "leaf-spine: a share of the switches drawn by --seed, a count, or names")
      ("memory", po::value<std::string>(), "each programmable switch's aggregator memory before --scale (default 20MB testbed, 64MB leaf-spine)")
      ("model", po::value<std::string>(), "a bundled model (VGG16, AlexNet, ResNet50) or a size (default 44MB, ResNet-18, testbed; AlexNet leaf-spine)")
      ("submodels", po::value<std::string>()->default_value("16"), "equal sub-models (0: one per layer of a bundled model); larger than a switch's memory: split")
      ("scale", po::value<std::string>()->default_value("1000"), "divide the model and the memory by this (a packet-level run of the full sizes takes hours)")
      ("elements", po::value<std::string>()->default_value(std::to_string(kGoatDefaultElements)), "int32 values per fragment")
      ("seed", po::value<std::string>()->default_value("1"), "seed (switches drawn, KRGS, gradients, rates)");
  // clang-format on
}

Result<GoatSetup> MakeGoatSetup(const po::variables_map& vm) {
  const bool testbed = Text(vm, "fabric") == "testbed";
  uint64_t seed = 0, submodels = 0, elements = 0;
  double scale = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "seed", 0, UINT64_MAX, &seed));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "submodels", 0, 100000, &submodels));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "elements", 1, 366, &elements));
  SWEMU_RETURN_IF_ERROR(Check("scale", ParseDouble(Text(vm, "scale"), 1, 1e9), &scale));
  const std::string memory = vm.count("memory") ? Text(vm, "memory") : testbed ? "20MB" : "64MB";
  Result<uint64_t> bytes = ParseBytes(memory);
  if (!bytes.ok()) return Status::Error("--memory: " + bytes.message());
  const uint64_t slots = static_cast<uint64_t>(static_cast<double>(*bytes) / kSlotBytes / scale);
  if (slots == 0 || slots > (1u << 22)) {
    return Status::Error("--memory " + memory + " / --scale gives " + std::to_string(slots) +
                         " slots per switch (1.." + std::to_string(1u << 22) + ")");
  }
  // Checked whatever the fabric: "--workers -1" on the testbed ran with it silently ignored.
  uint64_t workers = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "workers", 0, kGoatMaxWorkers, &workers));
  if (testbed && !vm["workers"].defaulted()) {
    return Status::Error("--workers: only with --fabric leaf-spine (the testbed's are --per-switch)");
  }
  GoatFabricSpec spec;
  std::ostringstream what;
  if (testbed) {
    uint64_t per_switch = 0;
    SWEMU_RETURN_IF_ERROR(CheckUint(vm, "per-switch", 1, 32, &per_switch));
    spec = GoatFabricSpec::ThreeSwitch(static_cast<uint32_t>(per_switch),
                                       static_cast<uint32_t>(slots));
    what << "testbed: s1, s2 with " << per_switch << " workers each, the PS on s3";
  } else if (Text(vm, "fabric") == "leaf-spine") {
    Result<goat_tool::LeafSpineShape> shape = goat_tool::ParseLeafSpine(Text(vm, "leaf-spine"));
    if (!shape.ok()) return shape.status();
    GoatFabricSpec all =
        GoatFabricSpec::LeafSpine(shape->spines, shape->leaves, shape->servers, {}, 0);
    std::vector<std::string> names;
    for (const auto& s : all.switches) names.push_back(s.name);
    Result<std::vector<std::string>> programmable =
        goat_tool::ProgrammableSwitches(Text(vm, "programmable"), names, seed);
    if (!programmable.ok()) return programmable.status();
    spec = GoatFabricSpec::LeafSpine(shape->spines, shape->leaves, shape->servers, *programmable,
                                     static_cast<uint32_t>(slots));
    std::vector<GoatFabricSpec::Host> kept;
    uint64_t taken = 0;
    for (const auto& h : spec.hosts) {
      if (h.ps || workers == 0 || taken++ < workers) kept.push_back(h);
    }
    spec.hosts = kept;
    std::string list;
    for (const std::string& n : *programmable) list += (list.empty() ? "" : ",") + n;
    what << "leaf-spine " << shape->spines << " spines x " << shape->leaves << " leaves, "
         << shape->servers << " servers; programmable: " << (list.empty() ? "none" : list);
  } else {
    return Status::Error("--fabric " + Text(vm, "fabric") + ": testbed or leaf-spine");
  }
  Result<GoatFabric> fabric = GoatFabric::Create(std::move(spec));
  if (!fabric.ok()) return fabric.status();
  const std::string model_text = vm.count("model") ? Text(vm, "model")
                                 : testbed         ? "44MB"
                                                   : "AlexNet";
  Result<goat_tool::ModelSlots> model = goat_tool::SizeModel(model_text, submodels, scale, slots);
  if (!model.ok()) return model.status();
  return GoatSetup{
      std::move(*fabric), what.str(), memory, slots, scale, seed, static_cast<uint16_t>(elements),
      std::move(*model)};
}

}  // namespace swemu
