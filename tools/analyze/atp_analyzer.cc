// swemu-analyze's ATP decoder: the header of pipeline/wire/atp.h, per job and per sequence
// number: gradient and parameter packets, the bitmaps seen, completion, resends, and the
// aggregator collisions the trace implies.
#include <bit>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "pipeline/control/units.h"
#include "pipeline/wire/atp.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

struct SeqStats {
  uint32_t gradients = 0;
  uint32_t params = 0;
  uint32_t resends = 0;
  uint32_t ecn = 0;
  uint32_t bitmaps_seen = 0;  // distinct bitmaps among the gradients
  uint32_t union_bitmap = 0;
  uint32_t fan_in = 0;  // the largest fan-in a gradient announced
  bool collided = false;
  bool complete = false;  // the union covers the fan-in, or a parameter packet went by
  TimeNs first_ns = 0, done_ns = 0;
  std::set<uint32_t> bitmaps;  // while counting distinct bitmaps (small: one per worker mostly)
};

struct JobStats {
  uint64_t gradients = 0, params = 0, resends = 0, ecn = 0, overflow = 0, floats = 0;
  uint64_t collisions = 0;
  uint32_t workers = 0;  // union of every bitmap
  std::map<uint32_t, SeqStats> seqs;
};

class AtpAnalyzer final : public ProtocolAnalyzer {
 public:
  explicit AtpAnalyzer(uint32_t aggregators) : aggregators_(aggregators) {}

  std::string_view Consume(const DecodedFrame& frame) override;
  void WriteFields(std::ostream& out) const override;
  void WriteText(std::ostream& out) const override;
  void WriteJson(JsonWriter& json) const override;
  Status WriteCsv(const std::string& dir, std::string_view run, bool header) const override;

 private:
  void Account(const AtpHeader& h, TimeNs ts);
  // Predicts the switch's aggregator use: an aggregator is held from a seq's first gradient
  // until it completes (its parameter packet, or the whole fan-in seen in a trace without
  // parameter packets); another seq's gradient arriving meanwhile collides.
  void Occupy(uint16_t job, uint32_t seq, JobStats& stats, SeqStats& s);
  void Release(uint16_t job, uint32_t seq);

  uint32_t aggregators_;
  std::map<uint16_t, JobStats> jobs_;
  std::unordered_map<uint32_t, uint64_t> occupied_;  // aggregator index -> AtpAggregatorId
  uint64_t malformed_ = 0;
  // The last frame's header bytes, for WriteFields (fewer than 16 when cut short).
  uint8_t last_[kAtpHeaderLen] = {};
  std::size_t last_len_ = 0;
};

std::string_view AtpAnalyzer::Consume(const DecodedFrame& frame) {
  last_len_ = std::min(frame.app_len, kAtpHeaderLen);
  std::copy_n(frame.app, last_len_, last_);
  // A header cut by the snap length is merely short; cut in the frame itself it is malformed.
  const bool cut_by_capture = frame.snapped();
  if (frame.app_len < kAtpHeaderLen) {
    if (frame.l4_payload_len >= kAtpHeaderLen && cut_by_capture) return {};
    ++malformed_;
    return "atp_truncated_header";
  }
  const auto* h = HeaderAt<AtpHeader>(frame.app);
  if (h->Version() != kAtpVersion) {
    ++malformed_;
    return "atp_bad_version";
  }
  Account(*h, frame.ts_ns);
  if (AtpPayloadLen(h->NumElements()) > frame.l4_payload_len) {
    ++malformed_;
    return "atp_truncated_elements";
  }
  return {};
}

