#include "tools/analyze/run_analysis.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/ipv4.h"

namespace swemu {
namespace fs = std::filesystem;

namespace {

Status ScanPcap(const std::string& path, PcapSpan* span) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path, PcapLinks::kAny);
  if (!reader.ok()) return reader.status();
  span->path = path;
  span->port = fs::path(path).stem().string();
  span->link_type = (*reader)->link_type();
  if (!IsDecodableLinkType(span->link_type)) {
    return Status::Error(path + ": link type " + std::to_string(span->link_type) +
                         " is not one swemu-analyze decodes (Ethernet, raw IP, Linux SLL)");
  }
  PcapRecord record;
  while ((*reader)->Next(&record)) {
    span->first_ns = std::min(span->first_ns, record.ts_ns);
    span->last_ns = std::max(span->last_ns, record.ts_ns);
  }
  span->records = (*reader)->records_read();
  // A file that ends inside a record (a capture cut off) is read up to there, and said so.
  if (!(*reader)->status().ok()) span->truncated = (*reader)->status().message();
  return Status::Ok();
}

}  // namespace

Result<RunInput> ScanRunInput(const std::string& path) {
  RunInput run;
  run.name = path;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return Status::Error(path + ": no such file or directory");
  std::vector<std::string> pcaps;
  if (fs::is_directory(status)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".pcap" || ext == ".pcapng") pcaps.push_back(entry.path().string());
    }
    if (ec) return Status::Error(path + ": " + ec.message());
    std::sort(pcaps.begin(), pcaps.end());
    const fs::path telemetry = fs::path(path) / kTelemetryFileName;
    if (fs::exists(telemetry, ec)) run.telemetry = telemetry.string();
    // A run recorded without captures (swemu-pcn sim) still has its queues over time.
    if (pcaps.empty() && run.telemetry.empty()) {
      return Status::Error(path + ": a directory without .pcap files or " +
                           std::string(kTelemetryFileName));
    }
  } else if (fs::is_regular_file(status)) {
    pcaps.push_back(path);
  } else {
    return Status::Error(path + ": not a regular file or a directory");
  }
  for (const std::string& pcap : pcaps) {
    SWEMU_RETURN_IF_ERROR(CheckRereadablePcap(pcap));  // scanned here, read again to analyse
    SWEMU_RETURN_IF_ERROR(ScanPcap(pcap, &run.pcaps.emplace_back()));
    run.first_ns = std::min(run.first_ns, run.pcaps.back().first_ns);
    run.last_ns = std::max(run.last_ns, run.pcaps.back().last_ns);
  }
  if (!run.telemetry.empty()) {
    Result<std::vector<QueueSample>> samples = ReadTelemetry(run.telemetry);
    if (!samples.ok()) return samples.status();
    run.queue_samples = std::move(*samples);
    if (pcaps.empty()) {  // the run's span is the telemetry's
      for (const QueueSample& q : run.queue_samples) {
        run.first_ns = std::min(run.first_ns, q.ts_ns);
        run.last_ns = std::max(run.last_ns, q.ts_ns);
      }
    }
  }
  if (run.first_ns == kNever) run.first_ns = run.last_ns = 0;  // no frames at all
  return run;
}

std::string PacketsCsvHeader() {
  std::string header =
      "frame,time_ns,caplen,len,eth.src,eth.dst,vlan.id,ip.src,ip.dst,ip.dscp,ip.ecn,ip.proto,"
      "l4.sport,l4.dport";
  for (const ProtocolEntry& entry : Protocols()) {
    for (const std::string& field : entry.fields()) header += "," + field;
  }
  return header + ",malformed";
}

