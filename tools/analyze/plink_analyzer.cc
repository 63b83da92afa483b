// swemu-analyze's PLink decoder: the header of pipeline/wire/plink.h on UDP datagrams to
// --plink-port. Per pair of nodes (sender, receiver; a probe's requester first): the echo probes,
// each reply matched to its request with the round trip between them in the capture's time, and
// the rounds (epochs) probed; AggEngine's chunks, their packets per schedule step, payload bytes,
// chunk ids and plan epochs, and the chunk acks, counted with the chunks they acknowledge (an
// ack's receiver first).
#include <algorithm>
#include <array>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "pipeline/wire/plink.h"
#include "tools/analyze/protocol_analyzer.h"
#include "tools/analyze/time_format.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr std::size_t kTextPairs = 20;  // the rest are in --json and --csv

// In the order they are checked, which the dissector follows too. A probe's offset and any bytes
// after its header are ignored, as PlinkProber ignores them, and so are bytes after a chunk ack's
// header (an ack has none): not malformed. Neither are flag bits other than a chunk's or an
// ack's step, nor a chunk payload that is not a whole number of float32 values.
enum Reason { kTruncatedHeader, kBadVersion, kBadType, kChunkOverrun, kReasons };
constexpr std::array<std::string_view, kReasons> kReasonNames = {
    "plink_truncated_header", "plink_bad_version", "plink_bad_type", "plink_chunk_overrun"};

// Round trips of replies matched to their requests, in the capture's time.
struct RoundTrips {
  uint64_t matched = 0;
  TimeNs min_ns = kNever, max_ns = 0, sum_ns = 0;

  void Add(TimeNs ns) {
    ++matched;
    min_ns = std::min(min_ns, ns);
    max_ns = std::max(max_ns, ns);
    sum_ns += ns;
  }
  void Merge(const RoundTrips& other) {
    matched += other.matched;
    min_ns = std::min(min_ns, other.min_ns);
    max_ns = std::max(max_ns, other.max_ns);
    sum_ns += other.sum_ns;
  }
  TimeNs mean_ns() const { return sum_ns / matched; }  // rounded down to the ns
};

// One pair's summary, or every pair's.
struct Row {
  uint64_t requests = 0, replies = 0;
  RoundTrips rtt;                  // and unmatched_replies: by Summarize()
  uint64_t unmatched_replies = 0;  // no unanswered request of their own before them
  std::set<uint16_t> probe_epochs;
  uint64_t chunk_packets = 0, chunk_bytes = 0;
  uint64_t chunk_ids = 0;  // distinct (epoch, chunk id)
  std::set<uint16_t> chunk_epochs;
  // Chunk packets by schedule step (PlinkStep, flags bits 1-0).
  std::array<uint64_t, kPlinkStepMask + 1> chunk_steps{};
  // Acks of this pair's chunk packets (sent receiver -> sender), duplicates included.
  uint64_t chunk_acks = 0;

  uint64_t unanswered() const { return requests - rtt.matched; }
  void Merge(const Row& other) {
    requests += other.requests;
    replies += other.replies;
    rtt.Merge(other.rtt);
    unmatched_replies += other.unmatched_replies;
    probe_epochs.insert(other.probe_epochs.begin(), other.probe_epochs.end());
    chunk_packets += other.chunk_packets;
    chunk_bytes += other.chunk_bytes;
    for (std::size_t step = 0; step < chunk_steps.size(); ++step) {
      chunk_steps[step] += other.chunk_steps[step];
    }
    chunk_ids += other.chunk_ids;
    chunk_epochs.insert(other.chunk_epochs.begin(), other.chunk_epochs.end());
    chunk_acks += other.chunk_acks;
  }
};

// (sender, receiver); a probe's (requester, responder); a chunk ack's (receiver, sender), the
// direction of the chunk it acknowledges.
using PairKey = std::pair<uint16_t, uint16_t>;

struct Pair {
  Row row;
  std::set<std::pair<uint16_t, uint32_t>> chunks;  // (epoch, chunk id)
};

// A probe as captured: a request from `pair.first`, or a reply to it.
struct Probe {
  TimeNs ts_ns;
  PairKey pair;
  uint16_t epoch;
  uint32_t seq;
  bool reply;
};

struct Summary {
  std::map<PairKey, Row> pairs;
  Row all;
};

class PlinkAnalyzer final : public ProtocolAnalyzer {
 public:
  explicit PlinkAnalyzer(uint16_t port) : port_(port) {}

