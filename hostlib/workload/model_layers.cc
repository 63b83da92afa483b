#include "hostlib/workload/model_layers.h"

#include <algorithm>

#include <cctype>
#include <charconv>

#include "hostlib/workload/model_layers_data.h"

namespace swemu {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "1,234,567" -> 1234567; false on anything else.
bool ParseGroupedNumber(std::string_view s, uint64_t* out) {
  std::string digits;
  for (char c : s) {
    if (c == ',') continue;
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    digits.push_back(c);
  }
  if (digits.empty()) return false;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *out);
  return ec == std::errc() && end == digits.data() + digits.size();
}

std::string Canonical(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

uint64_t ModelLayers::TotalParams() const {
  uint64_t total = 0;
  for (const LayerSize& layer : layers) total += layer.params;
  return total;
}

Result<std::vector<ModelLayers>> ParseModelLayers(std::string_view text) {
  std::vector<ModelLayers> models;
  int line_no = 0;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    const std::string where = "model layers line " + std::to_string(line_no) + ": ";
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("==")) {
      std::string_view rest = Trim(line.substr(2));
      const std::size_t colon = rest.find(':');
      std::string_view name = Trim(rest.substr(0, colon));
      if (name.empty()) return Status::Error(where + "a model header needs a name");
      models.push_back(ModelLayers{std::string(name), {}});
      continue;
    }
    if (models.empty()) return Status::Error(where + "a layer before any '== model' header");
    const std::size_t key = line.find("params=");
    if (key == std::string_view::npos) return Status::Error(where + "expected 'params='");
    std::string_view name = Trim(line.substr(0, key));
    std::string_view value = Trim(line.substr(key + 7));
    value = value.substr(0, value.find_first_of(" \t("));
    uint64_t params = 0;
    if (name.empty() || !ParseGroupedNumber(value, &params) || params == 0) {
      return Status::Error(where + "expected '<layer> params= <count>'");
    }
    models.back().layers.push_back(LayerSize{std::string(name), params});
  }
  for (const ModelLayers& model : models) {
    if (model.layers.empty()) return Status::Error("model " + model.model + " has no layers");
  }
  return models;
}

std::vector<std::string> BundledModelNames() {
  std::vector<std::string> names;
  auto models = ParseModelLayers(kBundledModelLayers);
  if (models.ok()) {
    for (const ModelLayers& model : *models) names.push_back(model.model);
  }
  return names;
}

Result<ModelLayers> BundledModel(std::string_view name) {
  auto models = ParseModelLayers(kBundledModelLayers);
  if (!models.ok()) return models.status();
  std::string names;
  for (ModelLayers& model : *models) {
    if (Canonical(model.model) == Canonical(name)) return std::move(model);
    names += (names.empty() ? "" : ", ") + model.model;
  }
  return Status::Error("unknown model '" + std::string(name) + "' (bundled: " + names + ")");
}

std::vector<LayerPartition> PartitionLayers(const ModelLayers& model) {
  std::vector<LayerPartition> partitions;
  for (uint32_t l = 0; l < model.layers.size(); ++l) {
    const uint64_t params = model.layers[l].params;
    for (uint64_t done = 0; done < params; done += kPartitionFloats) {
      partitions.push_back({l, done, std::min<uint64_t>(kPartitionFloats, params - done)});
    }
  }
  return partitions;
}

}  // namespace swemu
