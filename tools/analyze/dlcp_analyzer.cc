// swemu-analyze's DLCP decoder: the transport header of pipeline/wire/dlcp.h on UDP datagrams to
// --dlcp-port, and in data packets the priority tag the switch reads in the DSCP (16 + tag) and
// the importance in ECN (ECT or CE: important). Per flow as on the wire (source, destination,
// tensor): data packets and bytes, distinct partitions and duplicates, the tags, important and CE
// shares, the control signals by type and the time from START to CONFIRM.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "pipeline/control/units.h"
#include "pipeline/wire/dlcp.h"
#include "pipeline/wire/ipv4.h"
#include "tools/analyze/protocol_analyzer.h"
#include "tools/analyze/time_format.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr std::size_t kTextFlows = 20;  // the rest are in --json and --csv

enum Reason { kTruncatedHeader, kBadVersion, kBadType, kTruncatedPayload, kReasons };
constexpr std::array<std::string_view, kReasons> kReasonNames = {
    "dlcp_truncated_header", "dlcp_bad_version", "dlcp_bad_type", "dlcp_truncated_payload"};

// The signals, types 2 (start) .. 8 (ack), by type - 2; the dissector's names.
constexpr uint8_t kFirstSignal = static_cast<uint8_t>(DlcpType::kStart);
constexpr std::array<std::string_view, 7> kSignalNames = {"start",   "finish", "stop", "retransmit",
                                                          "confirm", "rate",   "ack"};
static_assert(kFirstSignal + kSignalNames.size() - 1 == static_cast<uint8_t>(DlcpType::kAck));

bool KnownType(uint8_t type) {
  return type >= static_cast<uint8_t>(DlcpType::kData) &&
         type <= static_cast<uint8_t>(DlcpType::kAck);
}

// A version-1 data packet, as far as byte 0 tells: it carries a tag and an importance.
bool IsData(const uint8_t* header, std::size_t len) {
  return len >= 1 && header[0] == ((kDlcpVersion << 4) | static_cast<uint8_t>(DlcpType::kData));
}

// The tag of a data packet's DSCP (16 + tag, the switch's default base), or none.
std::optional<uint32_t> TagOfTos(uint8_t tos) {
  const uint8_t dscp = TosDscp(tos);
  if (dscp < kDlcpDefaultDscpBase || dscp >= kDlcpDefaultDscpBase + kDlcpDataPriorities) {
    return std::nullopt;
  }
  return dscp - kDlcpDefaultDscpBase;
}

struct Flow {
  uint64_t data_packets = 0, data_bytes = 0, duplicates = 0, pull_packets = 0;
  std::array<uint64_t, kDlcpDataPriorities> tags{};
  uint64_t other_dscp = 0;  // data packets whose DSCP is no tag
  uint64_t important = 0, ce = 0;
  std::array<uint64_t, kSignalNames.size()> signals{};
  std::optional<uint32_t> tensor_size;         // the earliest START's
  std::optional<TimeNs> start_ns, confirm_ns;  // the earliest of each
  std::unordered_set<uint32_t> offsets;        // partitions seen

  uint64_t Signals() const {
    uint64_t n = 0;
    for (uint64_t s : signals) n += s;
    return n;
  }
  std::optional<TimeNs> StartToConfirm() const {
    if (!start_ns || !confirm_ns || *confirm_ns < *start_ns) return std::nullopt;
    return *confirm_ns - *start_ns;
  }
};

using FlowId = std::tuple<Ipv4Addr, Ipv4Addr, uint32_t>;  // source, destination, tensor

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

std::string Percent(uint64_t part, uint64_t whole) {
  char text[16];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * Share(part, whole));
  return text;
}

class DlcpAnalyzer final : public ProtocolAnalyzer {
 public:
  explicit DlcpAnalyzer(uint16_t port) : port_(port) {}

  std::string_view Consume(const DecodedFrame& frame) override;
  void WriteFields(std::ostream& out) const override;
  void WriteText(std::ostream& out) const override;
  void WriteJson(JsonWriter& json) const override;
  Status WriteCsv(const std::string& dir, std::string_view run, bool header) const override;
  uint16_t OwnUdpPort() const override { return port_; }

