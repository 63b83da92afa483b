#pragma once
// What swemu-goat's subcommands share: the leaf-spine and fat-tree shapes, the programmable
// switches, a model's gradients in aggregator slots split into sub-models.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu::goat_tool {

inline constexpr double kSlotBytes = 256;  // 64 float32 values
// The most int32 values per fragment the goat program holds: its value lanes take 4 stateful
// ALUs per stage from ingress stage 4 through the egress stages, and the overflow register one
// stage after them (77 and more fail to load; the parse depth of 512 B would allow 110). The
// paper's switch uses 64 (section VI).
inline constexpr uint64_t kMaxElements = 76;

struct LeafSpineShape {
  uint32_t spines = 0;
  uint32_t leaves = 0;
  uint32_t servers = 0;
};
// "SPINES,LEAVES,SERVERS".
Result<LeafSpineShape> ParseLeafSpine(const std::string& text);

struct FatTreeShape {
  uint32_t k = 0;
  uint32_t per_edge = 0;  // servers on each edge switch
  uint32_t servers() const { return k * k / 2 * per_edge; }
};
// "K,SERVERS_PER_EDGE", K even.
Result<FatTreeShape> ParseFatTree(const std::string& text);

// --programmable: a share ("20%") or a count of `switches` drawn with `seed`, or names.
Result<std::vector<std::string>> ProgrammableSwitches(const std::string& text,
                                                      std::vector<std::string> switches,
                                                      uint64_t seed);

// A model's gradients in slots of `slot_bytes` (a fragment's values: 4 B per element, 256 B at
// the default 64): a bundled model's layers (VGG16, AlexNet, ResNet50) or a size ("44MB"),
// divided by `scale`, cut into `submodels` equal sub-models (0: one per layer of a bundled
// model), then any sub-model above max_slots split again. Errors name the option.
struct ModelSlots {
  std::string name;
  uint64_t total_slots = 0;
  std::vector<uint64_t> submodels;
};
Result<ModelSlots> SizeModel(const std::string& model, uint64_t submodels, double scale,
                             uint64_t max_slots, uint64_t slot_bytes = 256);

}  // namespace swemu::goat_tool
