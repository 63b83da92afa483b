#include "tools/analyze/time_series.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "pipeline/core/text_file.h"

namespace swemu {

void ThroughputSeries::Add(uint64_t bin, uint32_t len, bool ce) {
  if (frames_.empty()) return;
  bin = std::min<uint64_t>(bin, frames_.size() - 1);
  ++frames_[bin];
  bytes_[bin] += len;
  ce_[bin] += ce;
}

double ThroughputSeries::PeakMbps() const {
  uint64_t peak = 0;
  for (uint64_t b : bytes_) peak = std::max(peak, b);
  return static_cast<double>(peak) * 8e3 / static_cast<double>(bin_ns_);
}

void ThroughputSeries::WriteCsv(std::ostream& out, std::string_view run,
                                std::string_view port) const {
  char line[160];
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    std::snprintf(line, sizeof(line), ",%.9f,%llu,%llu,%.6f,%llu\n",
                  static_cast<double>(i * bin_ns_) / 1e9,
                  static_cast<unsigned long long>(frames_[i]),
                  static_cast<unsigned long long>(bytes_[i]),
                  static_cast<double>(bytes_[i]) * 8e3 / static_cast<double>(bin_ns_),
                  static_cast<unsigned long long>(ce_[i]));
    out << run << ',' << port << line;
  }
}

namespace {

bool ParseField(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<std::vector<QueueSample>> ReadTelemetry(const std::string& path) {
  Result<std::string> text = ReadTextFile(path, "telemetry", std::size_t{1} << 30);
  if (!text.ok()) return text.status();
  std::vector<QueueSample> samples;
  std::string_view rest = *text;
  uint64_t line_no = 0;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1) {
      if (line != kTelemetryHeader) {
        return Status::Error(path + ": line 1: not a swemu telemetry file (expected the header " +
                             std::string(kTelemetryHeader) + ")");
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string_view> cells;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      cells.push_back(line.substr(start, comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    const std::size_t n = cells.size();
    QueueSample s;
    uint64_t port = 0, queue = 0;
    const bool ok = n == 8 && ParseField(cells[0], &s.ts_ns) && !cells[1].empty() &&
                    ParseField(cells[2], &port) && port <= 0xFFFF && ParseField(cells[3], &queue) &&
                    queue <= 0xFF && ParseField(cells[4], &s.depth_packets) &&
                    ParseField(cells[5], &s.depth_bytes) && ParseField(cells[6], &s.marked) &&
                    ParseField(cells[7], &s.dropped);
    if (!ok) {
      return Status::Error(path + ": line " + std::to_string(line_no) +
                           ": expected 8 cells: " + std::string(kTelemetryHeader));
    }
    s.sw = std::string(cells[1]);
    s.port = static_cast<uint16_t>(port);
    s.queue = static_cast<uint8_t>(queue);
    samples.push_back(std::move(s));
  }
  if (line_no == 0) return Status::Error(path + ": empty (no telemetry header)");
  return samples;
}

void WriteQueueCsv(std::ostream& out, std::string_view run, TimeNs t0,
                   const std::vector<QueueSample>& samples) {
  std::map<std::tuple<std::string, uint16_t, uint8_t>, std::pair<uint64_t, uint64_t>> previous;
  char line[200];
  for (const QueueSample& s : samples) {
    auto& [marked, dropped] = previous[{s.sw, s.port, s.queue}];
    const double t = s.ts_ns >= t0 ? static_cast<double>(s.ts_ns - t0) / 1e9
                                   : -static_cast<double>(t0 - s.ts_ns) / 1e9;
    std::snprintf(line, sizeof(line), ",%u,%u,%.9f,%llu,%llu,%llu,%llu\n", s.port, s.queue, t,
                  static_cast<unsigned long long>(s.depth_packets),
                  static_cast<unsigned long long>(s.depth_bytes),
                  static_cast<unsigned long long>(s.marked - std::min(marked, s.marked)),
                  static_cast<unsigned long long>(s.dropped - std::min(dropped, s.dropped)));
    out << run << ',' << s.sw << line;
    marked = s.marked;
    dropped = s.dropped;
  }
}

}  // namespace swemu