 private:
  static std::optional<Reason> Malformed(const DecodedFrame& frame);
  void Account(const DlcpHeader& h, const DecodedFrame& frame);
  void WriteFlowText(std::ostream& out, const FlowId& id, const Flow& flow) const;

  uint16_t port_;
  std::map<FlowId, Flow> flows_;
  std::array<uint64_t, kReasons> malformed_{};
  uint64_t snapped_ = 0;  // headers cut by the capture's snap length: not accounted
  // The last frame's header bytes (fewer than 16 when cut short) and TOS, for WriteFields.
  uint8_t last_[kDlcpHeaderLen] = {};
  std::size_t last_len_ = 0;
  uint8_t last_tos_ = 0;
};

std::optional<Reason> DlcpAnalyzer::Malformed(const DecodedFrame& frame) {
  if (frame.app_len < kDlcpHeaderLen) {
    // A header cut by the snap length is merely short; cut in the datagram, it is malformed.
    if (frame.snapped() && frame.l4_payload_len >= kDlcpHeaderLen) return std::nullopt;
    return kTruncatedHeader;
  }
  const auto* h = HeaderAt<DlcpHeader>(frame.app);
  if (h->Version() != kDlcpVersion) return kBadVersion;
  if (!KnownType(static_cast<uint8_t>(h->Type()))) return kBadType;
  if (kDlcpHeaderLen + h->Length() > frame.l4_payload_len) return kTruncatedPayload;
  return std::nullopt;
}

std::string_view DlcpAnalyzer::Consume(const DecodedFrame& frame) {
  last_len_ = std::min<std::size_t>(frame.app_len, kDlcpHeaderLen);
  std::copy_n(frame.app, last_len_, last_);
  last_tos_ = frame.tos;
  if (const std::optional<Reason> reason = Malformed(frame)) {
    ++malformed_[*reason];
    return kReasonNames[*reason];
  }
  if (last_len_ < kDlcpHeaderLen) {
    ++snapped_;
    return {};
  }
  Account(*HeaderAt<DlcpHeader>(last_), frame);
  return {};
}

void DlcpAnalyzer::Account(const DlcpHeader& h, const DecodedFrame& frame) {
  Flow& flow = flows_[{frame.ip_src, frame.ip_dst, h.Tensor()}];
  if ((h.flags & kDlcpFlagPull) != 0) ++flow.pull_packets;
  const auto type = static_cast<uint8_t>(h.Type());
  if (h.Type() != DlcpType::kData) {
    ++flow.signals[type - kFirstSignal];
    if (h.Type() == DlcpType::kStart && (!flow.start_ns || frame.ts_ns < *flow.start_ns)) {
      flow.start_ns = frame.ts_ns;
      flow.tensor_size = h.Offset();
    } else if (h.Type() == DlcpType::kConfirm) {
      flow.confirm_ns = std::min(flow.confirm_ns.value_or(frame.ts_ns), frame.ts_ns);
    }
    return;
  }
  ++flow.data_packets;
  flow.data_bytes += h.Length();
  if (!flow.offsets.insert(h.Offset()).second) ++flow.duplicates;
  if (const std::optional<uint32_t> tag = TagOfTos(frame.tos)) {
    ++flow.tags[*tag];
  } else {
    ++flow.other_dscp;
  }
  const uint8_t ecn = TosEcn(frame.tos);
  flow.important += ecn != kEcnNotEct;
  flow.ce += ecn == kEcnCe;
}

void DlcpAnalyzer::WriteFields(std::ostream& out) const {
  auto field = [&](std::size_t end, uint64_t value) {
    if (last_len_ >= end) out << value;
    out << ',';
  };
  const auto* h = HeaderAt<DlcpHeader>(last_);
  field(1, h->Version());
  field(1, static_cast<uint8_t>(h->Type()));
  field(2, h->flags & kDlcpFlagPull);
  field(4, h->Length());
  field(8, h->Tensor());
  field(12, h->Seq());
  field(16, h->Offset());
  const bool data = IsData(last_, last_len_);
  const std::optional<uint32_t> tag = TagOfTos(last_tos_);
  if (data && tag) out << *tag;
  out << ',';
  if (data) out << int{TosEcn(last_tos_) != kEcnNotEct};
}

