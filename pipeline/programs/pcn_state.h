#pragma once
// The cells of the pcn program's two register arrays and the rules that update them, as plain
// functions over one cell (one stateful ALU's work), so they are tested apart from the pipeline.
//
// pcn_port (index = egress port, one lane per job): what the port's jobs announced.
//   bits  0..15  count: workers of the job whose START passed and whose burst has not arrived
//   bits 16..23  threshold: the lowest one those STARTs carried (packets)
//   bits 24..46  deadline: when the lane times out, in ms modulo 2^23 (MsClock)
// pcn_pending (index = hash of egress port, worker, job): one worker's announced burst.
//   bits  0..31  the worker's IPv4 address    bits 32..39  the job
//   bits 40..62  deadline (ms modulo 2^23)     bit  63      valid
#include <cstdint>

namespace swemu::pcn {

// Milliseconds modulo 2^23 (~2.3 h): a deadline is reached when now - deadline, modulo 2^23, is
// below half the range, so timeouts up to kMaxTimeoutMs compare right across the wrap.
inline constexpr uint32_t kMsBits = 23;
inline constexpr uint32_t kMsMask = (1u << kMsBits) - 1;
inline constexpr uint32_t kMaxTimeoutMs = 3'600'000;  // 1 h < 2^22 ms
constexpr uint32_t MsOf(uint64_t now_ns) noexcept {
  return static_cast<uint32_t>(now_ns / 1'000'000) & kMsMask;
}
constexpr bool Reached(uint32_t now_ms, uint32_t deadline_ms) noexcept {
  return ((now_ms - deadline_ms) & kMsMask) < (1u << (kMsBits - 1));
}

struct Lane {
  uint32_t count = 0;      // 16 bits
  uint32_t threshold = 0;  // 8 bits
  uint32_t deadline = 0;   // kMsBits

  static constexpr Lane Unpack(uint64_t cell) noexcept {
    return Lane{static_cast<uint32_t>(cell & 0xFFFF), static_cast<uint32_t>((cell >> 16) & 0xFF),
                static_cast<uint32_t>((cell >> 24) & kMsMask)};
  }
  constexpr uint64_t Pack() const noexcept {
    return uint64_t{count & 0xFFFF} | (uint64_t{threshold & 0xFF} << 16) |
           (uint64_t{deadline & kMsMask} << 24);
  }
  friend constexpr bool operator==(const Lane&, const Lane&) = default;
};
inline constexpr uint32_t kMaxLaneCount = 0xFFFF;

struct Pending {
  bool valid = false;
  uint32_t worker = 0;  // IPv4 address
  uint32_t job = 0;     // 8 bits
  uint32_t deadline = 0;

  static constexpr Pending Unpack(uint64_t cell) noexcept {
    return Pending{(cell >> 63) != 0, static_cast<uint32_t>(cell),
                   static_cast<uint32_t>((cell >> 32) & 0xFF),
                   static_cast<uint32_t>((cell >> 40) & kMsMask)};
  }
  constexpr uint64_t Pack() const noexcept {
    if (!valid) return 0;
    return (uint64_t{1} << 63) | (uint64_t{deadline & kMsMask} << 40) |
           (uint64_t{job & 0xFF} << 32) | worker;
  }
  constexpr bool Holds(uint32_t w, uint32_t j) const noexcept {
    return valid && worker == w && job == j;
  }
};

// What the pending stage tells the port stage to do with the job's lane.
enum class LaneOp : uint8_t {
  kNone,
  kAnnounce,  // a new announced burst: count + 1, threshold = min, deadline refreshed
  kRefresh,   // the same worker's START again (its ACK was lost): threshold = min, deadline
  kArrive,    // the announced burst arrived: count - 1
};

// What happened in the pending stage, for the counters.
enum class PendingEvent : uint8_t { kNone, kNew, kRepeat, kEvicted, kArrived, kExpired };

// A START of `worker` for `job` at now_ms: the cell after it, the op and the event. A live cell
// of another worker (a hash collision) is evicted: that worker's burst can no longer be matched
// and its announcement ends with the lane's timeout.
struct PendingResult {
  Pending cell;
  LaneOp op = LaneOp::kNone;
  PendingEvent event = PendingEvent::kNone;
};
constexpr PendingResult OnStart(Pending cell, uint32_t worker, uint32_t job, uint32_t now_ms,
                                uint32_t timeout_ms) noexcept {
  const bool live = cell.valid && !Reached(now_ms, cell.deadline);
  const Pending next{true, worker, job, (now_ms + timeout_ms) & kMsMask};
  if (live && cell.Holds(worker, job)) return {next, LaneOp::kRefresh, PendingEvent::kRepeat};
  return {next, LaneOp::kAnnounce, live ? PendingEvent::kEvicted : PendingEvent::kNew};
}
// A data packet of `worker` toward `job`'s PS: the first one after a live START is the burst's
// arrival and clears the cell; an expired START is cleared without effect on the lane.
constexpr PendingResult OnData(Pending cell, uint32_t worker, uint32_t job,
                               uint32_t now_ms) noexcept {
  if (!cell.Holds(worker, job)) return {cell, LaneOp::kNone, PendingEvent::kNone};
  if (Reached(now_ms, cell.deadline)) return {Pending{}, LaneOp::kNone, PendingEvent::kExpired};
  return {Pending{}, LaneOp::kArrive, PendingEvent::kArrived};
}

// The lane at now_ms after `op` carrying `threshold`; *timed_out when a live lane's deadline had
// passed (its count is dropped first: the initial threshold returns).
constexpr Lane ApplyLane(Lane lane, LaneOp op, uint32_t threshold, uint32_t now_ms,
                         uint32_t timeout_ms, bool* timed_out) noexcept {
  *timed_out = false;
  if (lane.count != 0 && Reached(now_ms, lane.deadline)) {
    lane = Lane{};
    *timed_out = true;
  }
  const uint32_t deadline = (now_ms + timeout_ms) & kMsMask;
  switch (op) {
    case LaneOp::kAnnounce:
      lane.threshold = lane.count == 0 ? threshold : (threshold < lane.threshold ? threshold
                                                                                 : lane.threshold);
      if (lane.count < kMaxLaneCount) ++lane.count;
      lane.deadline = deadline;
      break;
    case LaneOp::kRefresh:
      // The worker's first START may have timed out at this lane already: it counts again.
      if (lane.count == 0) {
        lane.threshold = threshold;
        lane.count = 1;
      } else if (threshold < lane.threshold) {
        lane.threshold = threshold;
      }
      lane.deadline = deadline;
      break;
    case LaneOp::kArrive:
      if (lane.count != 0) --lane.count;
      break;
    case LaneOp::kNone:
      break;
  }
  if (lane.count == 0) lane = Lane{};
  return lane;
}

// The threshold a port marks against: the lowest of its live lanes, else its initial one.
// `lanes` are the port's lanes after ApplyLane (a lane with count 0 is idle).
template <typename Cells>
constexpr uint32_t ActiveThreshold(const Cells& lanes, uint32_t initial, uint32_t now_ms) noexcept {
  uint32_t active = initial;
  for (uint64_t cell : lanes) {
    const Lane lane = Lane::Unpack(cell);
    if (lane.count != 0 && !Reached(now_ms, lane.deadline) && lane.threshold < active) {
      active = lane.threshold;
    }
  }
  return active;
}

}  // namespace swemu::pcn
