// swemu-analyze's PCN decoder: the TOS byte of pipeline/wire/pcn.h, read only where PCN is
// scoped (UDP datagrams to or from --pcn-port; elsewhere the same bits are ordinary DSCP, EF
// reads as a START). A START is a datagram to the port with bit 7 set, an ACK one from the port
// with bit 6 set. Per worker and PS: the STARTs, their thresholds and the round trip to the
// matching ACK.
#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "pipeline/control/units.h"
#include "pipeline/wire/pcn.h"
#include "tools/analyze/protocol_analyzer.h"
#include "tools/analyze/time_format.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr std::string_view kStartAndAck = "pcn_start_and_ack";
constexpr std::size_t kTextStartsPerPair = 10;  // the rest are in --json and --csv

enum class Kind { kStart, kAck, kStartAndAck };

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kStart:
      return "start";
    case Kind::kAck:
      return "ack";
    case Kind::kStartAndAck:
      return "start_and_ack";
  }
  return "";
}

struct Signal {
  TimeNs ts_ns;
  Ipv4Addr src, dst;
  Kind kind;
  uint8_t tos;
  uint32_t Threshold() const { return PcnTos::Decode(tos).threshold; }
};

struct PairSummary {
  std::vector<const Signal*> starts;  // in time order
  uint64_t acks = 0, answered = 0, acks_without_start = 0;
  uint64_t Unanswered() const { return starts.size() - answered; }
};

// (worker, PS): a START's source and destination, an ACK's destination and source.
using PairKey = std::pair<Ipv4Addr, Ipv4Addr>;

struct Summary {
  std::vector<const Signal*> by_time;
  std::map<PairKey, PairSummary> pairs;
  std::map<const Signal*, TimeNs> round_trip_ns;  // START to its ACK, per answered START
  uint64_t starts = 0, acks = 0, unanswered = 0, acks_without_start = 0;

  std::optional<TimeNs> RoundTrip(const Signal* start) const {
    const auto it = round_trip_ns.find(start);
    return it == round_trip_ns.end() ? std::nullopt : std::optional<TimeNs>(it->second);
  }
};

class PcnAnalyzer final : public ProtocolAnalyzer {
 public:
  explicit PcnAnalyzer(uint16_t port) : port_(port) {}

  std::string_view Consume(const DecodedFrame& frame) override;
  void WriteFields(std::ostream& out) const override;
  void WriteText(std::ostream& out) const override;
  void WriteJson(JsonWriter& json) const override;
  Status WriteCsv(const std::string& dir, std::string_view run, bool header) const override;
  uint16_t BothWaysUdpPort() const override { return port_; }

 private:
  // The signals in time order (a run's pcaps are read one after the other), each ACK matched to
  // the earliest unanswered START of its pair before it. A packet captured at two points is two
  // STARTs and two ACKs, which pair up the same way.
  Summary Summarize() const;

  uint16_t port_;
  std::vector<Signal> signals_;
  uint64_t start_and_ack_ = 0;
  uint64_t other_ = 0;  // scoped datagrams with no signal (or a bit sent the wrong way)
  uint8_t last_tos_ = 0;
};

std::string_view PcnAnalyzer::Consume(const DecodedFrame& frame) {
  last_tos_ = frame.tos;
  const PcnTos pcn = PcnTos::Decode(frame.tos);
  if (pcn.start && pcn.ack) {
    ++start_and_ack_;
    signals_.push_back({frame.ts_ns, frame.ip_src, frame.ip_dst, Kind::kStartAndAck, frame.tos});
    return kStartAndAck;
  }
  if (pcn.start && frame.dport == port_) {
    signals_.push_back({frame.ts_ns, frame.ip_src, frame.ip_dst, Kind::kStart, frame.tos});
  } else if (pcn.ack && frame.sport == port_) {
    signals_.push_back({frame.ts_ns, frame.ip_src, frame.ip_dst, Kind::kAck, frame.tos});
  } else {
    ++other_;
  }
  return {};
}

