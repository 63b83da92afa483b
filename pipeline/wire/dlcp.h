#pragma once
// DLCP (Wang et al.): gradient-aware priorities in the DSCP. A host tags the packets of layer x of
// L (0 at the input layer) with priority floor(x * 7 / L), 0 for the front layers; a switch puts
// tag t in data queue 6 - t (queue 6 the highest data queue; queue 7, the highest, carries only
// control signals). Whether a packet may be dropped rides in the ECN field: ECT for important
// gradients (marked, kept), Not-ECT for unimportant ones (dropped above the queue's threshold).
// The DSCP codepoints are swemu's (the paper gives none): configurable, these are the defaults.
#include <cstdint>

#include "pipeline/wire/byte_order.h"

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

// ---- The transport's header (4.1, Figure 9), after UDP, in data packets and control signals
// alike (docs/wire.md, "DLCP"); big-endian.
inline constexpr uint16_t kDlcpDefaultUdpPort = 9800;
inline constexpr uint8_t kDlcpVersion = 1;
inline constexpr uint32_t kDlcpHeaderLen = 16;

enum class DlcpType : uint8_t {
  kData = 1,     // gradients: tensor, offset, length, seq
  kStart = 2,    // flow start (rendezvous): tensor size in `offset`, loss bound in payload
  kFinish = 3,   // receiver: the bound is met
  kStop = 4,     // sender: nothing more to send
  kRetransmit = 5,  // receiver: the missing ranges (payload), bound not met after a stop
  kConfirm = 6,  // sender: finish seen; the flow is over
  kRate = 7,     // receiver: bytes received in the last period (payload)
  kAck = 8,      // the control channel's acknowledgement of control seq `seq`
};
inline constexpr uint8_t kDlcpFlagPull = 0x01;  // the pull stage (a stricter bound)
// On a FINISH: the receiver refused the tensor (larger than it takes, or no buffer left); the
// sender stops and reports the flow refused, not delivered.
inline constexpr uint8_t kDlcpFlagRefused = 0x02;

struct __attribute__((packed)) DlcpHeader {
  uint8_t version_type;  // version (high nibble) | DlcpType (low nibble)
  uint8_t flags;
  uint8_t length[2];     // payload bytes after this header
  uint8_t tensor[4];
  uint8_t seq[4];        // data: the packet's number in its flow; control: the signal's number
  uint8_t offset[4];     // data: byte offset in the tensor; start: the tensor's size in bytes

  uint8_t Version() const noexcept { return version_type >> 4; }
  DlcpType Type() const noexcept { return static_cast<DlcpType>(version_type & 0x0F); }
  uint16_t Length() const noexcept { return LoadBe16(length); }
  uint32_t Tensor() const noexcept { return LoadBe32(tensor); }
  uint32_t Seq() const noexcept { return LoadBe32(seq); }
  uint32_t Offset() const noexcept { return LoadBe32(offset); }
  void Set(DlcpType type, uint8_t f, uint16_t len, uint32_t t, uint32_t s, uint32_t off) noexcept {
    version_type = static_cast<uint8_t>((kDlcpVersion << 4) | (static_cast<uint8_t>(type) & 0xF));
    flags = f;
    StoreBe16(length, len);
    StoreBe32(tensor, t);
    StoreBe32(seq, s);
    StoreBe32(offset, off);
  }
};
static_assert(sizeof(DlcpHeader) == kDlcpHeaderLen);

}  // namespace swemu
