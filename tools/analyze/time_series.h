#pragma once
// Time series of a run: per-port throughput in fixed bins (from the pcaps), and queue depth,
// marks and drops per queue (from swemu's --telemetry record).
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"
#include "pipeline/engine/telemetry.h"

namespace swemu {

class ThroughputSeries {
 public:
  ThroughputSeries(TimeNs bin_ns, std::size_t bins)
      : bin_ns_(bin_ns), frames_(bins), bytes_(bins), ce_(bins) {}
  // `bin`: (the frame's time - the run's start) / bin_ns; the last bin takes anything later.
  void Add(uint64_t bin, uint32_t len, bool ce);
  // run,port,time_s,frames,bytes,throughput_Mbps,ce_frames; time from the run's start.
  void WriteCsv(std::ostream& out, std::string_view run, std::string_view port) const;
  double PeakMbps() const;

 private:
  TimeNs bin_ns_;
  std::vector<uint64_t> frames_, bytes_, ce_;
};

// One row of swemu's telemetry record (pipeline/engine/telemetry.h, kTelemetryHeader).
struct QueueSample {
  TimeNs ts_ns = 0;
  std::string sw;
  uint16_t port = 0;
  uint8_t queue = 0;
  uint64_t depth_packets = 0, depth_bytes = 0;
  uint64_t marked = 0, dropped = 0;  // cumulative since the record began
};

// Parses a telemetry file; errors name the path and line.
Result<std::vector<QueueSample>> ReadTelemetry(const std::string& path);

// run,switch,port,queue,time_s,depth_packets,depth_bytes,marked,dropped (marks and drops since
// the queue's previous sample).
void WriteQueueCsv(std::ostream& out, std::string_view run, TimeNs t0,
                   const std::vector<QueueSample>& samples);

}  // namespace swemu
