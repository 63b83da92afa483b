#pragma once
// A packet as the emulated ASIC sees it: a view onto a frame buffer owned by a PacketPool
// (a heap pool offline, an mbuf in real time), the parsed-header offsets (the PHV's validity
// bits and locations) and the intrinsic/standard metadata of a PISA switch.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pipeline/core/clock.h"
#include "pipeline/core/drop_reason.h"

namespace swemu {

using PortId = uint16_t;
inline constexpr PortId kPortUnset = 0xFFFF;
inline constexpr int kQueuesPerPort = 8;
inline constexpr uint16_t kHeaderAbsent = 0xFFFF;
inline constexpr int kMaxVlanTags = 2;
inline constexpr int kUserMetadataWords = 8;

// ParsedHeaders::dirty bits. A program that rewrites a header field without an incremental
// checksum update sets the bit; the deparser then recomputes that checksum in full.
inline constexpr uint8_t kDirtyIpv4 = 1 << 0;  // IPv4 header checksum
inline constexpr uint8_t kDirtyL4 = 1 << 1;    // UDP/TCP checksum (header or payload changed)

// Offsets (from Packet::data) of the headers the parser found; kHeaderAbsent when not present.
struct ParsedHeaders {
  uint16_t eth = kHeaderAbsent;
  uint16_t vlan[kMaxVlanTags] = {kHeaderAbsent, kHeaderAbsent};
  uint16_t ipv4 = kHeaderAbsent;
  uint16_t ipv6 = kHeaderAbsent;  // the fixed header; extension headers are skipped
  uint16_t udp = kHeaderAbsent;
  uint16_t tcp = kHeaderAbsent;
  uint16_t app = kHeaderAbsent;      // program header after UDP (ATP, GOAT, ...), see Parser
  uint16_t payload = kHeaderAbsent;  // first byte after the last parsed header (ICMPv6: its own)
  uint16_t app_id = 0;               // which registered app header was found (0 = none)
  uint16_t parsed_bytes = 0;         // bytes the parser extracted (bounded by the parse depth)
  uint8_t vlan_count = 0;
  uint8_t ip_proto = 0;  // IPv4 protocol, or IPv6's upper layer after its extension headers
  uint8_t dirty = 0;     // kDirty* bits: checksums the deparser must recompute

  bool has_eth() const { return eth != kHeaderAbsent; }
  bool has_ipv4() const { return ipv4 != kHeaderAbsent; }
  bool has_ipv6() const { return ipv6 != kHeaderAbsent; }
  bool has_udp() const { return udp != kHeaderAbsent; }
  bool has_tcp() const { return tcp != kHeaderAbsent; }
  bool has_app() const { return app != kHeaderAbsent; }
};

// Standard metadata, with BMv2's names where one exists.
struct Metadata {
  TimeNs ingress_ts = 0;       // ingress_global_timestamp
  TimeNs enq_ts = 0;           // enq_timestamp
  uint32_t deq_timedelta = 0;  // ns spent queued (bit<32> as in BMv2), saturating at ~4.3 s
  uint32_t enq_qdepth = 0;     // packets in the queue when this one was enqueued
  uint32_t enq_qdepth_bytes = 0;
  uint32_t deq_qdepth = 0;  // packets in the queue when this one was dequeued
  uint32_t deq_qdepth_bytes = 0;
  uint32_t shard_key = 0;  // decides the owning lcore in real time
  PortId ingress_port = kPortUnset;
  PortId egress_spec = kPortUnset;  // set by ingress; kPortUnset and no mcast_grp means drop
  PortId egress_port = kPortUnset;  // set by the TM on dequeue
  uint16_t mcast_grp = 0;           // 0 = unicast
  uint16_t egress_rid = 0;          // replication id of a multicast copy
  uint8_t queue_id = 0;             // 0..7, 7 is the highest strict priority
  uint8_t recirculate_count = 0;
  bool congested = false;  // TM: queue depth at enqueue was at or above the ECN threshold
  // The four fields the fast path tests on every packet, adjacent so that it tests them as one
  // word (Unusual): any of them set sends the packet down the slower, field-by-field path.
  bool recirculate = false;  // set by egress: send back to ingress once more
  bool consumed = false;     // set by a program that absorbed the packet (e.g. aggregated)
  bool ecn_marked = false;   // egress marked CE on this packet
  DropReason drop_reason = DropReason::kNone;
  uint64_t register_access_mask = 0;  // register arrays touched in this pass (one RMW each)
  // Program scratch (bridged metadata); last, so a program that declares fewer words
  // (Program::UserMetadataWords) has only those cleared per packet.
  uint32_t user[kUserMetadataWords] = {};

