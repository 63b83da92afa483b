// swemu-analyze's GOAT decoder: the header of pipeline/wire/goat.h on UDP datagrams to
// --goat-port. Per job: the gradient fragments by who wrote them (a worker's own, or a switch's
// aggregate with the workers it holds: whether an aggregate is complete needs the fan-in, which
// only the plan knows, so the counts are reported as they are), by where they are addressed (the
// PS, a switch, or any switch with a free slot), the PS's results and those that left a late
// worker out, retransmissions, overflow, and the fragments and rounds seen.
#include <algorithm>
#include <array>
#include <bit>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "pipeline/control/units.h"
#include "pipeline/wire/goat.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr std::size_t kTextJobs = 20;  // the rest are in --json and --csv

// In the order they are checked, which the dissector follows too.
enum Reason { kTruncatedHeader, kBadVersion, kBadType, kTruncatedElements, kBadCount, kReasons };
constexpr std::array<std::string_view, kReasons> kReasonNames = {
    "goat_truncated_header", "goat_bad_version", "goat_bad_type", "goat_truncated_elements",
    "goat_bad_count"};

struct Job {
  uint64_t gradients = 0;
  uint64_t worker_gradients = 0;  // no aggregate flag and count 1: as a worker sent it
  std::map<uint16_t, uint64_t> aggregate_counts;  // count -> aggregates holding that many
  uint64_t to_ps = 0, to_switch = 0, to_any = 0;  // gradients by node id
  uint64_t results = 0, excluded = 0;
  uint64_t resends = 0, overflow = 0;  // of every type
  uint64_t workers = 0;                // union of the gradients' bitmaps
  // (submodel, fragment, round) of every type: a fragment of one round.
  std::set<std::tuple<uint16_t, uint32_t, uint32_t>> fragments;
  std::set<uint32_t> rounds;

  uint64_t Aggregates() const {
    uint64_t n = 0;
    for (const auto& [count, packets] : aggregate_counts) n += packets;
    return n;
  }
  // Neither a worker's nor a switch's: no aggregate flag, and a count other than 1.
  uint64_t OtherGradients() const { return gradients - worker_gradients - Aggregates(); }
};

class GoatAnalyzer final : public ProtocolAnalyzer {
 public:
  explicit GoatAnalyzer(uint16_t port) : port_(port), tally_(kReasonNames) {}

  std::string_view Consume(const DecodedFrame& frame) override;
  void WriteFields(std::ostream& out) const override;
  void WriteText(std::ostream& out) const override;
  void WriteJson(JsonWriter& json) const override;
  Status WriteCsv(const std::string& dir, std::string_view run, bool header) const override;
  uint16_t OwnUdpPort() const override { return port_; }

 private:
  static std::optional<Reason> Malformed(const DecodedFrame& frame);
  void Account(const GoatHeader& h);
  static void WriteJobText(std::ostream& out, uint16_t id, const Job& job);

  uint16_t port_;
  std::map<uint16_t, Job> jobs_;
  HeaderTally tally_;  // malformed frames, and headers cut by the capture (not accounted)
  // The last frame's header bytes (fewer than 28 when cut short), for WriteFields.
  uint8_t last_[kGoatHeaderLen] = {};
  std::size_t last_len_ = 0;
};

std::optional<Reason> GoatAnalyzer::Malformed(const DecodedFrame& frame) {
  if (HeaderTruncated(frame, kGoatHeaderLen)) return kTruncatedHeader;
  if (frame.app_len < kGoatHeaderLen) return std::nullopt;  // cut only by the snap length
  const auto* h = HeaderAt<GoatHeader>(frame.app);
  if (h->Version() != kGoatVersion) return kBadVersion;
  if (h->Type() != GoatType::kGradient && h->Type() != GoatType::kResult) return kBadType;
  // Against the datagram, not the capture; bytes after the elements are allowed, as the switch
  // allows them.
  if (GoatPayloadLen(h->NumElements()) > frame.l4_payload_len) return kTruncatedElements;
  // The count says how many workers' values are in the packet, of every type (a result's too).
  if (h->Count() != std::popcount(h->Bitmap())) return kBadCount;
  return std::nullopt;
}

