#include "pipeline/engine/telemetry.h"

#include <algorithm>
#include <cstdio>

#include "pipeline/tm/traffic_manager.h"

namespace swemu {

void SnapshotQueues(const TrafficManager& tm, std::vector<QueueSnapshot>& out) {
  for (PortId port = 0; port < tm.num_ports(); ++port) {
    for (int q = 0; q < kQueuesPerPort; ++q) {
      const QueueCounters& c = tm.queue_counters(port, q);
      const uint32_t depth = tm.DepthPkts(port, q);
      if (depth == 0 && c.enqueued == 0 && c.dropped == 0) continue;
      out.push_back({port, static_cast<uint8_t>(q), depth, tm.DepthBytes(port, q), c.marked,
                     c.dropped});
    }
  }
}

void MergeSnapshots(std::vector<QueueSnapshot>& into, std::span<const QueueSnapshot> more) {
  std::vector<QueueSnapshot> merged;
  merged.reserve(into.size() + more.size());
  std::size_t i = 0, j = 0;
  auto key = [](const QueueSnapshot& s) { return (uint32_t{s.port} << 8) | s.queue; };
  while (i < into.size() || j < more.size()) {
    if (j == more.size() || (i < into.size() && key(into[i]) < key(more[j]))) {
      merged.push_back(into[i++]);
    } else if (i == into.size() || key(more[j]) < key(into[i])) {
      merged.push_back(more[j++]);
    } else {
      QueueSnapshot s = into[i++];
      const QueueSnapshot& m = more[j++];
      s.depth_packets += m.depth_packets;
      s.depth_bytes += m.depth_bytes;
      s.marked += m.marked;
      s.dropped += m.dropped;
      merged.push_back(s);
    }
  }
  into = std::move(merged);
}

Result<std::unique_ptr<TelemetryWriter>> TelemetryWriter::Open(const std::string& path) {
  std::unique_ptr<TelemetryWriter> writer(new TelemetryWriter(path));
  writer->out_.open(path, std::ios::trunc);
  if (!writer->out_) return Status::Error("--telemetry " + path + ": cannot write");
  writer->out_ << kTelemetryHeader << '\n';
  return writer;
}

void AppendTelemetryRows(TimeNs ts, std::string_view sw, std::span<const QueueSnapshot> queues,
                         std::string& out) {
  char line[192];
  for (const QueueSnapshot& s : queues) {
    std::snprintf(line, sizeof(line), "%llu,", static_cast<unsigned long long>(ts));
    out += line;
    out += sw;
    std::snprintf(line, sizeof(line), ",%u,%u,%u,%llu,%llu,%llu\n", s.port, s.queue,
                  s.depth_packets, static_cast<unsigned long long>(s.depth_bytes),
                  static_cast<unsigned long long>(s.marked),
                  static_cast<unsigned long long>(s.dropped));
    out += line;
  }
}

void TelemetryWriter::Write(TimeNs ts, std::string_view sw, std::span<const QueueSnapshot> queues) {
  std::string rows;
  AppendTelemetryRows(ts, sw, queues, rows);
  WriteRows(rows);
}

void TelemetryWriter::WriteRows(std::string_view rows) {
  out_ << rows;
  rows_ += static_cast<uint64_t>(std::count(rows.begin(), rows.end(), '\n'));
}

Status TelemetryWriter::Close() {
  out_.close();
  if (!out_) return Status::Error("--telemetry " + path_ + ": write failed");
  return Status::Ok();
}

}  // namespace swemu
