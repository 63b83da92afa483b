#pragma once
// ProbeEmbed's probing (section 4.1.1): pairwise echo probes, in O(N) rounds of disjoint pairs
// (the circle method: N - 1 rounds for even N, N for odd, each node in at most one pair per
// round, so no two tests interfere). Each node runs a PlinkProber: it answers every echo request
// at once, and in a round probes its partner `samples` times, `gap_ns` apart, keeping the
// smallest round-trip time (the least queueing). A probe that gets no reply within `timeout_ns`
// is lost; a pair with no reply at all has no distance (see ProbeDistances for the fallback).
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "hostlib/common/endpoint.h"
#include "hostlib/common/udp_frame.h"
#include "hostlib/plink/locality.h"
#include "pipeline/engine/rng.h"
#include "pipeline/wire/plink.h"

namespace swemu {

// Rounds of disjoint pairs covering every pair once: pairs (a, b) with a < b.
std::vector<std::vector<std::pair<uint32_t, uint32_t>>> CircleRounds(uint32_t nodes);

struct PlinkNodeAddr {
  MacAddr mac;
  Ipv4Addr ip = 0;
};

struct ProberOptions {
  uint32_t samples = 5;
  TimeNs gap_ns = 20'000;
  TimeNs timeout_ns = 2'000'000;
  uint16_t udp_port = kPlinkDefaultUdpPort;
  // This host's delay before answering a request: a constant (its stack, what Eq. (1)'s h_i
  // models) plus exponential jitter of this mean (a busy VM); 0 and 0 answer at once.
  TimeNs host_delay_ns = 0;
  double jitter_mean_ns = 0;
  uint64_t seed = 1;
};

struct ProberStats {
  uint64_t requests_sent = 0;
  uint64_t replies_sent = 0;
  uint64_t replies_received = 0;
  uint64_t lost = 0;         // requests with no reply within the timeout
  uint64_t bad_packets = 0;  // PLink frames to our port that are not for us or malformed
};

class PlinkProber final : public Endpoint {
 public:
  PlinkProber(uint16_t node, std::vector<PlinkNodeAddr> nodes, Transport* transport,
              ProberOptions options = {});

  // Probes `peer` in round `round` from `now` on.
  void Probe(uint16_t peer, uint16_t round, TimeNs now);
  bool idle() const { return peer_ < 0; }
  // The host leaves: from now on it answers nothing and probes nobody.
  void Leave() {
    gone_ = true;
    peer_ = -1;
    pending_.clear();
  }
  // The least RTT to each peer so far (ns); infinity where none came back.
  const std::vector<double>& min_rtt_ns() const { return min_rtt_; }
  const ProberStats& stats() const { return stats_; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  void Send(uint16_t to, PlinkFields f) noexcept;

  uint16_t node_;
  std::vector<PlinkNodeAddr> nodes_;
  Transport* transport_;
  ProberOptions options_;
  std::vector<double> min_rtt_;
  std::vector<uint8_t> frame_;
  int32_t peer_ = -1;  // probing this node now, or -1
  bool gone_ = false;
  uint16_t round_ = 0;
  uint32_t sent_ = 0;  // requests of this round sent
  uint32_t answered_ = 0;
  TimeNs next_send_ = 0;
  TimeNs deadline_ = kNever;  // the round gives up here
  uint32_t seq_ = 0;
  std::multimap<TimeNs, PlinkFields> pending_;  // replies waiting for the host's delay
  SplitMix64 rng_;
  ProberStats stats_;
};

}  // namespace swemu
