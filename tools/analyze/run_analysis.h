#pragma once
// One run as swemu-analyze sees it: the pcaps of its ports (a file, or every *.pcap of a
// directory such as swemu's --out-dir or --pcap-dir) and, when the directory has one, swemu's
// telemetry record. Decodes every frame once and keeps the summaries.
#include <boost/program_options.hpp>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/core/json_writer.h"
#include "pipeline/core/status.h"
#include "tools/analyze/flow_table.h"
#include "tools/analyze/frame_decoder.h"
#include "tools/analyze/protocol_analyzer.h"
#include "tools/analyze/time_series.h"

namespace swemu {

inline constexpr const char* kTelemetryFileName = "telemetry.csv";

struct PcapSpan {
  std::string path;
  std::string port;  // the file's stem: port0, port4-rx, ...
  int link_type = 0;
  uint64_t records = 0;
  TimeNs first_ns = kNever, last_ns = 0;
  std::string truncated;  // libpcap's message when the file ends inside a record
};

struct RunInput {
  std::string name;  // the path as given
  std::vector<PcapSpan> pcaps;
  std::string telemetry;  // empty: none
  std::vector<QueueSample> queue_samples;
  TimeNs first_ns = kNever, last_ns = 0;  // over the pcaps
};

// Checks an input and reads what it needs to plan the analysis (every pcap once, the telemetry
// whole). Errors name the path: a missing or unreadable file, a directory without pcaps, a link
// type swemu-analyze cannot decode.
Result<RunInput> ScanRunInput(const std::string& path);

// UDP destination port -> protocol name, from the registry and --udp-port (a protocol with a
// port option of its own, PCN's or DLCP's, registers that port itself).
using PortMap = std::vector<std::pair<uint16_t, std::string>>;

class RunAnalysis {
 public:
  static Result<std::unique_ptr<RunAnalysis>> Make(
      RunInput input, const PortMap& ports, const boost::program_options::variables_map& vm);

  // Decodes every frame; writes one row per frame to `packets` when it is not null.
  // top_flows: how many flows (by bytes) get a throughput series in the CSV.
  Status Analyze(TimeNs bin_ns, std::size_t top_flows, std::ostream* packets);

  void WriteText(std::ostream& out, std::size_t top_flows) const;
  void WriteJson(JsonWriter& json) const;
  Status WriteCsv(const std::string& dir, bool header) const;
  const RunInput& input() const { return input_; }

 private:
  explicit RunAnalysis(RunInput input) : input_(std::move(input)) {}

  RunInput input_;
  std::vector<std::unique_ptr<ProtocolAnalyzer>> protocols_;  // in Protocols() order
  FrameDecoder decoder_;
  FlowTable flows_;
  std::vector<ThroughputSeries> throughput_;  // per pcap
  TimeNs bin_ns_ = 0;
  std::size_t top_flows_ = 0;
  uint64_t frames_ = 0, bytes_ = 0, snapped_ = 0;
  std::map<std::string, uint64_t> malformed_;  // by reason
};

// Every per-packet column, in order: the standard ones, then each protocol's.
std::string PacketsCsvHeader();

}  // namespace swemu
