#include "hostlib/dlcp/segments.h"

#include <algorithm>
#include <cmath>

#include "pipeline/engine/rng.h"
#include "pipeline/wire/dlcp.h"

namespace swemu {

float EstimateMedianMagnitude(std::span<const float> g, double sample_share, uint32_t min_samples,
                              uint64_t seed) {
  if (g.empty()) return 0.0f;
  const auto want = std::max<uint64_t>(
      static_cast<uint64_t>(static_cast<double>(g.size()) * sample_share), min_samples);
  const uint64_t stride = std::max<uint64_t>(g.size() / std::max<uint64_t>(want, 1), 1);
  SplitMix64 rng(seed);
  std::vector<float> sample;
  sample.reserve(g.size() / stride + 1);
  for (uint64_t i = rng.Next() % stride; i < g.size(); i += stride) sample.push_back(std::abs(g[i]));
  auto mid = sample.begin() + static_cast<std::ptrdiff_t>(sample.size() / 2);
  std::nth_element(sample.begin(), mid, sample.end());
  return *mid;
}

DlcpPrioFunc LayerPriority(uint32_t layer, uint32_t layers) {
  const auto tag = static_cast<uint8_t>(DlcpTagOfLayer(layer, layers));
  return [tag](uint32_t, uint32_t) { return tag; };
}

Result<std::vector<DlcpSegment>> SegmentTensor(std::span<const float> g, uint32_t partition_bytes,
                                               const DlcpPrioFunc& prio, uint64_t seed) {
  if (partition_bytes < 4 || partition_bytes % 4 != 0) {
    return Status::Error("DLCP partition of " + std::to_string(partition_bytes) +
                         " bytes: a positive multiple of 4 (no gradient across two packets)");
  }
  if (g.size() * 4 > (uint64_t{1} << 32)) return Status::Error("DLCP tensor larger than 4 GiB");
  const float median = EstimateMedianMagnitude(g, 0.001, 64, seed);
  const uint32_t per = partition_bytes / 4;
  std::vector<DlcpSegment> out;
  out.reserve(g.size() / per + 1);
  for (uint64_t first = 0; first < g.size(); first += per) {
    const uint64_t n = std::min<uint64_t>(per, g.size() - first);
    double sum = 0;
    for (uint64_t i = first; i < first + n; ++i) sum += std::abs(g[i]);
    DlcpSegment s;
    s.offset = static_cast<uint32_t>(first * 4);
    s.length = static_cast<uint32_t>(n * 4);
    s.tag = std::min<uint8_t>(prio(s.offset, s.length), kDlcpDataPriorities - 1);
    s.important = sum / static_cast<double>(n) >= median;
    out.push_back(s);
  }
  return out;
}

}  // namespace swemu