void AtpAnalyzer::Account(const AtpHeader& h, TimeNs ts) {
  JobStats& job = jobs_[h.JobId()];
  SeqStats& s = job.seqs[h.Seq()];
  if (s.gradients + s.params == 0) s.first_ns = ts;
  if (h.Has(kAtpFlagResend)) ++s.resends, ++job.resends;
  if (h.Has(kAtpFlagEcn)) ++s.ecn, ++job.ecn;
  if (h.Has(kAtpFlagOverflow)) ++job.overflow;
  if (h.Has(kAtpFlagFloat)) ++job.floats;
  if (h.Has(kAtpFlagParam)) {
    ++s.params;
    ++job.params;
    if (!s.complete) s.done_ns = ts;
    s.complete = true;
    Release(h.JobId(), h.Seq());
    return;
  }
  ++s.gradients;
  ++job.gradients;
  job.workers |= h.Bitmap();
  if (s.bitmaps.insert(h.Bitmap()).second) ++s.bitmaps_seen;
  s.union_bitmap |= h.Bitmap();
  s.fan_in = std::max<uint32_t>({s.fan_in, h.fan_in0, h.fan_in1});
  if (!s.complete) Occupy(h.JobId(), h.Seq(), job, s);
  if (!s.complete && s.fan_in > 0 &&
      static_cast<uint32_t>(std::popcount(s.union_bitmap)) >= s.fan_in) {
    s.complete = true;
    s.done_ns = ts;
    Release(h.JobId(), h.Seq());
  }
}

void AtpAnalyzer::Occupy(uint16_t job, uint32_t seq, JobStats& stats, SeqStats& s) {
  const uint64_t id = AtpAggregatorId(job, seq);
  auto [it, inserted] = occupied_.try_emplace(AtpAggregatorIndex(job, seq, aggregators_), id);
  if (inserted || it->second == id) return;
  if (!s.collided) ++stats.collisions;
  s.collided = true;
}

void AtpAnalyzer::Release(uint16_t job, uint32_t seq) {
  auto it = occupied_.find(AtpAggregatorIndex(job, seq, aggregators_));
  if (it != occupied_.end() && it->second == AtpAggregatorId(job, seq)) occupied_.erase(it);
}

void AtpAnalyzer::WriteFields(std::ostream& out) const {
  auto field = [&](std::size_t end, uint64_t value) {
    if (last_len_ >= end) out << value;
  };
  const auto* h = HeaderAt<AtpHeader>(last_);
  field(1, h->Version());
  out << ',';
  field(1, h->Flags());
  out << ',';
  field(2, h->worker_id);
  out << ',';
  field(3, h->fan_in0);
  out << ',';
  field(4, h->fan_in1);
  out << ',';
  field(6, h->JobId());
  out << ',';
  field(8, h->NumElements());
  out << ',';
  field(12, h->Seq());
  out << ',';
  field(16, h->Bitmap());
}

struct JobTotals {
  uint64_t seqs = 0, complete = 0, collided = 0, split = 0;
  // Seqs between the lowest and the highest seen that never appeared: a job's seqs are
  // consecutive, so these were lost before the capture point (or all aggregated elsewhere).
  uint64_t missing = 0;
};

JobTotals Totals(const JobStats& job) {
  JobTotals t;
  for (const auto& [seq, s] : job.seqs) {
    ++t.seqs;
    t.complete += s.complete;
    t.collided += s.collided;
    t.split += s.bitmaps_seen > 1 && s.gradients > 1;
  }
  if (!job.seqs.empty()) {
    t.missing = uint64_t{job.seqs.rbegin()->first} - job.seqs.begin()->first + 1 - t.seqs;
  }
  return t;
}

void AtpAnalyzer::WriteText(std::ostream& out) const {
  if (jobs_.empty() && malformed_ == 0) return;  // no ATP in this run
  out << "  atp: " << jobs_.size() << " job(s), aggregators " << aggregators_
      << " (collisions predicted with that many)";
  if (malformed_ > 0) out << ", " << malformed_ << " malformed header(s)";
  out << "\n";
  for (const auto& [id, job] : jobs_) {
    const JobTotals t = Totals(job);
    out << "    job " << id << ": workers 0x" << std::hex << job.workers << std::dec << " ("
        << std::popcount(job.workers) << "), seqs " << t.seqs << ", complete " << t.complete
        << ", incomplete " << t.seqs - t.complete << ", missing " << t.missing
        << "; gradient packets " << job.gradients
        << ", parameter packets " << job.params << ", resends " << job.resends
        << ", collisions " << job.collisions << ", ecn " << job.ecn;
    if (job.overflow > 0) out << ", overflow " << job.overflow;
    out << "\n";
  }
}

