#pragma once
// PCN's threshold policy (section 3.3): the initial ECN threshold from Eq. (1) and the PCN
// threshold a START announces from Eq. (2), as the paper's own numbers need them read
// (docs/papers.md, "PCN"):
//
//   Eq. (1): h_initial > RTT * C / (sqrt(N) * MTU)   packets; C in bytes/s, RTT in s, MTU in
//            bytes, N long-lived flows. h_initial is the smallest multiple of 5 strictly above
//            the bound (a bound of 35 gives 40: the inequality is strict).
//   Eq. (2): h_PCN = k * h_initial, 0 < k < 1, rounded to the nearest multiple of 5 (halves
//            up) that the START's 4-bit field carries, at least 5. As printed, Eq. (2) multiplies
//            the bound, which gives 37/4 = 9.25 where the paper says 10 and 18.5 where it says
//            20; k * h_initial gives 40/4 = 10 and 40/2 = 20 exactly.
#include <cstdint>

#include "pipeline/core/status.h"

namespace swemu {

struct PcnLink {
  double rtt_s = 0;            // round-trip time of the long flows, s
  double capacity_Bps = 0;     // the bottleneck's capacity, bytes/s
  uint32_t long_flows = 3;     // N; the paper takes 3 from the literature
  uint32_t mtu_bytes = 1500;   // the paper gives none: swemu's assumption
};

// RTT * C / (sqrt(N) * MTU), packets. Errors for a non-positive RTT, capacity, N or MTU.
Result<double> PcnBound(const PcnLink& link);
// The smallest multiple of 5 strictly greater than `bound` (packets).
uint32_t PcnInitialThreshold(double bound);
// k * h_initial rounded as above, within 5..75. Errors for k outside (0, 1) or an h_initial
// whose PCN threshold would not fit the field.
Result<uint32_t> PcnThreshold(uint32_t h_initial, double k);

}  // namespace swemu
