#include "hostlib/common/packet_priority.h"

#include <algorithm>
#include <cmath>

namespace swemu {

uint32_t PacketPriority::Level(uint64_t sent, uint64_t remaining) const noexcept {
  switch (tagging) {
    case PriorityTagging::kPias:
      return static_cast<uint32_t>(std::upper_bound(thresholds.begin(), thresholds.end(), sent) -
                                   thresholds.begin());
    case PriorityTagging::kPfabric:
      return static_cast<uint32_t>(
          std::lower_bound(thresholds.begin(), thresholds.end(), remaining) - thresholds.begin());
    case PriorityTagging::kNone:
      break;
  }
  return 0;
}

uint8_t PacketPriority::Dscp(uint64_t sent, uint64_t remaining) const noexcept {
  if (tagging == PriorityTagging::kNone) return 0;
  return static_cast<uint8_t>(kPriorityDscpBase + Level(sent, remaining));
}

PacketPriority PiasPriority(std::vector<uint64_t> flow_bytes) {
  PacketPriority p;
  p.tagging = PriorityTagging::kPias;
  if (flow_bytes.empty()) return p;
  std::sort(flow_bytes.begin(), flow_bytes.end());
  const std::size_t n = flow_bytes.size();
  for (std::size_t k = 1; k < kPriorityLevels; ++k) {
    p.thresholds[k - 1] = flow_bytes[std::min(n - 1, k * n / kPriorityLevels)];
  }
  return p;
}

PacketPriority PfabricPriority(uint64_t largest_flow, uint32_t mss) {
  PacketPriority p;
  p.tagging = PriorityTagging::kPfabric;
  const double r = std::max(1.0, static_cast<double>(largest_flow) / std::max<uint32_t>(mss, 1));
  for (std::size_t k = 1; k < kPriorityLevels; ++k) {
    const double exponent = static_cast<double>(k - 1) / (kPriorityLevels - 1);
    p.thresholds[k - 1] = static_cast<uint64_t>(std::llround(mss * std::pow(r, exponent)));
  }
  return p;
}

std::vector<std::string> PriorityQueueCommands() {
  std::vector<std::string> out;
  out.push_back("table_add qos set_queue 0&&&0x3f => " + std::to_string(kPriorityLevels - 1) +
                " 1");
  for (uint32_t k = 0; k < kPriorityLevels; ++k) {
    out.push_back("table_add qos set_queue " + std::to_string(kPriorityDscpBase + k) +
                  "&&&0x3f => " + std::to_string(kPriorityLevels - 1 - k) + " 1");
  }
  return out;
}

}  // namespace swemu