void AtpAnalyzer::WriteJson(JsonWriter& json) const {
  json.BeginObject("atp");
  json.Uint("aggregators", aggregators_).Uint("malformed", malformed_);
  json.BeginArray("jobs");
  for (const auto& [id, job] : jobs_) {
    const JobTotals t = Totals(job);
    json.BeginObject();
    json.Uint("job", id).Uint("workers_bitmap", job.workers);
    json.Uint("seqs", t.seqs).Uint("complete", t.complete).Uint("incomplete", t.seqs - t.complete);
    json.Uint("missing", t.missing);
    json.Uint("gradient_packets", job.gradients).Uint("parameter_packets", job.params);
    json.Uint("resends", job.resends).Uint("collisions", job.collisions);
    json.Uint("ecn", job.ecn).Uint("overflow", job.overflow).Uint("float", job.floats);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

Status AtpAnalyzer::WriteCsv(const std::string& dir, std::string_view run, bool header) const {
  const std::string jobs_path = dir + "/atp_jobs.csv";
  const std::string seqs_path = dir + "/atp_seqs.csv";
  std::ofstream jobs(jobs_path, header ? std::ios::trunc : std::ios::app);
  std::ofstream seqs(seqs_path, header ? std::ios::trunc : std::ios::app);
  if (header) {
    jobs << "run,job,workers_bitmap,seqs,complete,incomplete,missing,gradient_packets,parameter_packets,"
            "resends,collisions,ecn_packets,overflow_packets\n";
    seqs << "run,job,seq,gradient_packets,parameter_packets,resends,ecn_packets,bitmaps_seen,"
            "union_bitmap,fan_in,complete,collided,first_s,completion_us\n";
  }
  for (const auto& [id, job] : jobs_) {
    const JobTotals t = Totals(job);
    jobs << run << ',' << id << ',' << job.workers << ',' << t.seqs << ',' << t.complete << ','
         << t.seqs - t.complete << ',' << t.missing << ',' << job.gradients << ',' << job.params << ',' << job.resends
         << ',' << job.collisions << ',' << job.ecn << ',' << job.overflow << '\n';
    for (const auto& [seq, s] : job.seqs) {
      char times[64] = ",";
      if (s.complete) {
        std::snprintf(times, sizeof(times), "%.9f,%.3f", static_cast<double>(s.first_ns) / 1e9,
                      static_cast<double>(s.done_ns - s.first_ns) / 1e3);
      } else {
        std::snprintf(times, sizeof(times), "%.9f,", static_cast<double>(s.first_ns) / 1e9);
      }
      seqs << run << ',' << id << ',' << seq << ',' << s.gradients << ',' << s.params << ','
           << s.resends << ',' << s.ecn << ',' << s.bitmaps_seen << ',' << s.union_bitmap << ','
           << s.fan_in << ',' << s.complete << ',' << s.collided << ',' << times << '\n';
    }
  }
  jobs.close();
  seqs.close();
  if (!jobs) return Status::Error(jobs_path + ": cannot write");
  if (!seqs) return Status::Error(seqs_path + ": cannot write");
  return Status::Ok();
}

std::vector<std::string> AtpFieldNames() {
  return {"atp.version", "atp.flags",        "atp.worker_id", "atp.fan_in0", "atp.fan_in1",
          "atp.job_id",  "atp.num_elements", "atp.seq",       "atp.bitmap"};
}

void AddAtpOptions(po::options_description& options) {
  options.add_options()(
      "atp-aggregators",
      po::value<std::string>()->default_value(std::to_string(kAtpDefaultAggregators)),
      "ATP: aggregators per switch, to predict collisions (the atp program's [program] "
      "aggregators)");
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakeAtpAnalyzer(const po::variables_map& vm) {
  Result<uint64_t> n = ParseUint(vm["atp-aggregators"].as<std::string>(), 1, 1u << 24);
  if (!n.ok()) return Status::Error("--atp-aggregators: " + n.message());
  return std::unique_ptr<ProtocolAnalyzer>(new AtpAnalyzer(static_cast<uint32_t>(*n)));
}

}  // namespace

SWEMU_REGISTER_PROTOCOL({.order = 10,
                         .name = "atp",
                         .default_udp_port = kAtpDefaultUdpPort,
                         .fields = AtpFieldNames,
                         .add_options = AddAtpOptions,
                         .make = MakeAtpAnalyzer});

}  // namespace swemu
