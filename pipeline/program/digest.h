#pragma once
// Digests: small fixed-layout records a program's ingress sends to the control plane, as BMv2's
// digest (P4Runtime DigestList) and Tofino's learn filter do. The channel is the data plane's
// half: a learn filter (a small hash set of the records sent since the control plane last
// drained the channel, so a record repeated meanwhile is deduplicated), a token-bucket rate
// limit, a bounded queue, and counters. The control plane drains it (Switch::ServiceControlPlane
// in virtual time, after a fixed latency; swemu's digest pump in real time) and hands the
// records to the program's OnDigests. Draining is the acknowledgement: it clears the filter.
// One channel belongs to one replica's program and is touched only by the thread running it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"

namespace swemu {

inline constexpr uint32_t kDigestWords = 2;

struct DigestRecord {
  TimeNs time = 0;  // when the packet that sent it entered ingress
  std::array<uint64_t, kDigestWords> words = {};
  friend bool operator==(const DigestRecord&, const DigestRecord&) = default;
};

struct DigestConfig {
  uint32_t filter_slots = 256;      // learn filter size (a power of two)
  uint64_t max_per_second = 10000;  // rate limit; 0 = none
  uint32_t burst = 64;              // the token bucket's depth
  uint32_t queue = 1024;            // records waiting for the control plane
  TimeNs latency_ns = 10'000;       // virtual time: from the packet to the control plane
};

struct DigestCounters {
  uint64_t emitted = 0;           // queued for the control plane
  uint64_t deduplicated = 0;      // already in the learn filter
  uint64_t dropped_by_limit = 0;  // over the rate limit, or the filter or queue full
  uint64_t delivered = 0;         // drained by the control plane
};

class DigestChannel {
 public:
  explicit DigestChannel(DigestConfig config);

  // Fast path: queues `record` unless the filter holds it or a limit refuses it.
  void Emit(const DigestRecord& record) noexcept;

  // Control side. When the first waiting record is due (its time + latency); kNever if none.
  TimeNs NextDue() const noexcept;
  // The records due at `now`, oldest first; clears the learn filter when it takes any.
  std::vector<DigestRecord> Drain(TimeNs now);
  // Every waiting record, due or not (real time: the pump's own period is the latency).
  std::vector<DigestRecord> DrainAll() { return Drain(kNever); }

  const DigestCounters& counters() const { return counters_; }
  const DigestConfig& config() const { return config_; }
  std::size_t pending() const { return queue_.size() - head_; }
  // "digests: emitted N, deduplicated N, dropped by limit N, delivered N"
  std::string Summary() const;

 private:
  // The filter slot holding `hash`, or the empty slot where it would go.
  std::size_t FilterSlot(uint64_t hash) const noexcept;
  bool TakeToken(TimeNs now) noexcept;

  DigestConfig config_;
  std::vector<uint64_t> filter_;  // record hashes, 0 = empty slot
  uint32_t filter_used_ = 0;
  std::vector<DigestRecord> queue_;  // reserved to config_.queue; head_ .. end wait
  std::size_t head_ = 0;
  uint64_t tokens_milli_ = 0;  // tokens x 1000
  TimeNs last_refill_ = 0;
  bool refilled_ = false;
  DigestCounters counters_;
};

// Sums several replicas' counters (real time with [dpdk] workers).
DigestCounters operator+(const DigestCounters& a, const DigestCounters& b);

}  // namespace swemu
