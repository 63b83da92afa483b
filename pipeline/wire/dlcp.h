#pragma once
// DLCP (Wang et al.): gradient-aware priorities in the DSCP. A host tags the packets of layer x of
// L (0 at the input layer) with priority floor(x * 7 / L), 0 for the front layers; a switch puts
// tag t in data queue 6 - t (queue 6 the highest data queue; queue 7, the highest, carries only
// control signals). Whether a packet may be dropped rides in the ECN field: ECT for important
// gradients (marked, kept), Not-ECT for unimportant ones (dropped above the queue's threshold).
// The DSCP codepoints are swemu's (the paper gives none): configurable, these are the defaults.
#include <cstdint>

namespace swemu {

inline constexpr uint32_t kDlcpDataPriorities = 7;  // tags 0..6, queues 6..0
inline constexpr uint8_t kDlcpDefaultDscpBase = 16;     // tag t rides as DSCP 16 + t (CS2..)
inline constexpr uint8_t kDlcpDefaultControlDscp = 48;  // CS6, network control
inline constexpr int kDlcpControlQueue = 7;

// The queue of data tag t (0..6): front layers highest.
constexpr int DlcpQueueOfTag(uint32_t tag) noexcept {
  return static_cast<int>(kDlcpDataPriorities - 1 - tag);
}
// The tag of layer x of L layers (0 <= x < L): floor(x * 7 / L).
constexpr uint32_t DlcpTagOfLayer(uint32_t x, uint32_t layers) noexcept {
  return layers == 0 ? 0 : static_cast<uint32_t>(uint64_t{x} * kDlcpDataPriorities / layers);
}

}  // namespace swemu
