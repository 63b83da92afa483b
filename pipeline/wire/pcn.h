#pragma once
// PCN (Kang et al., Sensors 2021): a worker announces its gradient burst with a PCN-START, and the
// PS answers with an ACK; both ride in the IPv4 TOS byte (the paper's Figure 7, section 3.1):
//
//   bit  7      START: lower the ECN threshold of the port toward the PS to the one carried here
//   bit  6      ACK:   the PS's answer (switches change no state on it)
//   bits 5..2   the PCN threshold divided by 5: 0..15, so 0..75 packets in steps of 5
//   bits 1..0   ECN, untouched (a switch may CE-mark a START like any ECT packet)
//
// Example: a START carrying threshold 10 from an ECT(0) sender is 0x80 | (2 << 2) | 0x02 = 0x8A.
// Decoding always masks the ECN bits off, so a CE-marked START (0x8B) reads the same at the next
// hop. The same bits are ordinary DSCP values too (EF, TOS 0xB8, reads as a START with threshold
// 70): a switch reads them as PCN only for traffic it is told to (docs/wire.md, "PCN").
#include <cstdint>

#include "pipeline/wire/ipv4.h"

namespace swemu {

inline constexpr uint8_t kPcnStart = 0x80;
inline constexpr uint8_t kPcnAck = 0x40;
inline constexpr uint8_t kPcnThresholdShift = 2;
inline constexpr uint8_t kPcnThresholdMask = 0x3C;  // bits 5..2
inline constexpr uint32_t kPcnThresholdStep = 5;    // packets per unit of the 4-bit field
inline constexpr uint32_t kPcnMaxThreshold = 75;    // 15 units
// The UDP port of swemu's START and ACK datagrams (hostlib/pcn): the paper names none. A switch
// reads a START only in a UDP datagram to this port addressed to a configured PS.
inline constexpr uint16_t kPcnDefaultUdpPort = 9700;

// A threshold the 4-bit field can carry: a multiple of 5 from 0 to 75 packets.
constexpr bool PcnThresholdEncodable(uint32_t packets) noexcept {
  return packets % kPcnThresholdStep == 0 && packets <= kPcnMaxThreshold;
}

struct PcnTos {
  bool start = false;
  bool ack = false;
  uint32_t threshold = 0;  // packets; PcnThresholdEncodable

  // The TOS byte, with `ecn` in its low two bits. threshold must be encodable (it is truncated
  // to the field otherwise: callers check PcnThresholdEncodable first).
  constexpr uint8_t Encode(uint8_t ecn) const noexcept {
    const auto units = static_cast<uint8_t>((threshold / kPcnThresholdStep) & 0xF);
    return static_cast<uint8_t>((start ? kPcnStart : 0) | (ack ? kPcnAck : 0) |
                                (units << kPcnThresholdShift) | (ecn & 0x3));
  }
  // Reads a TOS byte; its ECN bits are ignored.
  static constexpr PcnTos Decode(uint8_t tos) noexcept {
    return PcnTos{(tos & kPcnStart) != 0, (tos & kPcnAck) != 0,
                  ((tos & kPcnThresholdMask) >> kPcnThresholdShift) * kPcnThresholdStep};
  }
  friend constexpr bool operator==(const PcnTos&, const PcnTos&) = default;
};

}  // namespace swemu