Result<std::unique_ptr<RunAnalysis>> RunAnalysis::Make(
    RunInput input, const PortMap& ports, const boost::program_options::variables_map& vm) {
  std::unique_ptr<RunAnalysis> run(new RunAnalysis(std::move(input)));
  for (const ProtocolEntry& entry : Protocols()) {
    Result<std::unique_ptr<ProtocolAnalyzer>> protocol = entry.make(vm);
    if (!protocol.ok()) return protocol.status();
    for (const auto& [port, name] : ports) {
      if (name == entry.name) run->decoder_.Register(port, protocol->get());
    }
    if (const uint16_t port = (*protocol)->BothWaysUdpPort(); port != 0) {
      run->decoder_.RegisterBothWays(port, protocol->get());
    }
    if (const uint16_t port = (*protocol)->OwnUdpPort(); port != 0) {
      run->decoder_.Register(port, protocol->get());
    }
    run->protocols_.push_back(std::move(*protocol));
  }
  return run;
}

namespace {

void WritePacketRow(std::ostream& out, const DecodedFrame& f,
                    const std::vector<std::unique_ptr<ProtocolAnalyzer>>& protocols) {
  out << f.number << ',' << f.ts_ns << ',' << f.caplen << ',' << f.len << ',';
  if (f.has_eth) out << FormatMac(f.eth_src) << ',' << FormatMac(f.eth_dst);
  else out << ',';
  out << ',';
  if (f.vlan_tags > 0) out << f.vlan_id;
  out << ',';
  if (f.has_ipv4) {
    out << FormatIpv4(f.ip_src) << ',' << FormatIpv4(f.ip_dst) << ',' << int{TosDscp(f.tos)} << ','
        << int{TosEcn(f.tos)} << ',' << int{f.ip_proto};
  } else {
    out << ",,,,";
  }
  out << ',';
  if (f.has_l4) out << f.sport << ',' << f.dport;
  else out << ',';
  for (std::size_t i = 0; i < protocols.size(); ++i) {
    out << ',';
    if (f.protocol == protocols[i].get()) {
      protocols[i]->WriteFields(out);
    } else {
      const std::size_t cells = Protocols()[i].fields().size();
      out << std::string(cells - 1, ',');
    }
  }
  out << ',' << f.malformed << '\n';
}

}  // namespace

Status RunAnalysis::Analyze(TimeNs bin_ns, std::size_t top_flows, std::ostream* packets) {
  bin_ns_ = bin_ns;
  top_flows_ = top_flows;
  const std::size_t bins =
      input_.last_ns >= input_.first_ns ? (input_.last_ns - input_.first_ns) / bin_ns + 1 : 1;
  for (const PcapSpan& span : input_.pcaps) {
    ThroughputSeries& series = throughput_.emplace_back(bin_ns, bins);
    Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(span.path, PcapLinks::kAny);
    if (!reader.ok()) return reader.status();
    PcapRecord record;
    DecodedFrame frame;
    while ((*reader)->Next(&record)) {
      frame = DecodedFrame();
      frame.number = (*reader)->records_read();
      frame.ts_ns = record.ts_ns;
      frame.caplen = static_cast<uint32_t>(record.bytes.size());
      frame.len = std::max(record.orig_len, frame.caplen);
      decoder_.Decode(span.link_type, record.bytes, frame);
      if (frame.protocol != nullptr && frame.malformed.empty()) {
        frame.malformed = frame.protocol->Consume(frame);
      }
      ++frames_;
      bytes_ += frame.len;
      snapped_ += frame.snapped();
      if (!frame.malformed.empty()) ++malformed_[std::string(frame.malformed)];
      const uint64_t bin = (frame.ts_ns - input_.first_ns) / bin_ns;  // first_ns: the earliest
      flows_.Add(frame, bin);
      series.Add(bin, frame.len, frame.has_ipv4 && TosEcn(frame.tos) == kEcnCe);
      if (packets != nullptr) WritePacketRow(*packets, frame, protocols_);
    }
  }
  return Status::Ok();
}

