#pragma once
// One host link carrying several senders' frames: each sender (a FrameSource) says when its
// next frame is due; the link sends the earliest due frame (ties: the first source) at
// max(its due time, the end of the previous frame), one frame at a time, at the link rate.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

namespace swemu {
class PcapWriter;
}

namespace swemu::gen {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual bool Done() const = 0;
  // The earliest time the next frame may go (only asked while !Done()).
  virtual TimeNs Due() const = 0;
  // Builds the next frame into *frame; it goes on the wire at `at`.
  virtual void Next(TimeNs at, std::vector<uint8_t>* frame) = 0;
};

struct LinkTotals {
  uint64_t frames = 0;
  TimeNs last_ns = 0;
};

// Runs the link until every source is done, writing each frame at its start time. `name`
// ("worker 3") and `advice` go into the error for a time past what pcap holds.
Result<LinkTotals> RunLink(std::span<FrameSource* const> sources, uint64_t rate_bps,
                           PcapWriter& writer, const std::string& name, const std::string& advice);

// Merges pcaps (each in time order) into `out` in time order; ties go to the earlier input.
Status MergePcaps(const std::vector<std::string>& inputs, const std::string& out,
                  const std::string& out_name);

}  // namespace swemu::gen
