#include "hostlib/pcn/threshold.h"

#include <cmath>
#include <string>

#include "pipeline/wire/pcn.h"

namespace swemu {

Result<double> PcnBound(const PcnLink& link) {
  if (!(link.rtt_s > 0)) return Status::Error("RTT must be > 0");
  if (!(link.capacity_Bps > 0)) return Status::Error("capacity must be > 0");
  if (link.long_flows == 0) return Status::Error("the number of long flows must be >= 1");
  if (link.mtu_bytes == 0) return Status::Error("MTU must be > 0");
  return link.rtt_s * link.capacity_Bps /
         (std::sqrt(static_cast<double>(link.long_flows)) * link.mtu_bytes);
}

uint32_t PcnInitialThreshold(double bound) {
  if (!(bound >= 0)) return kPcnThresholdStep;
  const double steps = std::floor(bound / kPcnThresholdStep) + 1;  // strictly above
  return static_cast<uint32_t>(steps) * kPcnThresholdStep;
}

Result<uint32_t> PcnThreshold(uint32_t h_initial, double k) {
  if (!(k > 0 && k < 1)) return Status::Error("k must be in (0, 1)");
  const double exact = k * h_initial;
  auto h = static_cast<uint32_t>(std::floor(exact / kPcnThresholdStep + 0.5)) * kPcnThresholdStep;
  if (h < kPcnThresholdStep) h = kPcnThresholdStep;
  if (h > kPcnMaxThreshold) {
    return Status::Error("k * h_initial = " + std::to_string(exact) +
                         " packets is above the 75 a PCN-START can carry");
  }
  return h;
}

}  // namespace swemu
