#pragma once
// Time is injected: the offline engine and tests use VirtualClock, swemu's real-time mode a TSC clock.
#include <cstdint>
#include <limits>

namespace swemu {

using TimeNs = uint64_t;
inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeNs NowNs() const noexcept = 0;
};

class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(TimeNs start = 0) : now_(start) {}
  TimeNs NowNs() const noexcept override { return now_; }
  void Set(TimeNs now) noexcept { now_ = now; }
  void Advance(TimeNs delta) noexcept { now_ += delta; }

 private:
  TimeNs now_;
};

}  // namespace swemu
