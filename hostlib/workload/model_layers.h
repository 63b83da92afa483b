#pragma once
// Per-layer parameter counts of real models (VGG16, AlexNet, ResNet-50, Inception-v3), for
// workloads that all-reduce a model's gradients layer by layer. The counts are bundled into the library from
// configs/models/model_layers.txt, so tools run on an embedded default with no file at hand.
#include <cstddef>
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

// Each layer is all-reduced in partitions of at most this many floats (4 MB, as BytePS pushes
// tensors in the ATP paper's setup, section 7.1).
inline constexpr std::size_t kPartitionFloats = std::size_t{1} << 20;

// One all-reduce call of an iteration: a layer, or a partition of a large one.
struct LayerPartition {
  uint32_t layer = 0;
  uint64_t offset = 0;  // first parameter within the layer
  uint64_t count = 0;   // parameters
};

// An iteration's calls in submission order: each layer in partitions of at most
// kPartitionFloats, as swemu-atp's workload submits them and swemu-gen's ATP traffic follows.
std::vector<LayerPartition> PartitionLayers(const ModelLayers& model);

// Parses the model_layers.txt format: a "== <model>: ..." line per model, then one
// "  <layer> params= 1,234 ..." line per layer. Errors name the line.
Result<std::vector<ModelLayers>> ParseModelLayers(std::string_view text);

// The bundled models: names as in the file ("VGG16", "AlexNet", "ResNet50", "InceptionV3"),
// matched without regard to case or '-' ("resnet-50" works).
std::vector<std::string> BundledModelNames();
Result<ModelLayers> BundledModel(std::string_view name);

}  // namespace swemu