  std::string_view Consume(const DecodedFrame& frame) override;
  void WriteFields(std::ostream& out) const override;
  void WriteText(std::ostream& out) const override;
  void WriteJson(JsonWriter& json) const override;
  Status WriteCsv(const std::string& dir, std::string_view run, bool header) const override;
  uint16_t OwnUdpPort() const override { return port_; }

 private:
  static std::optional<Reason> Malformed(const DecodedFrame& frame);
  void Account(const PlinkFields& f, const DecodedFrame& frame);
  // The probes in time order (a run's pcaps are read one after the other), each reply matched
  // to the earliest unanswered request before it with the same requester, responder, epoch and
  // seq. A packet captured at two points is two requests (or replies), which pair up the same
  // way.
  Summary Summarize() const;

  uint16_t port_;
  std::map<PairKey, Pair> pairs_;
  std::vector<Probe> probes_;
  HeaderTally tally_{kReasonNames};
  // The last frame's header bytes (fewer than 24 when cut short), for WriteFields.
  uint8_t last_[kPlinkHeaderLen] = {};
  std::size_t last_len_ = 0;
};

std::optional<Reason> PlinkAnalyzer::Malformed(const DecodedFrame& frame) {
  if (HeaderTruncated(frame, kPlinkHeaderLen)) return kTruncatedHeader;
  if (frame.app_len < kPlinkHeaderLen) return std::nullopt;  // cut by the capture
  const uint8_t* h = frame.app;
  if ((h[0] >> 4) != kPlinkVersion) return kBadVersion;
  const uint8_t type = h[0] & 0x0F;
  if (type > kPlinkLastType) return kBadType;
  // A chunk's payload, in the datagram, must end within the chunk's size (its stamp).
  if (type == static_cast<uint8_t>(PlinkType::kChunk) &&
      uint64_t{LoadBe32(h + 12)} + (frame.l4_payload_len - kPlinkHeaderLen) >
          ((uint64_t{LoadBe32(h + 16)} << 32) | LoadBe32(h + 20))) {
    return kChunkOverrun;
  }
  return std::nullopt;
}

std::string_view PlinkAnalyzer::Consume(const DecodedFrame& frame) {
  last_len_ = std::min(frame.app_len, kPlinkHeaderLen);
  std::copy_n(frame.app, last_len_, last_);
  if (const std::optional<Reason> reason = Malformed(frame)) return tally_.Malformed(*reason);
  if (last_len_ < kPlinkHeaderLen) {
    tally_.Snapped();
    return {};
  }
  Account(*PlinkFields::Decode(last_, last_len_), frame);
  return {};
}

void PlinkAnalyzer::Account(const PlinkFields& f, const DecodedFrame& frame) {
  if (f.type == PlinkType::kChunk) {
    Pair& pair = pairs_[{f.sender, f.receiver}];
    ++pair.row.chunk_packets;
    ++pair.row.chunk_steps[f.flags & kPlinkStepMask];
    pair.row.chunk_bytes += frame.l4_payload_len - kPlinkHeaderLen;
    pair.chunks.emplace(f.epoch, f.seq);
    pair.row.chunk_ids = pair.chunks.size();
    pair.row.chunk_epochs.insert(f.epoch);
    return;
  }
  if (f.type == PlinkType::kChunkAck) {
    ++pairs_[{f.receiver, f.sender}].row.chunk_acks;
    return;
  }
  const bool reply = f.type == PlinkType::kProbeReply;
  const PairKey key = reply ? PairKey{f.receiver, f.sender} : PairKey{f.sender, f.receiver};
  Row& row = pairs_[key].row;
  ++(reply ? row.replies : row.requests);
  row.probe_epochs.insert(f.epoch);
  probes_.push_back({frame.ts_ns, key, f.epoch, f.seq, reply});
}

Summary PlinkAnalyzer::Summarize() const {
  Summary s;
  for (const auto& [key, pair] : pairs_) s.pairs[key] = pair.row;
  std::vector<Probe> by_time = probes_;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const Probe& a, const Probe& b) { return a.ts_ns < b.ts_ns; });
  // Unanswered requests' times, oldest first, by (requester, responder, epoch, seq).
  std::map<std::tuple<PairKey, uint16_t, uint32_t>, std::deque<TimeNs>> pending;
  for (const Probe& p : by_time) {
    std::deque<TimeNs>& waiting = pending[{p.pair, p.epoch, p.seq}];
    Row& row = s.pairs[p.pair];
    if (!p.reply) {
      waiting.push_back(p.ts_ns);
    } else if (waiting.empty()) {
      ++row.unmatched_replies;
    } else {
      row.rtt.Add(p.ts_ns - waiting.front());
      waiting.pop_front();
    }
  }
  for (const auto& [key, row] : s.pairs) s.all.Merge(row);
  return s;
}

