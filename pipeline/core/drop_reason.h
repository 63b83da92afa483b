#pragma once
// Every packet swemu does not forward or consume is dropped with a named reason, counted per
// switch. The names appear in counters.json, `show stats` and the docs. The switch's own reasons
// (parser, tables, TM, links, lcores) are the list below; a program declares its own by name
// with RegisterDropReason at static initialisation (as atp.h's AtpDrop), which gives each one of
// the ids after the list.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace swemu {

#define SWEMU_DROP_REASONS(X)                        \
  X(kNone, "none")                                   \
  X(kTruncatedEthernet, "truncated_ethernet")        \
  X(kTruncatedVlan, "truncated_vlan")                \
  X(kTooManyVlanTags, "too_many_vlan_tags")          \
  X(kTruncatedIpv4, "truncated_ipv4")                \
  X(kIpv4BadVersion, "ipv4_bad_version")             \
  X(kIpv4BadIhl, "ipv4_bad_ihl")                     \
  X(kIpv4BadTotalLength, "ipv4_bad_total_length")    \
  X(kIpv4BadChecksum, "ipv4_bad_checksum")           \
  X(kTruncatedIpv6, "truncated_ipv6")                \
  X(kIpv6BadVersion, "ipv6_bad_version")             \
  X(kIpv6BadPayloadLen, "ipv6_bad_payload_len")      \
  X(kIpv6TooManyExts, "ipv6_too_many_exts")          \
  X(kTruncatedUdp, "truncated_udp")                  \
  X(kUdpBadLength, "udp_bad_length")                 \
  X(kTruncatedTcp, "truncated_tcp")                  \
  X(kTcpBadDataOffset, "tcp_bad_data_offset")        \
  X(kTruncatedAppHeader, "truncated_app_header")     \
  X(kParseDepthExceeded, "parse_depth_exceeded")     \
  X(kFrameTooLong, "frame_too_long")                 \
  X(kTtlExpired, "ttl_expired")                      \
  X(kHopLimitExpired, "hop_limit_expired")           \
  X(kTableMiss, "table_miss")                        \
  X(kNoEgressPort, "no_egress_port")                 \
  X(kCpuQueueFull, "cpu_queue_full")                 \
  X(kBadEgressPort, "bad_egress_port")               \
  X(kIngressPortDown, "ingress_port_down")           \
  X(kProgramDrop, "program_drop")                    \
  X(kRegisterDoubleAccess, "register_double_access") \
  X(kRecirculationLimit, "recirculation_limit")      \
  X(kMulticastEmptyGroup, "multicast_empty_group")   \
  X(kMulticastCloneFailed, "multicast_clone_failed") \
  X(kTmQueueFull, "tm_queue_full")                   \
  X(kTmDropThreshold, "tm_drop_threshold")           \
  X(kTmPortBufferFull, "tm_port_buffer_full")        \
  X(kTmSharedBufferFull, "tm_shared_buffer_full")    \
  X(kTmRedNotEct, "tm_red_not_ect")                  \
  X(kTmDynamicThreshold, "tm_dynamic_threshold")     \
  X(kTmPushout, "tm_pushout")                        \
  X(kLossInjected, "loss_injected")                  \
  X(kLinkDown, "link_down")                          \
  X(kPoolExhausted, "pool_exhausted")                \
  X(kMultiSegmentFrame, "multi_segment_frame")       \
  X(kTxQueueFull, "tx_queue_full")                   \
  X(kDelayLineFull, "delay_line_full")               \
  X(kShardRingFull, "shard_ring_full")               \
  X(kShardMulticast, "shard_multicast")

enum class DropReason : uint8_t {
#define SWEMU_DROP_ENUM(id, name) id,
  SWEMU_DROP_REASONS(SWEMU_DROP_ENUM)
#undef SWEMU_DROP_ENUM
      kFirstProgramReason  // the first id RegisterDropReason gives
};

// Every id, the switch's and the programs': the size of the arrays that count drops per reason.
inline constexpr std::size_t kDropReasonCount = 96;

// A program's own reason: the next free id, or the id `name` already has (one name, one id).
// Only at static initialisation, before any thread reads the names; aborts when every id is
// taken or when `name` is one of the switch's own.
DropReason RegisterDropReason(std::string_view name);

// The reason's name; empty for an id nobody registered.
std::string_view DropReasonName(DropReason reason);

}  // namespace swemu
