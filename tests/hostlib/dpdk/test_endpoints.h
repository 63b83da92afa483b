#pragma once
// Small endpoints for the DPDK host tests: a pinger that sends a list of frames paced by its
// timer and keeps what comes back, and an echo that returns every frame with its MACs swapped.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "hostlib/common/endpoint.h"

namespace swemu::testing {

using Frames = std::vector<std::vector<uint8_t>>;

// Sorts frames by length, then bytes. (std::sort with the vectors' own operator< trips GCC 12's
// -Wstringop-overread at -O3, a false positive.)
inline void SortFrames(Frames& frames) {
  std::sort(frames.begin(), frames.end(), [](const auto& a, const auto& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return std::memcmp(a.data(), b.data(), a.size()) < 0;
  });
}

inline std::vector<uint8_t> SwapMacs(std::span<const uint8_t> frame) {
  std::vector<uint8_t> swapped(frame.begin(), frame.end());
  std::swap_ranges(swapped.begin(), swapped.begin() + 6, swapped.begin() + 6);
  return swapped;
}

// Sends `per_tick` frames every `interval_ns` until the list is done. With a window, a tick sends
// only while fewer than `window` of the frames that come back are out: an open loop overruns a
// ring whenever the peer is descheduled for a few milliseconds (as on a loaded 2-core CI host),
// and a test of forwarding must not depend on that.
class Pinger final : public Endpoint {
 public:
  Pinger(Transport& port, Frames to_send, uint32_t per_tick, TimeNs interval_ns)
      : port_(port), to_send_(std::move(to_send)), per_tick_(per_tick), interval_(interval_ns) {}

  // At most `window` frames for which comes_back(frame) holds are in flight (sent, and not yet
  // matched by a received frame).
  void LimitInFlight(uint32_t window, std::function<bool(std::span<const uint8_t>)> comes_back) {
    window_ = window;
    comes_back_ = std::move(comes_back);
  }

  void OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept override {
    received_.emplace_back(frame.begin(), frame.end());
    if (in_flight_ != 0) --in_flight_;
  }
  void OnTimer(TimeNs now) noexcept override {
    fired_at_.push_back(now);
    for (uint32_t i = 0; i < per_tick_ && next_ < to_send_.size() && in_flight_ < window_;
         ++i, ++next_) {
      if (port_.Send(to_send_[next_])) ++sent_;
      if (comes_back_ && comes_back_(to_send_[next_])) ++in_flight_;
    }
    next_timer_ = next_ < to_send_.size() ? now + interval_ : kNever;
  }
  TimeNs NextTimer() const noexcept override { return next_timer_; }
  void Pump(TimeNs) noexcept override {}

  // Starts sending at `at` (the runner's clock).
  void StartAt(TimeNs at) { next_timer_ = at; }
  uint64_t sent() const { return sent_; }
  const Frames& received() const { return received_; }
  const std::vector<TimeNs>& fired_at() const { return fired_at_; }

 private:
  Transport& port_;
  Frames to_send_;
  uint32_t per_tick_;
  TimeNs interval_;
  std::size_t next_ = 0;
  uint64_t sent_ = 0;
  TimeNs next_timer_ = kNever;
  uint32_t window_ = UINT32_MAX;
  std::function<bool(std::span<const uint8_t>)> comes_back_;
  uint32_t in_flight_ = 0;
  Frames received_;
  std::vector<TimeNs> fired_at_;
};

// Echoes in Pump what OnFrame received, as a protocol endpoint answers after its state update.
class Echo final : public Endpoint {
 public:
  explicit Echo(Transport& port) : port_(port) {}

  void OnFrame(TimeNs, std::span<const uint8_t> frame) noexcept override {
    pending_.push_back(SwapMacs(frame));
    ++received_;
  }
  void OnTimer(TimeNs) noexcept override {}
  TimeNs NextTimer() const noexcept override { return kNever; }
  void Pump(TimeNs) noexcept override {
    for (const auto& frame : pending_) echoed_ += port_.Send(frame) ? 1 : 0;
    pending_.clear();
  }

  uint64_t received() const { return received_; }
  uint64_t echoed() const { return echoed_; }

 private:
  Transport& port_;
  Frames pending_;
  uint64_t received_ = 0;
  uint64_t echoed_ = 0;
};

}  // namespace swemu::testing
