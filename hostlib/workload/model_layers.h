#pragma once
// Per-layer parameter counts of real models (VGG16, AlexNet, ResNet-50), for workloads that
// all-reduce a model's gradients layer by layer. The counts are bundled into the library from
// configs/models/model_layers.txt, so tools run on an embedded default with no file at hand.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct LayerSize {
  std::string name;
  uint64_t params = 0;
};

struct ModelLayers {
  std::string model;
  std::vector<LayerSize> layers;
  uint64_t TotalParams() const;
};

// Parses the model_layers.txt format: a "== <model>: ..." line per model, then one
// "  <layer> params= 1,234 ..." line per layer. Errors name the line.
Result<std::vector<ModelLayers>> ParseModelLayers(std::string_view text);

// The bundled models: names as in the file ("VGG16", "AlexNet", "ResNet50"), matched without
// regard to case or '-' ("resnet-50" works).
std::vector<std::string> BundledModelNames();
Result<ModelLayers> BundledModel(std::string_view name);

}  // namespace swemu
