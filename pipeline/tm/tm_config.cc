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

uint32_t TmConfig::QueueDepthPkts(PortId port) const {
  auto it = port_queue_depths.find(port);
  return it != port_queue_depths.end() ? it->second : queue.depth_pkts;
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
  for (const auto& [port, pkts] : port_queue_depths) {
    if (port >= num_ports) {
      return Status::Error("tm port_queue_depths: port " + std::to_string(port) +
                           " out of range (num_ports " + std::to_string(num_ports) + ")");
    }
    SWEMU_RETURN_IF_ERROR(ValidateQueueDepth(pkts));
  }
  SWEMU_RETURN_IF_ERROR(ValidateWeight(queue.weight));
  SWEMU_RETURN_IF_ERROR(ValidateQueueRate(queue.rate_pps));
  return Status::Ok();
}

}  // namespace swemu
