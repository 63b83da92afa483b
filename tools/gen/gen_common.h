#pragma once
// What every swemu-gen workload shares: option checks (tools/option_values.h), the serialization clock of one link,
// pcap time limits, and outputs written aside then renamed into place.
#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/status.h"
#include "pipeline/tm/tm_config.h"
#include "tools/option_values.h"

namespace swemu::gen {

namespace po = boost::program_options;

// Preamble + SFD + IFG + FCS, as the TM counts them.
inline constexpr uint32_t kWireOverheadBytes = kEthernetWireOverheadBytes;

using opt::Check;
using opt::CheckUint;
using opt::Given;
using opt::Text;

// Bits a frame of `len` bytes takes on the wire.
constexpr uint64_t WireBits(std::size_t len) { return (uint64_t{len} + kWireOverheadBytes) * 8; }

// Constant gaps at a rate, carrying the remainder so long runs do not drift.
class Pacer {
 public:
  explicit Pacer(uint64_t rate_bps) : rate_(rate_bps) {}
  // The gap after a frame of `len` bytes (frame + wire overhead at the rate), in ns.
  TimeNs Gap(std::size_t len) {
    const uint64_t total = remainder_ + WireBits(len) * 1'000'000'000ull;
    remainder_ = total % rate_;
    return total / rate_;
  }
  uint64_t remainder() const { return remainder_; }  // in 1/rate ns

 private:
  uint64_t rate_;
  uint64_t remainder_ = 0;  // in 1/rate ns
};

// One link serializing one frame at a time: a frame due at `due` starts at max(due, the end of
// the previous frame); times are exact in 1/rate ns (the Pacer's remainder) and reported
// rounded down.
class LinkClock {
 public:
  explicit LinkClock(uint64_t rate_bps) : rate_(rate_bps), pacer_(rate_bps) {}
  TimeNs Start(TimeNs due) {
    if (due > free_ns_ || (due == free_ns_ && pacer_.remainder() == 0)) {
      free_ns_ = due;
      pacer_ = Pacer(rate_);
    }
    return free_ns_;
  }
  // The frame started by the last Start() occupies the link for its wire bits.
  void Occupy(std::size_t len) { free_ns_ += pacer_.Gap(len); }

 private:
  uint64_t rate_;
  Pacer pacer_;
  TimeNs free_ns_ = 0;
};

// An error naming the frame when `ts` is past the last time a pcap file can hold.
Status CheckPcapTime(TimeNs ts, const std::string& frame, const std::string& advice);

}  // namespace swemu::gen
