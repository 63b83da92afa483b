#pragma once
// Pacing at a rate, as the model TCP (the NIC), GOAT's workers, PLink's AggEngine (the NIC) and
// DLCP's senders (the rate control) do it: after each frame the next may go one serialization
// time later, counted from the later of the last slot and now (an idle sender earns no
// credit). Each gap is rounded to whole nanoseconds on its own, down or up, and no remainder
// is carried: that is what those callers always did, and carrying it would move their
// virtual-time results (by up to 1 ns per frame). The TM's shapers use the drift-free
// pipeline/tm/pacer.h (an exact remainder) instead.
#include <cstdint>

#include "pipeline/core/clock.h"

namespace swemu {

class HostPacer {
 public:
  enum class Rounding : uint8_t { kDown, kUp };
  HostPacer() = default;  // gaps rounded down
  explicit HostPacer(Rounding rounding) : rounding_(rounding) {}

  // The serialization time of `bytes` at `rate_bps` (0: unpaced, no gap). Rounded down, this
  // is exactly floor(bytes * 8e9 / rate) for an integral rate below 9e15 bit/s and frames
  // below 1 MB (the double quotient cannot round up to the next integer).
  TimeNs Gap(uint64_t bytes, double rate_bps) const;
  // A frame of `bytes` went out now at `rate_bps`.
  void OnSend(TimeNs now, uint64_t bytes, double rate_bps);

  bool Ready(TimeNs now) const { return now >= next_ns_; }
  TimeNs next_ns() const { return next_ns_; }
  // The next frame may go at `at` (a round's start).
  void Restart(TimeNs at) { next_ns_ = at; }
  // Not before now: a sender that was idle (or stopped) starts again from now.
  void CatchUp(TimeNs now);

 private:
  Rounding rounding_ = Rounding::kDown;
  TimeNs next_ns_ = 0;
};

// A host's NIC that all its flows share, as a real host has one: one frame at a time at the
// link's rate, whichever flow it comes from. Each flow keeps its own pacer (its own rate) and
// sends when both are ready; the host offers a free NIC to its flows round robin (the flow
// after the one that sent last), so n busy flows get 1/n of the link each. Without it, every
// flow is paced alone at the link's rate and a host of n flows offers n times its link.
class SharedNic {
 public:
  explicit SharedNic(double rate_bps) : rate_bps_(rate_bps) {}
  bool Ready(TimeNs now) const { return pacer_.Ready(now); }
  TimeNs next_ns() const { return pacer_.next_ns(); }
  // A frame of `wire_bytes` (preamble and gap included) went out now.
  void OnSend(TimeNs now, uint64_t wire_bytes) { pacer_.OnSend(now, wire_bytes, rate_bps_); }

 private:
  double rate_bps_;
  HostPacer pacer_;
};

}  // namespace swemu
