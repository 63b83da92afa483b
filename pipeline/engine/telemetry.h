#pragma once
// swemu's telemetry record (--telemetry): every period, each active queue's depth and its
// cumulative CE marks and drops, one CSV row per queue. Offline the engine samples it exactly at
// every multiple of the period in virtual time; in real time a thread samples each lcore's
// queues through its mailbox, off the fast path, stamped with the wall clock as --pcap-dir's
// recordings are. swemu-analyze reads it (tools/analyze/time_series.h) for queue depth over time.
#include <cstdint>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

namespace swemu {

class TrafficManager;

// The file's first line, naming the columns (units: ns, packets, bytes).
inline constexpr std::string_view kTelemetryHeader =
    "time_ns,switch,port,queue,depth_packets,depth_bytes,marked_total,dropped_total";
inline constexpr TimeNs kDefaultTelemetryPeriodNs = 100'000;  // 100 us

struct QueueSnapshot {
  uint16_t port = 0;
  uint8_t queue = 0;
  uint32_t depth_packets = 0;
  uint64_t depth_bytes = 0;
  uint64_t marked = 0;   // since the start (or the last counter_reset)
  uint64_t dropped = 0;
};

// Queues that hold packets or have counted anything; in port, queue order. Appends to `out`.
void SnapshotQueues(const TrafficManager& tm, std::vector<QueueSnapshot>& out);
// Adds `more` into `into` queue by queue (the lcores' replicas of one switch); both in port,
// queue order, and so is the result.
void MergeSnapshots(std::vector<QueueSnapshot>& into, std::span<const QueueSnapshot> more);

// The rows Write writes for one switch at `ts`, appended to `out`.
void AppendTelemetryRows(TimeNs ts, std::string_view sw, std::span<const QueueSnapshot> queues,
                         std::string& out);

class TelemetryWriter {
 public:
  static Result<std::unique_ptr<TelemetryWriter>> Open(const std::string& path);
  void Write(TimeNs ts, std::string_view sw, std::span<const QueueSnapshot> queues);
  // Rows made by AppendTelemetryRows (another process's samples).
  void WriteRows(std::string_view rows);
  Status Close();
  uint64_t rows() const { return rows_; }

 private:
  explicit TelemetryWriter(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::ofstream out_;
  uint64_t rows_ = 0;
};

}  // namespace swemu
