#include "tools/analyze/flow_table.h"

#include <algorithm>
#include <cstdio>

#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "tools/analyze/time_format.h"

namespace swemu {

std::string FlowKey::ToString() const {
  if (ether_type != 0) {
    char text[32];
    std::snprintf(text, sizeof(text), "ethertype 0x%04x", ether_type);
    return text;
  }
  const char* name = proto == kIpProtoUdp ? "udp" : proto == kIpProtoTcp ? "tcp" : nullptr;
  std::string text = name != nullptr ? name : "ip proto " + std::to_string(proto);
  text += " " + FormatIpv4(src);
  if (sport != 0 || dport != 0) text += ":" + std::to_string(sport);
  text += " > " + FormatIpv4(dst);
  if (sport != 0 || dport != 0) text += ":" + std::to_string(dport);
  return text;
}

double FlowStats::RateBps() const {
  const TimeNs span = last_ns - first_ns;
  return span == 0 ? 0.0 : static_cast<double>(bytes) * 8e9 / static_cast<double>(span);
}

void FlowTable::Add(const DecodedFrame& frame, uint64_t bin) {
  FlowKey key;
  if (frame.has_ipv4) {
    key.src = frame.ip_src;
    key.dst = frame.ip_dst;
    key.proto = frame.ip_proto;
    if (frame.has_l4 && !frame.ip_fragment) {
      key.sport = frame.sport;
      key.dport = frame.dport;
    }
  } else {
    key.ether_type = frame.ether_type == 0 ? 0xFFFF : frame.ether_type;  // 0xFFFF: unreadable
  }
  FlowStats& f = flows_[key];
  if (f.packets == 0) {
    f.first_ns = frame.ts_ns;
  } else if (frame.ts_ns >= f.last_ns) {
    f.gaps.Record(frame.ts_ns - f.last_ns);
  }
  f.last_ns = std::max(f.last_ns, frame.ts_ns);
  ++f.packets;
  f.bytes += frame.len;
  if (f.series.empty() || f.series.back().bin != bin) f.series.push_back({bin, 0, 0});
  ++f.series.back().frames;
  f.series.back().bytes += frame.len;
  if (!frame.malformed.empty()) ++f.malformed;
  if (frame.has_ipv4) {
    const uint8_t ecn = TosEcn(frame.tos);
    if (ecn == kEcnCe) ++f.ce;
    if (ecn == kEcnEct0 || ecn == kEcnEct1) ++f.ect;
  }
  if (frame.has_tcp) {
    const uint32_t end = frame.tcp_seq + frame.l4_payload_len +
                         ((frame.tcp_flags & (kTcpSyn | kTcpFin)) != 0 ? 1 : 0);
    if (f.have_order && static_cast<int32_t>(frame.tcp_seq - f.highest) < 0 && end != frame.tcp_seq) {
      ++f.reordered;
    }
    if (f.have_order && static_cast<int32_t>(frame.tcp_seq - f.highest) > 0) ++f.holes;
    if (!f.have_order || static_cast<int32_t>(end - f.highest) > 0) f.highest = end;
    f.have_order = true;
  } else if (frame.has_ipv4 && frame.ip_proto == kIpProtoUdp) {
    const auto step = static_cast<int16_t>(frame.ip_id - f.highest);
    if (f.have_order && step < 0) ++f.reordered;
    if (!f.have_order || step > 0) f.highest = frame.ip_id;
    f.have_order = true;
  }
}

namespace {

std::vector<std::pair<const FlowKey*, const FlowStats*>> ByBytes(
    const std::map<FlowKey, FlowStats>& flows) {
  std::vector<std::pair<const FlowKey*, const FlowStats*>> order;
  for (const auto& [key, stats] : flows) order.emplace_back(&key, &stats);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
  return order;
}

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

void FlowTable::WriteText(std::ostream& out, std::size_t limit) const {
  out << "  flows: " << flows_.size();
  if (flows_.size() > limit) out << " (the " << limit << " with the most bytes; all in --csv/--json)";
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "    %-44s %10s %12s %10s %7s %10s %9s %7s\n", "flow",
                "packets", "bytes", "Mbit/s", "CE %", "max gap us", "reorder", "holes");
  out << line;
  std::size_t shown = 0;
  for (const auto& [key, f] : ByBytes(flows_)) {
    if (shown++ == limit) break;
    std::snprintf(line, sizeof(line), "    %-44s %10llu %12llu %10.3f %7.2f %10.1f %9llu %7llu\n",
                  key->ToString().c_str(), static_cast<unsigned long long>(f->packets),
                  static_cast<unsigned long long>(f->bytes), f->RateBps() / 1e6,
                  100.0 * Share(f->ce, f->packets), static_cast<double>(f->gaps.max()) / 1e3,
                  static_cast<unsigned long long>(f->reordered),
                  static_cast<unsigned long long>(f->holes));
    out << line;
  }
}

void FlowTable::WriteJson(JsonWriter& json) const {
  json.BeginArray("flows");
  for (const auto& [key, f] : ByBytes(flows_)) {
    json.BeginObject();
    json.String("flow", key->ToString());
    json.Uint("packets", f->packets).Uint("bytes", f->bytes);
    json.Uint("first_ns", f->first_ns).Uint("last_ns", f->last_ns);
    json.Double("rate_bps", f->RateBps());
    json.Uint("ect", f->ect).Uint("ce", f->ce).Double("ce_share", Share(f->ce, f->packets));
    json.Uint("max_gap_ns", f->gaps.max()).Uint("p99_gap_ns", f->gaps.Percentile(0.99));
    json.Uint("reordered", f->reordered).Uint("tcp_holes", f->holes);
    json.Uint("malformed", f->malformed);
    json.EndObject();
  }
  json.EndArray();
}

void FlowTable::WriteSeriesCsv(std::ostream& out, std::string_view run, TimeNs bin_ns,
                               std::size_t limit) const {
  std::size_t shown = 0;
  char line[128];
  for (const auto& [key, f] : ByBytes(flows_)) {
    if (shown++ == limit) break;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> bins;  // one flow may be in several files
    for (const FlowStats::Bin& b : f->series) {
      bins[b.bin].first += b.frames;
      bins[b.bin].second += b.bytes;
    }
    const std::string name = "\"" + key->ToString() + "\"";
    const uint64_t last = bins.empty() ? 0 : bins.rbegin()->first;
    for (uint64_t i = 0; i <= last; ++i) {
      const auto it = bins.find(i);
      const uint64_t frames = it == bins.end() ? 0 : it->second.first;
      const uint64_t bytes = it == bins.end() ? 0 : it->second.second;
      std::snprintf(line, sizeof(line), ",%.9f,%llu,%llu,%.6f\n",
                    static_cast<double>(i * bin_ns) / 1e9, static_cast<unsigned long long>(frames),
                    static_cast<unsigned long long>(bytes),
                    static_cast<double>(bytes) * 8e3 / static_cast<double>(bin_ns));
      out << run << ',' << name << line;
    }
  }
}

Status FlowTable::WriteCsv(std::ostream& out, std::string_view run, bool header) const {
  if (header) {
    out << "run,flow,packets,bytes,first_s,last_s,rate_Mbps,ect_packets,ce_packets,ce_share,"
           "max_gap_us,p99_gap_us,reordered_packets,tcp_holes,malformed_packets\n";
  }
  for (const auto& [key, f] : ByBytes(flows_)) {
    char line[512];
    // Times exact to the nanosecond (a double holds only ~16 digits of an epoch time).
    std::snprintf(line, sizeof(line), ",%llu,%llu,%s,%s,%.6f,%llu,%llu,%.6f,%.3f,%.3f,%llu,%llu,%llu\n",
                  static_cast<unsigned long long>(f->packets),
                  static_cast<unsigned long long>(f->bytes),
                  FormatSeconds(f->first_ns).c_str(), FormatSeconds(f->last_ns).c_str(),
                  f->RateBps() / 1e6, static_cast<unsigned long long>(f->ect),
                  static_cast<unsigned long long>(f->ce), Share(f->ce, f->packets),
                  static_cast<double>(f->gaps.max()) / 1e3,
                  static_cast<double>(f->gaps.Percentile(0.99)) / 1e3,
                  static_cast<unsigned long long>(f->reordered),
                  static_cast<unsigned long long>(f->holes),
                  static_cast<unsigned long long>(f->malformed));
    out << run << ",\"" << key->ToString() << "\"" << line;
  }
  return out ? Status::Ok() : Status::Error("write failed");
}

}  // namespace swemu