std::string_view GoatAnalyzer::Consume(const DecodedFrame& frame) {
  last_len_ = std::min(frame.app_len, kGoatHeaderLen);
  std::copy_n(frame.app, last_len_, last_);
  if (const std::optional<Reason> reason = Malformed(frame)) return tally_.Malformed(*reason);
  if (last_len_ < kGoatHeaderLen) {
    tally_.Snapped();
    return {};
  }
  Account(*HeaderAt<GoatHeader>(last_));
  return {};
}

void GoatAnalyzer::Account(const GoatHeader& h) {
  Job& job = jobs_[h.JobId()];
  job.fragments.emplace(h.Submodel(), h.Fragment(), h.Round());
  job.rounds.insert(h.Round());
  job.resends += h.Has(kGoatFlagResend);
  job.overflow += h.Has(kGoatFlagOverflow);
  if (h.Type() == GoatType::kResult) {
    ++job.results;
    job.excluded += h.Has(kGoatFlagExcluded);
    return;
  }
  ++job.gradients;
  job.workers |= h.Bitmap();
  if (h.Has(kGoatFlagAggregate)) {
    ++job.aggregate_counts[h.Count()];
  } else if (h.Count() == 1) {
    ++job.worker_gradients;
  }
  if (h.NodeId() == kGoatNodePs) {
    ++job.to_ps;
  } else if (h.NodeId() == kGoatNodeAny) {
    ++job.to_any;
  } else {
    ++job.to_switch;
  }
}

void GoatAnalyzer::WriteFields(std::ostream& out) const {
  const char* sep = "";
  auto field = [&](std::size_t end, uint64_t value) {
    out << std::exchange(sep, ",");
    if (last_len_ >= end) out << value;
  };
  const auto* h = HeaderAt<GoatHeader>(last_);
  field(1, h->Version());
  field(1, h->ver_type & 0x0F);  // the type as sent, also an unknown one
  field(2, h->flags);
  field(4, h->JobId());
  field(6, h->NodeId());
  field(8, h->Submodel());
  field(12, h->Fragment());
  field(16, h->Round());
  field(18, h->NumElements());
  field(20, h->Count());
  field(28, h->Bitmap());
}

void GoatAnalyzer::WriteJobText(std::ostream& out, uint16_t id, const Job& job) {
  out << "    job " << id << ": " << job.gradients << " gradient(s): worker "
      << job.worker_gradients << ", aggregate " << job.Aggregates();
  if (!job.aggregate_counts.empty()) {
    out << " (count";
    const char* sep = " ";
    for (const auto& [count, n] : job.aggregate_counts) {
      out << std::exchange(sep, ", ") << count << " x" << n;
    }
    out << ")";
  }
  if (job.OtherGradients() > 0) out << ", other " << job.OtherGradients();
  out << "; to the PS " << job.to_ps << ", to a switch " << job.to_switch << ", to any "
      << job.to_any << "; " << job.results << " result(s), " << job.excluded << " excluded; resend "
      << job.resends << ", overflow " << job.overflow << "; " << job.fragments.size()
      << " fragment(s), rounds " << *job.rounds.begin() << ".." << *job.rounds.rbegin() << " ("
      << job.rounds.size() << "); workers 0x" << std::hex << job.workers << std::dec << " ("
      << std::popcount(job.workers) << ")\n";
}

void GoatAnalyzer::WriteText(std::ostream& out) const {
  if (jobs_.empty() && tally_.empty()) return;  // no GOAT in this run
  uint64_t gradients = 0, results = 0;
  for (const auto& [id, job] : jobs_) gradients += job.gradients, results += job.results;
  out << "  goat: udp port " << port_ << ", " << jobs_.size() << " job(s), " << gradients
      << " gradient(s), " << results << " result(s)";
  tally_.WriteText(out);
  out << "\n";
  std::size_t shown = 0;
  for (const auto& [id, job] : jobs_) {
    if (shown++ == kTextJobs) break;
    WriteJobText(out, id, job);
  }
  if (jobs_.size() > kTextJobs) {
    out << "    ... " << jobs_.size() - kTextJobs << " more job(s) (--json, --csv goat.csv)\n";
  }
}