void DlcpAnalyzer::WriteFlowText(std::ostream& out, const FlowId& id, const Flow& flow) const {
  const auto& [src, dst, tensor] = id;
  out << "    " << FormatIpv4(src) << " -> " << FormatIpv4(dst) << " tensor " << tensor << ": ";
  if (flow.data_packets == 0) {
    out << "no data";
  } else {
    out << flow.data_packets << " data packet(s), " << flow.data_bytes << " bytes, "
        << flow.offsets.size() << " partition(s), " << flow.duplicates << " duplicate(s); tags";
    for (std::size_t t = 0; t < flow.tags.size(); ++t) {
      if (flow.tags[t] > 0) out << " " << t << " " << Percent(flow.tags[t], flow.data_packets);
    }
    if (flow.other_dscp > 0) {
      out << " other-dscp " << Percent(flow.other_dscp, flow.data_packets);
    }
    out << "; important " << Percent(flow.important, flow.data_packets) << ", unimportant "
        << Percent(flow.data_packets - flow.important, flow.data_packets) << ", CE "
        << Percent(flow.ce, flow.data_packets);
  }
  if (flow.pull_packets > 0) out << "; pull " << flow.pull_packets;
  out << "; signals";
  if (flow.Signals() == 0) out << " none";
  const char* sep = " ";
  for (std::size_t i = 0; i < kSignalNames.size(); ++i) {
    if (flow.signals[i] == 0) continue;
    out << std::exchange(sep, ", ") << kSignalNames[i] << " " << flow.signals[i];
    if (i == 0) out << " (size " << *flow.tensor_size << ")";
  }
  if (const std::optional<TimeNs> t = flow.StartToConfirm()) {
    out << "; start to confirm " << FormatMicros(*t) << " us";
  }
  out << "\n";
}

void DlcpAnalyzer::WriteText(std::ostream& out) const {
  uint64_t malformed = 0;
  for (uint64_t n : malformed_) malformed += n;
  if (flows_.empty() && malformed == 0 && snapped_ == 0) return;  // no DLCP in this run
  uint64_t data = 0, signals = 0;
  for (const auto& [id, flow] : flows_) data += flow.data_packets, signals += flow.Signals();
  out << "  dlcp: udp port " << port_ << ", " << flows_.size() << " flow(s), " << data
      << " data packet(s), " << signals << " signal(s)";
  if (snapped_ > 0) out << ", " << snapped_ << " header(s) cut by the capture (not counted)";
  if (malformed > 0) {
    out << "; malformed";
    for (std::size_t r = 0; r < kReasons; ++r) {
      if (malformed_[r] > 0) out << " " << kReasonNames[r] << " " << malformed_[r];
    }
  }
  out << "\n";
  std::size_t shown = 0;
  for (const auto& [id, flow] : flows_) {
    if (shown++ == kTextFlows) break;
    WriteFlowText(out, id, flow);
  }
  if (flows_.size() > kTextFlows) {
    out << "    ... " << flows_.size() - kTextFlows << " more flow(s) (--json, --csv dlcp.csv)\n";
  }
}