  void MarkDrop(DropReason reason) noexcept {
    if (drop_reason == DropReason::kNone) drop_reason = reason;
  }
  bool dropped() const noexcept { return drop_reason != DropReason::kNone; }
  // Non-zero when recirculate, consumed, ecn_marked or drop_reason is set (one 4-byte load).
  uint32_t Unusual() const noexcept;
};

static_assert(offsetof(Metadata, consumed) == offsetof(Metadata, recirculate) + 1 &&
                  offsetof(Metadata, ecn_marked) == offsetof(Metadata, recirculate) + 2 &&
                  offsetof(Metadata, drop_reason) == offsetof(Metadata, recirculate) + 3 &&
                  sizeof(DropReason) == 1,
              "Metadata::Unusual reads these four one-byte fields as one word");

inline uint32_t Metadata::Unusual() const noexcept {
  uint32_t word;
  std::memcpy(&word, reinterpret_cast<const uint8_t*>(this) + offsetof(Metadata, recirculate),
              sizeof(word));
  return word;
}

struct Packet {
  uint8_t* data = nullptr;  // first byte of the frame (Ethernet header)
  void* handle = nullptr;   // the owning buffer (pool slot or mbuf)
  // The pointers first and the three lengths after them: hdr then starts on a 4-byte boundary
  // (no padding before it), the room ParsedHeaders::ipv6 took.
  uint32_t len = 0;       // frame length in bytes (no FCS)
  uint32_t headroom = 0;  // bytes available before data
  uint32_t tailroom = 0;  // bytes available after data + len
  ParsedHeaders hdr;
  Metadata meta;

  // Grow or shrink the frame at the front; false when there is no room (the frame is unchanged).
  bool Prepend(uint32_t bytes) noexcept {
    if (bytes > headroom) return false;
    data -= bytes;
    headroom -= bytes;
    len += bytes;
    return true;
  }
  bool TrimFront(uint32_t bytes) noexcept {
    if (bytes > len) return false;
    data += bytes;
    headroom += bytes;
    len -= bytes;
    return true;
  }
  bool Append(uint32_t bytes) noexcept {
    if (bytes > tailroom) return false;
    len += bytes;
    tailroom -= bytes;
    return true;
  }
  bool TrimBack(uint32_t bytes) noexcept {
    if (bytes > len) return false;
    len -= bytes;
    tailroom += bytes;
    return true;
  }
  // Reset parse state and metadata for a new pass through the pipeline (not the frame); of the
  // user words only the first `user_words` (those the program uses) are cleared.
  void ResetState(uint32_t user_words = kUserMetadataWords) noexcept;
};

// The per-packet state is the fast path's largest write: everything but the user words fits in
// the first two cache lines of a Packet (an mbuf's private area starts on a line), so a program
// without user words writes two lines per packet, not three.
inline constexpr std::size_t kPacketStateBegin = offsetof(Packet, hdr);
inline constexpr std::size_t kPacketUserBegin = offsetof(Packet, meta) + offsetof(Metadata, user);
static_assert(kPacketUserBegin <= 128, "Packet state before the user words must fit two lines");

inline void Packet::ResetState(uint32_t user_words) noexcept {
  static constexpr Packet kFresh{};
  auto* self = reinterpret_cast<uint8_t*>(this);
  std::memcpy(self + kPacketStateBegin,
              reinterpret_cast<const uint8_t*>(&kFresh) + kPacketStateBegin,
              kPacketUserBegin - kPacketStateBegin);
  // Most programs use no user words: a memset of a variable length costs ~10 instructions per
  // packet even when it is empty, a predicted branch about one.
  if (user_words == 0) return;
  if (user_words > kUserMetadataWords) user_words = kUserMetadataWords;
  std::memset(meta.user, 0, user_words * sizeof(uint32_t));
}

}  // namespace swemu
