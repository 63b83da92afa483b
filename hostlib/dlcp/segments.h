#pragma once
// The DLCP sender's view of a tensor (3.2.2, 4.1): consecutive partitions of whole elements,
// each one packet's payload; each tagged with its layer's priority (pipeline/wire/dlcp.h) and
// marked important (ECT) when its mean gradient magnitude is at or above the tensor's median,
// which is estimated from a 0.1% sample (at least a minimum number of elements, so small
// tensors are sampled too; all of them when the tensor has fewer).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct DlcpSegment {
  uint32_t offset = 0;  // bytes into the tensor
  uint32_t length = 0;  // bytes
  uint8_t tag = 0;      // priority tag 0..6
  bool important = false;
};

// The median of |g| over a sample: every stride-th element from a seeded start, with
// stride = n / max(n * sample_share, min_samples).
float EstimateMedianMagnitude(std::span<const float> g, double sample_share = 0.001,
                              uint32_t min_samples = 64, uint64_t seed = 1);

// A priority function of a segment: its tag (0..6) given where it lies.
using DlcpPrioFunc = std::function<uint8_t(uint32_t offset, uint32_t length)>;
// The default: every segment of layer x of L gets floor(x * 7 / L).
DlcpPrioFunc LayerPriority(uint32_t layer, uint32_t layers);

// Cuts `g` into partitions of at most partition_bytes (a multiple of 4), tags each with prio
// and marks it important against the estimated median. Errors name a bad partition size.
Result<std::vector<DlcpSegment>> SegmentTensor(std::span<const float> g, uint32_t partition_bytes,
                                               const DlcpPrioFunc& prio, uint64_t seed = 1);

}  // namespace swemu