void PlinkAnalyzer::WriteFields(std::ostream& out) const {
  const char* sep = "";
  auto field = [&](std::size_t end, uint64_t value) {
    out << std::exchange(sep, ",");
    if (last_len_ >= end) out << value;
  };
  field(1, last_[0] >> 4);
  field(1, last_[0] & 0x0F);  // the type as sent, also an unknown one
  field(2, last_[1]);
  field(4, LoadBe16(last_ + 2));
  field(6, LoadBe16(last_ + 4));
  field(8, LoadBe16(last_ + 6));
  field(12, LoadBe32(last_ + 8));
  field(16, LoadBe32(last_ + 12));
  field(24, (uint64_t{LoadBe32(last_ + 16)} << 32) | LoadBe32(last_ + 20));
}

void WriteEpochsText(std::ostream& out, const std::set<uint16_t>& epochs) {
  out << "epochs " << *epochs.begin() << ".." << *epochs.rbegin() << " (" << epochs.size() << ")";
}

void WriteRowText(std::ostream& out, const Row& row) {
  out << "probes: ";
  if (row.requests + row.replies == 0) {
    out << "none";
  } else {
    out << "requests " << row.requests << ", replies " << row.replies << ", matched "
        << row.rtt.matched << ", unanswered " << row.unanswered() << ", unmatched replies "
        << row.unmatched_replies << ", ";
    if (row.rtt.matched > 0) {
      out << "round trip min/mean/max " << FormatMicros(row.rtt.min_ns) << "/"
          << FormatMicros(row.rtt.mean_ns()) << "/" << FormatMicros(row.rtt.max_ns) << " us, ";
    }
    WriteEpochsText(out, row.probe_epochs);
  }
  out << "; chunks: ";
  if (row.chunk_packets == 0) {
    out << "none";
  } else {
    out << "packets " << row.chunk_packets << " (steps " << row.chunk_steps[0] << "/"
        << row.chunk_steps[1] << "/" << row.chunk_steps[2] << "/" << row.chunk_steps[3]
        << "), bytes " << row.chunk_bytes << ", chunk ids " << row.chunk_ids << ", ";
    WriteEpochsText(out, row.chunk_epochs);
  }
  if (row.chunk_packets + row.chunk_acks > 0) out << "; chunk acks " << row.chunk_acks;
  out << "\n";
}

void PlinkAnalyzer::WriteText(std::ostream& out) const {
  if (pairs_.empty() && tally_.empty()) return;  // no PLink in this run
  const Summary s = Summarize();
  out << "  plink: udp port " << port_ << ", " << s.pairs.size() << " pair(s), "
      << s.all.requests + s.all.replies << " probe(s), " << s.all.chunk_packets
      << " chunk packet(s), " << s.all.chunk_acks << " chunk ack(s)";
  tally_.WriteText(out);
  out << "\n    all: ";
  WriteRowText(out, s.all);
  std::size_t shown = 0;
  for (const auto& [key, row] : s.pairs) {
    if (shown++ == kTextPairs) break;
    out << "    " << key.first << " -> " << key.second << ": ";
    WriteRowText(out, row);
  }
  if (s.pairs.size() > kTextPairs) {
    out << "    ... " << s.pairs.size() - kTextPairs << " more pair(s) (--json, --csv plink.csv)\n";
  }
}

void WriteEpochsJson(JsonWriter& json, const std::set<uint16_t>& epochs) {
  json.Uint("epochs", epochs.size());
  if (!epochs.empty()) json.Uint("epoch_min", *epochs.begin()).Uint("epoch_max", *epochs.rbegin());
}

