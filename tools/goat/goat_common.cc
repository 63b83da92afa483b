#include "tools/goat/goat_common.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "hostlib/goat/gina.h"
#include "hostlib/workload/model_layers.h"
#include "pipeline/control/units.h"
#include "pipeline/engine/rng.h"

namespace swemu::goat_tool {

Result<LeafSpineShape> ParseLeafSpine(const std::string& text) {
  std::stringstream in(text);
  std::string a, b, c, rest;
  if (!std::getline(in, a, ',') || !std::getline(in, b, ',') || !std::getline(in, c, ',') ||
      std::getline(in, rest)) {
    return Status::Error("--leaf-spine " + text + ": SPINES,LEAVES,SERVERS");
  }
  Result<uint64_t> spines = ParseUint(a, 1, 64);
  Result<uint64_t> leaves = ParseUint(b, 1, 256);
  Result<uint64_t> servers = ParseUint(c, 2, 4096);
  for (const Status& s : {spines.status(), leaves.status(), servers.status()}) {
    if (!s.ok()) return Status::Error("--leaf-spine: " + s.message());
  }
  return LeafSpineShape{static_cast<uint32_t>(*spines), static_cast<uint32_t>(*leaves),
                        static_cast<uint32_t>(*servers)};
}

Result<FatTreeShape> ParseFatTree(const std::string& text) {
  const std::size_t comma = text.find(',');
  Result<uint64_t> k = ParseUint(text.substr(0, comma), 2, 32);
  Result<uint64_t> per_edge = comma == std::string::npos ? Result<uint64_t>(Status::Error("no ','"))
                                                         : ParseUint(text.substr(comma + 1), 1, 64);
  if (!k.ok() || !per_edge.ok() || *k % 2 != 0) {
    return Status::Error("--fat-tree " + text + ": K,SERVERS_PER_EDGE with K even in 2..32");
  }
  return FatTreeShape{static_cast<uint32_t>(*k), static_cast<uint32_t>(*per_edge)};
}

Result<std::vector<std::string>> ProgrammableSwitches(const std::string& text,
                                                      std::vector<std::string> switches,
                                                      uint64_t seed) {
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
  for (std::size_t i = switches.size(); i > 1; --i) {
    std::swap(switches[i - 1], switches[rng.Next() % i]);
  }
  switches.resize(count);
  return switches;
}

Result<ModelSlots> SizeModel(const std::string& model, uint64_t submodels, double scale,
                             uint64_t max_slots, uint64_t slot_bytes) {
  if (!(scale >= 1)) return Status::Error("--scale must be at least 1");
  auto slots_of = [slot_bytes](uint64_t bytes) { return (bytes + slot_bytes - 1) / slot_bytes; };
  ModelSlots out;
  std::vector<uint64_t> sizes;
  Result<ModelLayers> bundled = BundledModel(model);
  if (bundled.ok()) {
    out.name = bundled->model;
    for (const LayerSize& l : bundled->layers) {
      sizes.push_back(std::max<uint64_t>(
          1, slots_of(static_cast<uint64_t>(static_cast<double>(l.params) * 4 / scale))));
    }
  } else {
    Result<uint64_t> bytes = ParseBytes(model);
    if (!bytes.ok() || *bytes == 0) {
      return Status::Error("--model " + model + ": neither a bundled model (" + [] {
        std::string names;
        for (const std::string& n : BundledModelNames()) {
          names += (names.empty() ? "" : ", ") + n;
        }
        return names;
      }() + ") nor a size such as 44MB");
    }
    out.name = model;
    sizes.push_back(std::max<uint64_t>(1, slots_of(static_cast<uint64_t>(*bytes / scale))));
    if (submodels == 0) submodels = 1;
  }
  for (uint64_t s : sizes) out.total_slots += s;
  if (submodels != 0) {
    sizes.assign(submodels, out.total_slots / submodels);
    for (uint64_t k = 0; k < out.total_slots % submodels; ++k) ++sizes[k];
    sizes.erase(std::remove(sizes.begin(), sizes.end(), 0u), sizes.end());
  }
  Result<std::vector<uint64_t>> split = SplitSubmodels(sizes, max_slots);
  if (!split.ok()) return split.status();
  out.submodels = std::move(*split);
  return out;
}

}  // namespace swemu::goat_tool