void GoatAnalyzer::WriteJson(JsonWriter& json) const {
  json.BeginObject("goat");
  json.Uint("udp_port", port_);
  tally_.WriteJson(json);
  json.BeginArray("jobs");
  for (const auto& [id, job] : jobs_) {
    json.BeginObject();
    json.Uint("job", id).Uint("gradient_packets", job.gradients);
    json.Uint("worker_packets", job.worker_gradients).Uint("aggregate_packets", job.Aggregates());
    json.Uint("other_gradient_packets", job.OtherGradients());
    json.BeginArray("aggregate_counts");
    for (const auto& [count, n] : job.aggregate_counts) {
      json.BeginObject().Uint("count", count).Uint("packets", n).EndObject();
    }
    json.EndArray();
    json.Uint("to_ps_packets", job.to_ps).Uint("to_switch_packets", job.to_switch);
    json.Uint("to_any_packets", job.to_any);
    json.Uint("result_packets", job.results).Uint("excluded_result_packets", job.excluded);
    json.Uint("resend_packets", job.resends).Uint("overflow_packets", job.overflow);
    json.Uint("fragments", job.fragments.size()).Uint("rounds", job.rounds.size());
    json.Uint("round_min", *job.rounds.begin()).Uint("round_max", *job.rounds.rbegin());
    json.Uint("workers_bitmap", job.workers);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

Status GoatAnalyzer::WriteCsv(const std::string& dir, std::string_view run, bool header) const {
  const std::string path = dir + "/goat.csv";
  std::ofstream out(path, header ? std::ios::trunc : std::ios::app);
  if (header) {
    out << "run,job,gradient_packets,worker_packets,aggregate_packets,other_gradient_packets,"
           "aggregate_count_min,aggregate_count_max,to_ps_packets,to_switch_packets,"
           "to_any_packets,result_packets,excluded_result_packets,resend_packets,"
           "overflow_packets,fragments,rounds,round_min,round_max,workers_bitmap\n";
  }
  for (const auto& [id, job] : jobs_) {
    out << run << ',' << id << ',' << job.gradients << ',' << job.worker_gradients << ','
        << job.Aggregates() << ',' << job.OtherGradients() << ',';
    if (!job.aggregate_counts.empty()) {
      out << job.aggregate_counts.begin()->first << ',' << job.aggregate_counts.rbegin()->first;
    } else {
      out << ',';
    }
    out << ',' << job.to_ps << ',' << job.to_switch << ',' << job.to_any << ',' << job.results
        << ',' << job.excluded << ',' << job.resends << ',' << job.overflow << ','
        << job.fragments.size() << ',' << job.rounds.size() << ',' << *job.rounds.begin() << ','
        << *job.rounds.rbegin() << ',' << job.workers << '\n';
  }
  out.close();
  if (!out) return Status::Error(path + ": cannot write");
  return Status::Ok();
}

std::vector<std::string> GoatFieldNames() {
  return {"goat.version",      "goat.type",     "goat.flags",    "goat.job_id",
          "goat.node_id",      "goat.submodel", "goat.fragment", "goat.round",
          "goat.num_elements", "goat.count",    "goat.bitmap"};
}

void AddGoatOptions(po::options_description& options) {
  AddUdpPortOption(options, "goat-port", kGoatDefaultUdpPort,
                   "GOAT: the UDP destination port of its gradient fragments and results");
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakeGoatAnalyzer(const po::variables_map& vm) {
  Result<uint16_t> port = UdpPortOption(vm, "goat-port");
  if (!port.ok()) return port.status();
  return std::unique_ptr<ProtocolAnalyzer>(new GoatAnalyzer(*port));
}

}  // namespace

// GOAT is read on datagrams to --goat-port (OwnUdpPort), not on --udp-port.
SWEMU_REGISTER_PROTOCOL({.order = 40,
                         .name = "goat",
                         .default_udp_port = 0,
                         .fields = GoatFieldNames,
                         .add_options = AddGoatOptions,
                         .make = MakeGoatAnalyzer});

}  // namespace swemu