void WriteRowJson(JsonWriter& json, const Row& row) {
  json.BeginObject("probes");
  json.Uint("requests", row.requests).Uint("replies", row.replies);
  json.Uint("matched", row.rtt.matched).Uint("unanswered", row.unanswered());
  json.Uint("unmatched_replies", row.unmatched_replies);
  if (row.rtt.matched > 0) {
    json.Uint("rtt_min_ns", row.rtt.min_ns).Uint("rtt_mean_ns", row.rtt.mean_ns());
    json.Uint("rtt_max_ns", row.rtt.max_ns);
  }
  WriteEpochsJson(json, row.probe_epochs);
  json.EndObject();
  json.BeginObject("chunks");
  json.Uint("packets", row.chunk_packets);
  json.BeginArray("step_packets");
  for (uint64_t n : row.chunk_steps) json.Uint({}, n);
  json.EndArray();
  json.Uint("bytes", row.chunk_bytes).Uint("chunk_ids", row.chunk_ids);
  json.Uint("acks", row.chunk_acks);
  WriteEpochsJson(json, row.chunk_epochs);
  json.EndObject();
}

void PlinkAnalyzer::WriteJson(JsonWriter& json) const {
  const Summary s = Summarize();
  json.BeginObject("plink");
  json.Uint("udp_port", port_);
  tally_.WriteJson(json);
  json.BeginObject("all");
  WriteRowJson(json, s.all);
  json.EndObject();
  json.BeginArray("pairs");
  for (const auto& [key, row] : s.pairs) {
    json.BeginObject().Uint("sender", key.first).Uint("receiver", key.second);
    WriteRowJson(json, row);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

void WriteEpochsCsv(std::ostream& out, const std::set<uint16_t>& epochs) {
  out << ',' << epochs.size() << ',';
  if (epochs.empty()) {
    out << ',';
  } else {
    out << *epochs.begin() << ',' << *epochs.rbegin();
  }
}

Status PlinkAnalyzer::WriteCsv(const std::string& dir, std::string_view run, bool header) const {
  const std::string path = dir + "/plink.csv";
  std::ofstream out(path, header ? std::ios::trunc : std::ios::app);
  if (header) {
    out << "run,sender,receiver,requests,replies,matched,unanswered,unmatched_replies,"
           "rtt_min_us,rtt_mean_us,rtt_max_us,probe_epochs,probe_epoch_min,probe_epoch_max,"
           "chunk_packets,chunk_bytes,chunk_ids,chunk_epochs,chunk_epoch_min,chunk_epoch_max,"
           "chunk_acks,chunk_step0_packets,chunk_step1_packets,chunk_step2_packets,"
           "chunk_step3_packets\n";
  }
  for (const auto& [key, row] : Summarize().pairs) {
    out << run << ',' << key.first << ',' << key.second << ',' << row.requests << ',' << row.replies
        << ',' << row.rtt.matched << ',' << row.unanswered() << ',' << row.unmatched_replies << ',';
    if (row.rtt.matched > 0) {
      out << FormatMicros(row.rtt.min_ns) << ',' << FormatMicros(row.rtt.mean_ns()) << ','
          << FormatMicros(row.rtt.max_ns);
    } else {
      out << ",,";
    }
    WriteEpochsCsv(out, row.probe_epochs);
    out << ',' << row.chunk_packets << ',' << row.chunk_bytes << ',' << row.chunk_ids;
    WriteEpochsCsv(out, row.chunk_epochs);
    out << ',' << row.chunk_acks;
    for (uint64_t n : row.chunk_steps) out << ',' << n;
    out << '\n';
  }
  out.close();
  if (!out) return Status::Error(path + ": cannot write");
  return Status::Ok();
}

std::vector<std::string> PlinkFieldNames() {
  return {"plink.version", "plink.type", "plink.flags",  "plink.sender", "plink.receiver",
          "plink.epoch",   "plink.seq",  "plink.offset", "plink.stamp"};
}

void AddPlinkOptions(po::options_description& options) {
  AddUdpPortOption(options, "plink-port", kPlinkDefaultUdpPort,
                   "PLink: the UDP destination port of its probes and chunks");
}

Result<std::unique_ptr<ProtocolAnalyzer>> MakePlinkAnalyzer(const po::variables_map& vm) {
  Result<uint16_t> port = UdpPortOption(vm, "plink-port");
  if (!port.ok()) return port.status();
  return std::unique_ptr<ProtocolAnalyzer>(new PlinkAnalyzer(*port));
}

}  // namespace

// PLink is read on datagrams to --plink-port (OwnUdpPort), not on --udp-port.
SWEMU_REGISTER_PROTOCOL({.order = 50,
                         .name = "plink",
                         .default_udp_port = 0,
                         .fields = PlinkFieldNames,
                         .add_options = AddPlinkOptions,
                         .make = MakePlinkAnalyzer});

}  // namespace swemu