void PcnAnalyzer::WriteFields(std::ostream& out) const {
  const PcnTos pcn = PcnTos::Decode(last_tos_);
  out << int{pcn.start} << ',' << int{pcn.ack} << ',' << pcn.threshold << ','
      << int{TosEcn(last_tos_)};
}

Summary PcnAnalyzer::Summarize() const {
  Summary s;
  for (const Signal& signal : signals_) s.by_time.push_back(&signal);
  std::stable_sort(s.by_time.begin(), s.by_time.end(),
                   [](const Signal* a, const Signal* b) { return a->ts_ns < b->ts_ns; });
  std::map<PairKey, std::deque<const Signal*>> pending;  // unanswered STARTs, oldest first
  for (const Signal* signal : s.by_time) {
    if (signal->kind == Kind::kStart) {
      const PairKey key{signal->src, signal->dst};
      s.pairs[key].starts.push_back(signal);
      pending[key].push_back(signal);
      ++s.starts;
    } else if (signal->kind == Kind::kAck) {
      const PairKey key{signal->dst, signal->src};
      PairSummary& pair = s.pairs[key];
      ++pair.acks;
      ++s.acks;
      std::deque<const Signal*>& waiting = pending[key];
      if (waiting.empty()) {
        ++pair.acks_without_start;
        ++s.acks_without_start;
        continue;
      }
      s.round_trip_ns[waiting.front()] = signal->ts_ns - waiting.front()->ts_ns;
      waiting.pop_front();
      ++pair.answered;
    }
  }
  for (const auto& [key, pair] : s.pairs) s.unanswered += pair.Unanswered();
  return s;
}

void PcnAnalyzer::WriteText(std::ostream& out) const {
  if (signals_.empty() && other_ == 0) return;  // no PCN in this run
  const Summary s = Summarize();
  out << "  pcn: udp port " << port_ << ", " << s.starts << " START(s), " << s.acks << " ACK(s), "
      << s.unanswered << " START(s) without an ACK, " << s.acks_without_start
      << " ACK(s) without a START, " << other_ << " datagram(s) without a signal";
  if (start_and_ack_ > 0) out << "; odd: " << kStartAndAck << " " << start_and_ack_;
  out << "\n";
  for (const auto& [key, pair] : s.pairs) {
    std::set<uint32_t> thresholds;
    std::optional<TimeNs> min_rtt, max_rtt;
    for (const Signal* start : pair.starts) {
      thresholds.insert(start->Threshold());
      if (const std::optional<TimeNs> rtt = s.RoundTrip(start)) {
        min_rtt = std::min(min_rtt.value_or(*rtt), *rtt);
        max_rtt = std::max(max_rtt.value_or(*rtt), *rtt);
      }
    }
    out << "    " << FormatIpv4(key.first) << " -> " << FormatIpv4(key.second) << ": "
        << pair.starts.size() << " START(s), thresholds";
    const char* sep = " ";
    for (uint32_t t : thresholds) out << std::exchange(sep, ",") << t;
    if (thresholds.empty()) out << " none";
    out << "; " << pair.acks << " ACK(s), " << pair.Unanswered() << " unanswered";
    if (pair.acks_without_start > 0) out << ", " << pair.acks_without_start << " without a START";
    if (min_rtt) {
      out << "; round trip " << FormatMicros(*min_rtt) << ".." << FormatMicros(*max_rtt) << " us";
    }
    out << "\n";
    for (std::size_t i = 0; i < pair.starts.size() && i < kTextStartsPerPair; ++i) {
      const Signal* start = pair.starts[i];
      out << "      START at " << FormatSeconds(start->ts_ns) << " s, threshold "
          << start->Threshold() << ", ecn " << int{TosEcn(start->tos)} << ": ";
      if (const std::optional<TimeNs> rtt = s.RoundTrip(start)) {
        out << "ACK after " << FormatMicros(*rtt) << " us\n";
      } else {
        out << "no ACK\n";
      }
    }
    if (pair.starts.size() > kTextStartsPerPair) {
      out << "      ... " << pair.starts.size() - kTextStartsPerPair
          << " more (--json, --csv pcn.csv)\n";
    }
  }
}

