#pragma once
// Per-packet priority tagging for the baselines that schedule by it, host side and switch side in
// one place: PIAS (Bai et al., NSDI '15: a flow is demoted through priority levels as the bytes it
// has sent pass thresholds, without knowing its size) and pFabric (Alizadeh et al., SIGCOMM '13:
// a packet's priority is its flow's remaining size). A segment's level 0..7 (0 the highest) is
// carried in the IPv4 DSCP as kPriorityDscpBase + level; a switch running l2l3 with
// PriorityQueueCommands() serves level k from queue 7 - k of the port's eight strict-priority
// queues (the TM's), and DSCP 0 (a pure ACK, anything untagged) from queue 7, beside level 0.
// pFabric's switch serves the packet with the smallest priority number first and drops the
// largest; eight strict-priority queues by level quantise that (docs/papers.md, "DLCP").
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace swemu {

inline constexpr uint32_t kPriorityLevels = 8;
inline constexpr uint8_t kPriorityDscpBase = 32;  // level k: DSCP 32 + k (CS4 up)

enum class PriorityTagging : uint8_t {
  kNone,     // DSCP 0 on every segment
  kPias,     // the level from the bytes the flow sent before this segment
  kPfabric,  // the level from the bytes of the flow not yet acknowledged
};

struct PacketPriority {
  PriorityTagging tagging = PriorityTagging::kNone;
  // Level boundaries in bytes, non-decreasing. PIAS: a segment sent after `sent` bytes of new data
  // is at the number of thresholds <= sent (demoted as each is reached). pFabric: a segment of a
  // flow with `remaining` bytes unacknowledged is at the number of thresholds < remaining.
  std::array<uint64_t, kPriorityLevels - 1> thresholds{};

  // 0 (the highest) .. 7.
  uint32_t Level(uint64_t sent, uint64_t remaining) const noexcept;
  // The DSCP a data segment carries: 0 without tagging, else kPriorityDscpBase + Level.
  uint8_t Dscp(uint64_t sent, uint64_t remaining) const noexcept;
};

// PIAS's thresholds come from the workload's flow-size distribution (its paper solves for them
// per load); these split that distribution evenly: threshold k (1..7) is the k/8 quantile of
// `flow_bytes` (the flows' sizes, any order), so when every flow starts together each level
// holds an eighth of the flows as their first bytes leave. Empty input: every threshold 0.
PacketPriority PiasPriority(std::vector<uint64_t> flow_bytes);
// pFabric's remaining size on a log scale: threshold k (1..7) is mss * R^((k - 1) / 7) bytes,
// R = largest_flow / mss (at least 1), so a flow with one segment or less left is level 0 and the
// levels spread geometrically up to the workload's largest flow.
PacketPriority PfabricPriority(uint64_t largest_flow, uint32_t mss);

// The l2l3 commands (its ternary `qos` table) that put DSCP kPriorityDscpBase + k in queue 7 - k
// and DSCP 0 in queue 7; any other DSCP keeps qos's default, queue 0.
std::vector<std::string> PriorityQueueCommands();

}  // namespace swemu
