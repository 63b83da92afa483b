#pragma once
// Typed configuration of the traffic manager, checked once by Validate() before construction.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"

namespace swemu {

enum class SchedulerKind : uint8_t {
  kStrict,    // queue 7 first, then 6, ...
  kWeighted,  // deficit round robin by bytes, quantum = weight * quantum_bytes
};

// Limits that keep the fixed-point shaping arithmetic in 64 bits and the rings reasonable.
inline constexpr uint16_t kTmMaxPorts = 1024;
inline constexpr uint32_t kTmMaxQueueDepthPkts = 1u << 20;
inline constexpr uint64_t kTmMaxPortRateBps = 10'000'000'000'000ull;  // 10 Tb/s
inline constexpr uint64_t kTmMaxQueueRatePps = 1'000'000'000'000ull;
inline constexpr uint32_t kTmMaxWireOverheadBytes = 1024;
inline constexpr uint32_t kTmMaxQuantumBytes = 1u << 24;
inline constexpr uint32_t kTmMaxWeight = 1u << 16;
// Dynamic-threshold alpha: 0 = off, else within [2^-10, 2^10] (ASICs offer 2^-7 .. 2^3).
inline constexpr double kTmMinAlpha = 1.0 / 1024;
inline constexpr double kTmMaxAlpha = 1024;

// The link rate a port is shaped to when nothing names one: a switch file without tm.port_rate, a
// topology link without rate=, and the experiments' and tools' --link-rate defaults.
inline constexpr uint64_t kDefaultPortRateBps = 10'000'000'000;  // 10 Gb/s

struct QueueConfig {
  uint32_t depth_pkts = 1024;         // queue limit in packets (BMv2 set_queue_depth); >= 1
  uint64_t ecn_threshold_bytes = 0;   // mark when depth (bytes, before this packet) >= it; 0 = off
  uint64_t drop_threshold_bytes = 0;  // drop when depth + this packet > it; 0 = off
  uint32_t weight = 1;                // DRR weight (quantum = weight * quantum_bytes)
  uint64_t rate_pps = 0;              // per-queue rate in packets/s (BMv2 set_queue_rate); 0 = off
  // Dynamic thresholds (Choudhury and Hahne): the queue's bytes beyond its guaranteed minimum may
  // reach alpha x the free shared pool; 0 = off, the static shared buffer alone.
  double alpha = 0;
  uint64_t guaranteed_min_bytes = 0;  // reserved for this queue out of shared_buffer_bytes
};

// One port's shaping rate where it differs from TmConfig::port_rate_bps ([port.N] rate).
struct PortRate {
  PortId port = 0;
  uint64_t bps = 0;  // 0 = unshaped
  friend bool operator==(const PortRate&, const PortRate&) = default;
};

// One port's queue settings where they differ from TmConfig::queue ([port.N] queue_depth,
// ecn_threshold, drop_threshold): every queue of the port starts with them; an empty one is
// queue's.
struct PortQueueOverrides {
  std::optional<uint32_t> depth_pkts = std::nullopt;
  std::optional<uint64_t> ecn_threshold_bytes = std::nullopt;
  std::optional<uint64_t> drop_threshold_bytes = std::nullopt;
  std::optional<double> alpha = std::nullopt;
  std::optional<uint64_t> guaranteed_min_bytes = std::nullopt;
  friend bool operator==(const PortQueueOverrides&, const PortQueueOverrides&) = default;
};

// Bytes a frame takes on the wire beyond its own: preamble+SFD (8) + IFG (12) + FCS (4).
inline constexpr uint32_t kEthernetWireOverheadBytes = 24;

struct TmConfig {
  uint16_t num_ports = 4;
  uint64_t shared_buffer_bytes = 16 << 20;  // whole switch
  uint64_t port_buffer_bytes = 0;           // per egress port limit; 0 = none
  uint64_t port_rate_bps = 0;               // default shaping rate per port; 0 = unshaped
  uint32_t wire_overhead_bytes = kEthernetWireOverheadBytes;  // per frame
  uint32_t quantum_bytes = 1536;
  SchedulerKind scheduler = SchedulerKind::kStrict;
  // pFabric's priority drop: a unicast packet refused for the port buffer or the static shared
  // buffer is admitted when dropping the tails of its port's lower-priority queues (queue 0's
  // first) makes room; they count as tm_pushout. Only with the strict scheduler (Validate); a
  // port set to weighted later, a queue with alpha or a minimum refused for the shared buffer,
  // and multicast copies drop the arrival as without it.
  bool pushout = false;
  QueueConfig queue;  // default for every queue
  // Per-port rates over port_rate_bps, applied when the TM is created (a later entry for the
  // same port wins). The one way a switch file's or a caller's per-port rate reaches the TM
  // before the switch runs; set_port_rate changes it afterwards.
  std::vector<PortRate> port_rates;
  // Per-port queue settings over queue, for every queue of the port, applied when the TM is
  // created: the one way a switch file's or a caller's per-port queue depth and thresholds reach
  // the TM before the switch runs; set_queue_depth, set_ecn_threshold and set_drop_threshold
  // change them afterwards.
  std::map<PortId, PortQueueOverrides> port_queues;

  // The rate port `port` starts with: its port_rates entry, else port_rate_bps.
  uint64_t PortRateBps(PortId port) const;
  // The settings port `port`'s queues start with: queue, with its port_queues entry's fields
  // where they are set.
  QueueConfig QueueFor(PortId port) const;
  // Bytes reserved out of shared_buffer_bytes: every queue's guaranteed minimum (saturating).
  uint64_t ReservedBytes() const;
  // One-line error naming the field and its allowed range.
  Status Validate() const;
  Status ValidateReserved() const;
};

// Per-field checks shared by Validate() and the control path.
Status ValidateQueueDepth(uint32_t pkts);
Status ValidatePortRate(uint64_t bps);
Status ValidateQueueRate(uint64_t pps);
Status ValidateWeight(uint32_t weight);
Status ValidateAlpha(double alpha);

// alpha x free_pool bytes, rounded down (saturating): the most a queue may hold beyond its
// guaranteed minimum under dynamic thresholds.
inline uint64_t DynamicThresholdBytes(double alpha, uint64_t free_pool) noexcept {
  const double bytes = alpha * static_cast<double>(free_pool);
  return bytes >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

// Alpha as people and ASIC manuals write it: a power of two "2^-3", a fraction "1/8", a decimal
// "0.125", or "0"/"off" for off. Checked with ValidateAlpha.
Result<double> ParseAlpha(std::string_view text);
// The spelling ParseAlpha reads back exactly: "1/8" for a power of two below 1, "4" for a whole
// number, else the shortest decimal that round-trips ("0.3").
std::string FormatAlpha(double alpha);

}  // namespace swemu
