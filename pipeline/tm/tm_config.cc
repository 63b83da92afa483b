#include "pipeline/tm/tm_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
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

Status ValidateAlpha(double alpha) {
  if (alpha == 0 || (alpha >= kTmMinAlpha && alpha <= kTmMaxAlpha)) return Status::Ok();
  return Status::Error("alpha " + FormatAlpha(alpha) + " out of range: 0 (off) or 2^-10 .. 2^10");
}

namespace {

// A plain non-negative decimal, all of `text`.
std::optional<double> PlainNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
  if (text.empty() || ec != std::errc() || ptr != end || !(value >= 0)) return std::nullopt;
  return value;
}

}  // namespace

Result<double> ParseAlpha(std::string_view text) {
  auto bad = [&] {
    return Status::Error("alpha \"" + std::string(text) +
                         "\" is not a number such as 1/8, 2^-3, 0.125 or 0 (off)");
  };
  std::optional<double> alpha;
  if (text == "off") {
    alpha = 0;
  } else if (std::size_t caret = text.find('^'); caret != std::string_view::npos) {
    int exponent = 0;
    std::string_view e = text.substr(caret + 1);
    auto [ptr, ec] = std::from_chars(e.data(), e.data() + e.size(), exponent);
    if (text.substr(0, caret) != "2" || e.empty() || ec != std::errc() ||
        ptr != e.data() + e.size() || exponent < -64 || exponent > 64) {
      return bad();
    }
    alpha = std::ldexp(1.0, exponent);
  } else if (std::size_t slash = text.find('/'); slash != std::string_view::npos) {
    std::optional<double> num = PlainNumber(text.substr(0, slash));
    std::optional<double> den = PlainNumber(text.substr(slash + 1));
    if (!num || !den || *den == 0) return bad();
    alpha = *num / *den;
  } else {
    alpha = PlainNumber(text);
  }
  if (!alpha) return bad();
  SWEMU_RETURN_IF_ERROR(ValidateAlpha(*alpha));
  return *alpha;
}

std::string FormatAlpha(double alpha) {
  int exponent = 0;
  const double mantissa = std::frexp(alpha, &exponent);  // alpha = mantissa x 2^exponent
  if (alpha > 0 && alpha < 1 && mantissa == 0.5 && exponent > -1022) {
    return "1/" + std::to_string(uint64_t{1} << std::min(63, 1 - exponent));
  }
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), alpha);
  return std::string(buf, ec == std::errc() ? ptr : buf);
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
  merged.alpha = o.alpha.value_or(merged.alpha);
  merged.guaranteed_min_bytes = o.guaranteed_min_bytes.value_or(merged.guaranteed_min_bytes);
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
  if (pushout && scheduler != SchedulerKind::kStrict) {
    return Status::Error(
        "tm pushout needs the strict scheduler: weighted queues have no lowest priority to drop "
        "from");
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
  SWEMU_RETURN_IF_ERROR(ValidateAlpha(queue.alpha));
  for (const auto& [port, overrides] : port_queues) {
    if (overrides.alpha) SWEMU_RETURN_IF_ERROR(ValidateAlpha(*overrides.alpha));
  }
  return ValidateReserved();
}

uint64_t TmConfig::ReservedBytes() const {
  uint64_t reserved = 0;
  for (PortId p = 0; p < num_ports; ++p) {
    const uint64_t min = QueueFor(p).guaranteed_min_bytes;
    if (min > (UINT64_MAX - reserved) / kQueuesPerPort) return UINT64_MAX;
    reserved += min * kQueuesPerPort;
  }
  return reserved;
}

Status TmConfig::ValidateReserved() const {
  const uint64_t reserved = ReservedBytes();
  if (reserved <= shared_buffer_bytes) return Status::Ok();
  return Status::Error("tm guaranteed_min: the queues' minimums (" +
                       (reserved == UINT64_MAX ? std::string("over 2^64") : std::to_string(reserved)) +
                       " B) exceed shared_buffer_bytes " + std::to_string(shared_buffer_bytes));
}

}  // namespace swemu