void DlcpAnalyzer::WriteJson(JsonWriter& json) const {
  json.BeginObject("dlcp");
  json.Uint("udp_port", port_).Uint("dscp_base", kDlcpDefaultDscpBase);
  json.Uint("snapped_headers", snapped_);
  json.BeginObject("malformed");
  for (std::size_t r = 0; r < kReasons; ++r) json.Uint(kReasonNames[r], malformed_[r]);
  json.EndObject();
  json.BeginArray("flows");
  for (const auto& [id, flow] : flows_) {
    const auto& [src, dst, tensor] = id;
    json.BeginObject();
    json.String("src", FormatIpv4(src)).String("dst", FormatIpv4(dst)).Uint("tensor", tensor);
    json.Uint("data_packets", flow.data_packets).Uint("data_bytes", flow.data_bytes);
    json.Uint("partitions", flow.offsets.size()).Uint("duplicates", flow.duplicates);
    json.Uint("pull_packets", flow.pull_packets);
    json.BeginArray("tag_packets");
    for (uint64_t n : flow.tags) json.Uint({}, n);
    json.EndArray();
    json.Uint("other_dscp_packets", flow.other_dscp);
    json.Uint("important_packets", flow.important);
    json.Uint("unimportant_packets", flow.data_packets - flow.important);
    json.Uint("ce_packets", flow.ce);
    json.Double("important_share", Share(flow.important, flow.data_packets));
    json.Double("ce_share", Share(flow.ce, flow.data_packets));
    json.BeginObject("signals");
    for (std::size_t i = 0; i < kSignalNames.size(); ++i)
      json.Uint(kSignalNames[i], flow.signals[i]);
    json.EndObject();
    if (flow.tensor_size) json.Uint("tensor_size", *flow.tensor_size);
    if (flow.start_ns) json.Uint("start_ns", *flow.start_ns);
    if (flow.confirm_ns) json.Uint("confirm_ns", *flow.confirm_ns);
    if (const std::optional<TimeNs> t = flow.StartToConfirm()) json.Uint("start_to_confirm_ns", *t);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

Status DlcpAnalyzer::WriteCsv(const std::string& dir, std::string_view run, bool header) const {
  const std::string path = dir + "/dlcp.csv";
  std::ofstream out(path, header ? std::ios::trunc : std::ios::app);
  if (header) {
    out << "run,src,dst,tensor,data_packets,data_bytes,partitions,duplicates,pull_packets";
    for (std::size_t t = 0; t < kDlcpDataPriorities; ++t) out << ",tag" << t << "_packets";
    out << ",other_dscp_packets,important_packets,unimportant_packets,ce_packets";
    for (std::string_view name : kSignalNames) out << ',' << name;
    out << ",tensor_size,start_to_confirm_us\n";
  }
  for (const auto& [id, flow] : flows_) {
    const auto& [src, dst, tensor] = id;
    out << run << ',' << FormatIpv4(src) << ',' << FormatIpv4(dst) << ',' << tensor << ','
        << flow.data_packets << ',' << flow.data_bytes << ',' << flow.offsets.size() << ','
        << flow.duplicates << ',' << flow.pull_packets;
    for (uint64_t n : flow.tags) out << ',' << n;
    out << ',' << flow.other_dscp << ',' << flow.important << ','
        << flow.data_packets - flow.important << ',' << flow.ce;
    for (uint64_t n : flow.signals) out << ',' << n;
    out << ',';
    if (flow.tensor_size) out << *flow.tensor_size;
    out << ',';
    if (const std::optional<TimeNs> t = flow.StartToConfirm()) out << FormatMicros(*t);
    out << '\n';
  }
  out.close();
  if (!out) return Status::Error(path + ": cannot write");
  return Status::Ok();
}

std::vector<std::string> DlcpFieldNames() {
  return {"dlcp.version", "dlcp.type",   "dlcp.pull", "dlcp.length",   "dlcp.tensor",
          "dlcp.seq",     "dlcp.offset", "dlcp.tag",  "dlcp.important"};
}

void AddDlcpOptions(po::options_description& options) {
  options.add_options()(
      "dlcp-port",
      po::value<std::string>()->default_value(std::to_string(kDlcpDefaultUdpPort))->value_name("N"),
      "DLCP: the UDP destination port of its data packets and signals");
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakeDlcpAnalyzer(const po::variables_map& vm) {
  Result<uint64_t> port = ParseUint(vm["dlcp-port"].as<std::string>(), 1, 65535);
  if (!port.ok()) return Status::Error("--dlcp-port: " + port.message());
  return std::unique_ptr<ProtocolAnalyzer>(new DlcpAnalyzer(static_cast<uint16_t>(*port)));
}

}  // namespace

// DLCP is read on datagrams to --dlcp-port (OwnUdpPort), not on --udp-port.
SWEMU_REGISTER_PROTOCOL({.order = 30,
                         .name = "dlcp",
                         .default_udp_port = 0,
                         .fields = DlcpFieldNames,
                         .add_options = AddDlcpOptions,
                         .make = MakeDlcpAnalyzer});

}  // namespace swemu
