#pragma once
// What swemu-goat's subcommands share: the leaf-spine shape, the programmable switches, a
// model's gradients in aggregator slots split into sub-models.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu::goat_tool {

inline constexpr double kSlotBytes = 256;  // 64 float32 values

struct LeafSpineShape {
  uint32_t spines = 0;
  uint32_t leaves = 0;
  uint32_t servers = 0;
};
// "SPINES,LEAVES,SERVERS".
Result<LeafSpineShape> ParseLeafSpine(const std::string& text);

// --programmable: a share ("20%") or a count of `switches` drawn with `seed`, or names.
Result<std::vector<std::string>> ProgrammableSwitches(const std::string& text,
                                                      std::vector<std::string> switches,
                                                      uint64_t seed);

// A model's gradients in slots: a bundled model's layers (VGG16, AlexNet, ResNet50) or a size
// ("44MB"), divided by `scale`, cut into `submodels` equal sub-models (0: one per layer of a
// bundled model), then any sub-model above max_slots split again. Errors name the option.
struct ModelSlots {
  std::string name;
  uint64_t total_slots = 0;
  std::vector<uint64_t> submodels;
};
Result<ModelSlots> SizeModel(const std::string& model, uint64_t submodels, double scale,
                             uint64_t max_slots);

}  // namespace swemu::goat_tool
