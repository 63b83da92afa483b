#pragma once
// PLink (Luo et al., MLSys '20): swemu's header for ProbeEmbed's echo probes and AggEngine's
// chunks, carried in UDP (dst port 9200). The paper's probes are a DPDK echo and iPerf, its
// chunks ride TCP with a 4-byte chunk id per flow; swemu's hosts speak datagrams, so both get a
// header the analyzer and the dissector can read. docs/wire.md ("PLink") has it byte by byte.
//
//   0     ver_type   bits 7-4 version (1), bits 3-0 type (PlinkType)
//   1     flags
//   2-3   sender     node id
//   4-5   receiver   node id
//   6-7   epoch      probe round, or the plan epoch of a chunk
//   8-11  seq        probe sequence number, or chunk id
//   12-15 offset     chunk: byte offset in the chunk; probe: 0
//   16-23 stamp      probe: the requester's send time (ns), echoed; chunk: the chunk's bytes
//
// A chunk's payload follows the header: float32 values, big-endian IEEE 754. A chunk ack
// (type 3) carries the acknowledged packet's header fields back (sender and receiver swapped) and
// no payload. In chunks and acks, flags bits 1-0 are the schedule step (PlinkStep).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "pipeline/wire/byte_order.h"

namespace swemu {

inline constexpr std::size_t kPlinkHeaderLen = 24;
inline constexpr uint16_t kPlinkDefaultUdpPort = 9200;
inline constexpr uint8_t kPlinkVersion = 1;

enum class PlinkType : uint8_t { kProbeRequest = 0, kProbeReply = 1, kChunk = 2, kChunkAck = 3 };
inline constexpr uint8_t kPlinkLastType = 3;

// The step of AggEngine's schedule a chunk belongs to (flags bits 1-0).
enum class PlinkStep : uint8_t {
  kToLocalMaster = 0,   // a member's own values to its group's local master
  kToGlobalMaster = 1,  // a local master's group sum to the chunk's global master
  kTotalToLocal = 2,    // the global master's total back to the other local masters
  kTotalToMember = 3,   // a local master's total to its group's members
};
inline constexpr uint8_t kPlinkStepMask = 0x03;

struct PlinkFields {
  PlinkType type = PlinkType::kProbeRequest;
  uint8_t flags = 0;
  uint16_t sender = 0;
  uint16_t receiver = 0;
  uint16_t epoch = 0;
  uint32_t seq = 0;
  uint32_t offset = 0;
  uint64_t stamp = 0;

  void Encode(uint8_t* out) const noexcept {
    out[0] = static_cast<uint8_t>((kPlinkVersion << 4) | (static_cast<uint8_t>(type) & 0x0F));
    out[1] = flags;
    StoreBe16(out + 2, sender);
    StoreBe16(out + 4, receiver);
    StoreBe16(out + 6, epoch);
    StoreBe32(out + 8, seq);
    StoreBe32(out + 12, offset);
    StoreBe32(out + 16, static_cast<uint32_t>(stamp >> 32));
    StoreBe32(out + 20, static_cast<uint32_t>(stamp));
  }
  // nullopt if short, of another version, or of an unknown type.
  static std::optional<PlinkFields> Decode(const uint8_t* in, std::size_t len) noexcept {
    if (len < kPlinkHeaderLen || (in[0] >> 4) != kPlinkVersion || (in[0] & 0x0F) > kPlinkLastType) {
      return std::nullopt;
    }
    PlinkFields f;
    f.type = static_cast<PlinkType>(in[0] & 0x0F);
    f.flags = in[1];
    f.sender = LoadBe16(in + 2);
    f.receiver = LoadBe16(in + 4);
    f.epoch = LoadBe16(in + 6);
    f.seq = LoadBe32(in + 8);
    f.offset = LoadBe32(in + 12);
    f.stamp = (uint64_t{LoadBe32(in + 16)} << 32) | LoadBe32(in + 20);
    return f;
  }
  friend bool operator==(const PlinkFields&, const PlinkFields&) = default;
};

}  // namespace swemu
