#include "pipeline/tm/tm_config.h"

#include <string>

namespace swemu {
namespace {

Status OutOfRange(const char* field, uint64_t value, uint64_t lo, uint64_t hi) {
  return Status::Error(std::string(field) + " " + std::to_string(value) + " out of range [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace

Status ValidateQueueDepth(uint32_t pkts) {
  if (pkts < 1 || pkts > kTmMaxQueueDepthPkts) {
    return OutOfRange("queue depth_pkts", pkts, 1, kTmMaxQueueDepthPkts);
  }
  return Status::Ok();
}

Status ValidatePortRate(uint64_t bps) {
  if (bps > kTmMaxPortRateBps) return OutOfRange("port_rate_bps", bps, 0, kTmMaxPortRateBps);
  return Status::Ok();
}

Status ValidateQueueRate(uint64_t pps) {
  if (pps > kTmMaxQueueRatePps) return OutOfRange("queue rate_pps", pps, 0, kTmMaxQueueRatePps);
  return Status::Ok();
}

Status ValidateWeight(uint32_t weight) {
  if (weight < 1 || weight > kTmMaxWeight) {
    return OutOfRange("queue weight", weight, 1, kTmMaxWeight);
  }
  return Status::Ok();
}

uint64_t TmConfig::PortRateBps(PortId port) const {
  uint64_t bps = port_rate_bps;
  for (const PortRate& rate : port_rates) {
    if (rate.port == port) bps = rate.bps;
  }
  return bps;
}

QueueConfig TmConfig::QueueFor(PortId port) const {
  QueueConfig merged = queue;
  auto it = port_queues.find(port);
  if (it == port_queues.end()) return merged;
  const PortQueueOverrides& o = it->second;
  merged.depth_pkts = o.depth_pkts.value_or(merged.depth_pkts);
  merged.ecn_threshold_bytes = o.ecn_threshold_bytes.value_or(merged.ecn_threshold_bytes);
  merged.drop_threshold_bytes = o.drop_threshold_bytes.value_or(merged.drop_threshold_bytes);
  return merged;
}

Status TmConfig::Validate() const {
  if (num_ports < 1 || num_ports > kTmMaxPorts) {
    return OutOfRange("tm num_ports", num_ports, 1, kTmMaxPorts);
  }
  if (shared_buffer_bytes == 0) return Status::Error("tm shared_buffer_bytes must be > 0");
  if (wire_overhead_bytes > kTmMaxWireOverheadBytes) {
    return OutOfRange("tm wire_overhead_bytes", wire_overhead_bytes, 0, kTmMaxWireOverheadBytes);
  }
  if (quantum_bytes < 1 || quantum_bytes > kTmMaxQuantumBytes) {
    return OutOfRange("tm quantum_bytes", quantum_bytes, 1, kTmMaxQuantumBytes);
  }
  if (scheduler != SchedulerKind::kStrict && scheduler != SchedulerKind::kWeighted) {
    return Status::Error("tm scheduler " + std::to_string(static_cast<int>(scheduler)) +
                         " is not strict or weighted");
  }
  SWEMU_RETURN_IF_ERROR(ValidatePortRate(port_rate_bps));
  for (const PortRate& rate : port_rates) {
    if (rate.port >= num_ports) {
      return Status::Error("tm port_rates: port " + std::to_string(rate.port) +
                           " out of range (num_ports " + std::to_string(num_ports) + ")");
    }
    SWEMU_RETURN_IF_ERROR(ValidatePortRate(rate.bps));
  }
  SWEMU_RETURN_IF_ERROR(ValidateQueueDepth(queue.depth_pkts));
  for (const auto& [port, overrides] : port_queues) {
    if (port >= num_ports) {
      return Status::Error("tm port_queues: port " + std::to_string(port) +
                           " out of range (num_ports " + std::to_string(num_ports) + ")");
    }
    if (overrides.depth_pkts) SWEMU_RETURN_IF_ERROR(ValidateQueueDepth(*overrides.depth_pkts));
  }
  SWEMU_RETURN_IF_ERROR(ValidateWeight(queue.weight));
  SWEMU_RETURN_IF_ERROR(ValidateQueueRate(queue.rate_pps));
  return Status::Ok();
}

}  // namespace swemu
