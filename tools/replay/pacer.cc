#include "tools/replay/pacer.h"

#include <algorithm>

namespace swemu::replay {

TimeNs Pacer::Next(TimeNs ts_ns, uint32_t bytes) {
  TimeNs due = 0;
  switch (spec_.pace) {
    case Pace::kTopSpeed:
      break;
    case Pace::kPps:
      due = static_cast<TimeNs>(static_cast<unsigned __int128>(frames_) * 1'000'000'000'000'000ull /
                                spec_.micro_pps);
      break;
    case Pace::kMbps:
      due = static_cast<TimeNs>(static_cast<unsigned __int128>(bits_) * 1'000'000'000ull /
                                spec_.bits_per_sec);
      break;
    case Pace::kCaptured: {
      if (!have_first_) {
        have_first_ = true;
        first_ts_ = ts_ns;
      }
      if (pass_frames_++ == 0) pass_first_ts_ = pass_max_ts_ = ts_ns;
      pass_max_ts_ = std::max(pass_max_ts_, ts_ns);
      const auto on_capture_line = static_cast<long double>(pass_offset_) +
                                   static_cast<long double>(ts_ns) -
                                   static_cast<long double>(first_ts_);
      if (on_capture_line > 0) {
        due = static_cast<TimeNs>(on_capture_line / static_cast<long double>(spec_.multiplier));
      }
      break;
    }
  }
  due = std::max(due, last_due_);
  last_due_ = due;
  ++frames_;
  bits_ += uint64_t{bytes} * 8;
  return due;
}

void Pacer::EndPass() {
  if (spec_.pace != Pace::kCaptured || pass_frames_ == 0) return;
  const TimeNs span = pass_max_ts_ - pass_first_ts_;
  const TimeNs mean_gap = pass_frames_ > 1 ? span / (pass_frames_ - 1) : 0;
  // The next pass's first frame (timestamp first_ts_) lands one mean gap after this pass's last.
  pass_offset_ += pass_max_ts_ - first_ts_ + mean_gap;
  pass_frames_ = 0;
}

}  // namespace swemu::replay
