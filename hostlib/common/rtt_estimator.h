#pragma once
// RFC 6298's retransmission timer, shared by ATP's worker lanes, PLink's AggEngine flows and
// the model TCP (ecn_tcp.h):
//   first sample R:  SRTT = R, RTTVAR = R / 2                                        (2.2)
//   later samples:   RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R  (2.3)
//   RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto_ns, max_rto_ns]          (2.2-2.5)
//   before any sample: initial_rto_ns                                                (2.1)
//   on a timeout: RTO = min(2 RTO, max_rto_ns)                                         (5.5)
// Karn's rule is the caller's: it samples only segments sent once. The options reproduce
// what each caller did before this class, so their virtual-time results stay the same.
#include <cstdint>

#include "pipeline/core/clock.h"

namespace swemu {

struct RttEstimatorOptions {
  TimeNs initial_rto_ns = 1'000'000'000;  // RFC 6298 2.1: 1 s
  TimeNs min_rto_ns = 1'000'000'000;      // 2.4: 1 s (Linux: 200 ms)
  TimeNs max_rto_ns = 60'000'000'000;     // 2.5: at least 60 s
  TimeNs granularity_ns = 0;              // G: the clock's tick (virtual time: none)
  // SRTT and RTTVAR in whole nanoseconds, each update rounded down and SRTT at least 1 ns, as
  // ATP's worker always computed them; otherwise in double precision (model TCP, PLink).
  bool integer_ns = false;
  // The RTO from the estimate is capped at max_rto_ns too (2.5). The model TCP and PLink's
  // AggEngine cap only the backed-off RTO; they keep that (their results stay identical).
  bool cap_estimate = true;
  // A new sample recomputes the RTO, ending a back-off (5.7). ATP's lanes recompute it only
  // when their UNA advances (ResetBackoff), so a late sample does not cut a backed-off timer.
  bool sample_resets_backoff = true;
};

// The timer of the model TCP (Linux's) and of PLink's AggEngine: min_rto_ns floors the
// estimate, max_rto_ns caps only the back-off.
RttEstimatorOptions UncappedEstimateRtt(TimeNs initial_rto_ns, TimeNs min_rto_ns,
                                        TimeNs max_rto_ns);

class RttEstimator {
 public:
  RttEstimator() : RttEstimator(RttEstimatorOptions{}) {}  // RFC 6298's values
  explicit RttEstimator(const RttEstimatorOptions& options);

  // One RTT measurement of a packet sent once (Karn).
  void Sample(TimeNs rtt_ns);
  // After a retransmission timeout: the RTO doubles, up to max_rto_ns.
  void Backoff();
  // The RTO from the estimate again (initial_rto_ns before the first sample).
  void ResetBackoff() { rto_ns_ = BaseRto(); }
  // A different floor from now on (ATP raises its lanes' after spurious timeouts); the current
  // RTO changes at the next ResetBackoff or sample.
  void SetMinRto(TimeNs min_rto_ns) { options_.min_rto_ns = min_rto_ns; }

  bool has_sample() const { return has_sample_; }
  double srtt_ns() const { return srtt_; }  // 0 before the first sample
  double rttvar_ns() const { return rttvar_; }
  TimeNs rto_ns() const { return rto_ns_; }  // current, backed off
  // The RTO the estimate gives, clamped, without back-off.
  TimeNs BaseRto() const;
  const RttEstimatorOptions& options() const { return options_; }

 private:
  void UpdateInteger(TimeNs rtt_ns);
  void UpdateDouble(TimeNs rtt_ns);

  RttEstimatorOptions options_;
  bool has_sample_ = false;
  double srtt_ = 0;
  double rttvar_ = 0;
  TimeNs rto_ns_;
};

}  // namespace swemu
