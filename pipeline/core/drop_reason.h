#pragma once
// Every packet swemu does not forward or consume is dropped with one of these named reasons,
// counted per switch. The names appear in counters.json, `show stats` and the docs.
#include <cstdint>
#include <string_view>

namespace swemu {

#define SWEMU_DROP_REASONS(X)                                                   \
  X(kNone, "none")                                                              \
  X(kTruncatedEthernet, "truncated_ethernet")                                   \
  X(kTruncatedVlan, "truncated_vlan")                                           \
  X(kTooManyVlanTags, "too_many_vlan_tags")                                     \
  X(kTruncatedIpv4, "truncated_ipv4")                                           \
  X(kIpv4BadVersion, "ipv4_bad_version")                                        \
  X(kIpv4BadIhl, "ipv4_bad_ihl")                                                \
  X(kIpv4BadTotalLength, "ipv4_bad_total_length")                               \
  X(kIpv4BadChecksum, "ipv4_bad_checksum")                                      \
  X(kTruncatedUdp, "truncated_udp")                                             \
  X(kUdpBadLength, "udp_bad_length")                                            \
  X(kTruncatedTcp, "truncated_tcp")                                             \
  X(kTcpBadDataOffset, "tcp_bad_data_offset")                                   \
  X(kTruncatedAppHeader, "truncated_app_header")                                \
  X(kParseDepthExceeded, "parse_depth_exceeded")                                \
  X(kFrameTooLong, "frame_too_long")                                            \
  X(kTtlExpired, "ttl_expired")                                                 \
  X(kTableMiss, "table_miss")                                                   \
  X(kNoEgressPort, "no_egress_port")                                            \
  X(kBadEgressPort, "bad_egress_port")                                          \
  X(kIngressPortDown, "ingress_port_down")                                      \
  X(kProgramDrop, "program_drop")                                               \
  X(kRegisterDoubleAccess, "register_double_access")                            \
  X(kRecirculationLimit, "recirculation_limit")                                 \
  X(kMulticastEmptyGroup, "multicast_empty_group")                              \
  X(kMulticastCloneFailed, "multicast_clone_failed")                            \
  X(kTmQueueFull, "tm_queue_full")                                              \
  X(kTmDropThreshold, "tm_drop_threshold")                                      \
  X(kTmPortBufferFull, "tm_port_buffer_full")                                   \
  X(kTmSharedBufferFull, "tm_shared_buffer_full")                               \
  X(kTmRedNotEct, "tm_red_not_ect")                                            \
  X(kLossInjected, "loss_injected")                                             \
  X(kLinkDown, "link_down")                                                     \
  X(kPoolExhausted, "pool_exhausted")                                          \
  X(kMultiSegmentFrame, "multi_segment_frame")                                  \
  X(kTxQueueFull, "tx_queue_full")                                              \
  X(kDelayLineFull, "delay_line_full")                                      \
  X(kShardRingFull, "shard_ring_full")                                        \
  X(kShardMulticast, "shard_multicast")                                         \
  X(kAtpBadVersion, "atp_bad_version")                                          \
  X(kAtpBadElements, "atp_bad_elements")                                        \
  X(kAtpUnknownJob, "atp_unknown_job")                                          \
  X(kAtpWorkerIdRange, "atp_worker_id_range")                                   \
  X(kAtpInconsistent, "atp_inconsistent")                                       \
  X(kAtpDuplicate, "atp_duplicate")                                             \
  X(kGoatBadVersion, "goat_bad_version")                                        \
  X(kGoatBadElements, "goat_bad_elements")                                      \
  X(kGoatInconsistent, "goat_inconsistent")                                     \
  X(kGoatDuplicate, "goat_duplicate")

enum class DropReason : uint8_t {
#define SWEMU_DROP_ENUM(id, name) id,
  SWEMU_DROP_REASONS(SWEMU_DROP_ENUM)
#undef SWEMU_DROP_ENUM
      kCount
};

inline constexpr std::size_t kDropReasonCount = static_cast<std::size_t>(DropReason::kCount);

constexpr std::string_view DropReasonName(DropReason reason) {
  constexpr std::string_view kNames[] = {
#define SWEMU_DROP_NAME(id, name) name,
      SWEMU_DROP_REASONS(SWEMU_DROP_NAME)
#undef SWEMU_DROP_NAME
  };
  auto index = static_cast<std::size_t>(reason);
  return index < kDropReasonCount ? kNames[index] : std::string_view("unknown");
}

}  // namespace swemu