void RunAnalysis::WriteText(std::ostream& out, std::size_t top_flows) const {
  out << "run " << input_.name << ": " << frames_ << " frames, " << FormatSi(bytes_, "B");
  if (frames_ > 0) {
    out << " in " << static_cast<double>(input_.last_ns - input_.first_ns) / 1e6 << " ms";
  }
  out << "\n";
  for (std::size_t i = 0; i < input_.pcaps.size(); ++i) {
    const PcapSpan& span = input_.pcaps[i];
    out << "  " << span.port << ": " << span.records << " frames, peak "
        << throughput_[i].PeakMbps() << " Mbit/s per " << static_cast<double>(bin_ns_) / 1e3
        << " us";
    if (!span.truncated.empty()) out << "; the file is cut off after frame " << span.records;
    out << "\n";
  }
  if (snapped_ > 0) {
    out << "  " << snapped_ << " frames cut by the capture's snap length (headers read as far "
        << "as kept)\n";
  }
  if (!malformed_.empty()) {
    out << "  malformed:";
    for (const auto& [reason, n] : malformed_) out << " " << reason << " " << n;
    out << "\n";
  }
  if (!input_.telemetry.empty()) {
    out << "  telemetry: " << input_.queue_samples.size() << " queue samples from "
        << input_.telemetry << "\n";
  }
  flows_.WriteText(out, top_flows);
  for (const auto& protocol : protocols_) protocol->WriteText(out);
}

void RunAnalysis::WriteJson(JsonWriter& json) const {
  json.BeginObject();
  json.String("run", input_.name);
  json.Uint("frames", frames_).Uint("bytes", bytes_).Uint("snapped", snapped_);
  json.Uint("first_ns", input_.first_ns).Uint("last_ns", input_.last_ns);
  json.BeginArray("ports");
  for (std::size_t i = 0; i < input_.pcaps.size(); ++i) {
    json.BeginObject();
    json.String("port", input_.pcaps[i].port).String("file", input_.pcaps[i].path);
    json.Uint("frames", input_.pcaps[i].records);
    json.Double("peak_mbps", throughput_[i].PeakMbps());
    json.Bool("truncated", !input_.pcaps[i].truncated.empty());
    json.EndObject();
  }
  json.EndArray();
  json.BeginObject("malformed");
  for (const auto& [reason, n] : malformed_) json.Uint(reason, n);
  json.EndObject();
  flows_.WriteJson(json);
  for (const auto& protocol : protocols_) protocol->WriteJson(json);
  json.EndObject();
}

Status RunAnalysis::WriteCsv(const std::string& dir, bool header) const {
  const auto mode = header ? std::ios::trunc : std::ios::app;
  {
    std::ofstream out(dir + "/throughput.csv", mode);
    if (header) out << "run,port,time_s,frames,bytes,throughput_Mbps,ce_frames\n";
    for (std::size_t i = 0; i < input_.pcaps.size(); ++i) {
      throughput_[i].WriteCsv(out, input_.name, input_.pcaps[i].port);
    }
    if (!out) return Status::Error(dir + "/throughput.csv: cannot write");
  }
  {
    std::ofstream out(dir + "/queue.csv", mode);
    if (header) {
      out << "run,switch,port,queue,time_s,depth_packets,depth_bytes,marked_packets,"
             "dropped_packets\n";
    }
    WriteQueueCsv(out, input_.name, input_.first_ns, input_.queue_samples);
    if (!out) return Status::Error(dir + "/queue.csv: cannot write");
  }
  {
    std::ofstream out(dir + "/flows.csv", mode);
    SWEMU_RETURN_IF_ERROR(flows_.WriteCsv(out, input_.name, header));
    if (!out) return Status::Error(dir + "/flows.csv: cannot write");
  }
  {
    std::ofstream out(dir + "/flow_throughput.csv", mode);
    if (header) out << "run,flow,time_s,frames,bytes,throughput_Mbps\n";
    flows_.WriteSeriesCsv(out, input_.name, bin_ns_, top_flows_);
    if (!out) return Status::Error(dir + "/flow_throughput.csv: cannot write");
  }
  for (const auto& protocol : protocols_) {
    SWEMU_RETURN_IF_ERROR(protocol->WriteCsv(dir, input_.name, header));
  }
  return Status::Ok();
}

}  // namespace swemu