void PcnAnalyzer::WriteJson(JsonWriter& json) const {
  const Summary s = Summarize();
  json.BeginObject("pcn");
  json.Uint("udp_port", port_).Uint("starts", s.starts).Uint("acks", s.acks);
  json.Uint("starts_without_ack", s.unanswered).Uint("acks_without_start", s.acks_without_start);
  json.Uint("without_signal", other_);
  json.BeginObject("odd").Uint(kStartAndAck, start_and_ack_).EndObject();
  json.BeginArray("pairs");
  for (const auto& [key, pair] : s.pairs) {
    json.BeginObject();
    json.String("worker", FormatIpv4(key.first)).String("ps", FormatIpv4(key.second));
    json.Uint("starts", pair.starts.size()).Uint("acks", pair.acks);
    json.Uint("starts_without_ack", pair.Unanswered());
    json.Uint("acks_without_start", pair.acks_without_start);
    json.BeginArray("start_signals");
    for (const Signal* start : pair.starts) {
      const std::optional<TimeNs> rtt = s.RoundTrip(start);
      json.BeginObject();
      json.Uint("time_ns", start->ts_ns).Uint("threshold", start->Threshold());
      json.Uint("ecn", TosEcn(start->tos)).Bool("acked", rtt.has_value());
      if (rtt) json.Uint("round_trip_ns", *rtt);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

Status PcnAnalyzer::WriteCsv(const std::string& dir, std::string_view run, bool header) const {
  const std::string path = dir + "/pcn.csv";
  std::ofstream out(path, header ? std::ios::trunc : std::ios::app);
  if (header) out << "run,time_ns,src,dst,kind,threshold,ecn,round_trip_us\n";
  const Summary s = Summarize();
  for (const Signal* signal : s.by_time) {
    out << run << ',' << signal->ts_ns << ',' << FormatIpv4(signal->src) << ','
        << FormatIpv4(signal->dst) << ',' << KindName(signal->kind) << ',' << signal->Threshold()
        << ',' << int{TosEcn(signal->tos)} << ',';
    if (const std::optional<TimeNs> rtt = s.RoundTrip(signal)) out << FormatMicros(*rtt);
    out << '\n';
  }
  out.close();
  if (!out) return Status::Error(path + ": cannot write");
  return Status::Ok();
}

std::vector<std::string> PcnFieldNames() {
  return {"pcn.start", "pcn.ack", "pcn.threshold", "pcn.ecn"};
}

void AddPcnOptions(po::options_description& options) {
  options.add_options()(
      "pcn-port",
      po::value<std::string>()->default_value(std::to_string(kPcnDefaultUdpPort))->value_name("N"),
      "PCN: the UDP port of the START (to it) and ACK (from it) datagrams; the "
      "TOS byte is read as PCN on those only");
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakePcnAnalyzer(const po::variables_map& vm) {
  Result<uint64_t> port = ParseUint(vm["pcn-port"].as<std::string>(), 1, 65535);
  if (!port.ok()) return Status::Error("--pcn-port: " + port.message());
  return std::unique_ptr<ProtocolAnalyzer>(new PcnAnalyzer(static_cast<uint16_t>(*port)));
}

}  // namespace

// PCN is read on datagrams to and from --pcn-port (BothWaysUdpPort), not on --udp-port.
SWEMU_REGISTER_PROTOCOL({.order = 20,
                         .name = "pcn",
                         .default_udp_port = 0,
                         .fields = PcnFieldNames,
                         .add_options = AddPcnOptions,
                         .make = MakePcnAnalyzer});

}  // namespace swemu
