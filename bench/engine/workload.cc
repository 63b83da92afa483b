#include "bench/engine/workload.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace swemu_bench {

BenchShape QuickShape() {
  BenchShape s;
  s.duration_ns = 2'000'000;
  s.long_flows = 8;
  s.incast_fanin = 8;
  s.incast_bytes = 64 * 1024;
  s.incast_period_ns = 250'000;
  return s;
}

std::vector<BenchFlow> PlanBenchFlows(const BenchShape& s) {
  const uint32_t hosts = s.hosts();
  std::vector<BenchFlow> flows;
  for (uint32_t j = 0; j < s.long_flows; ++j) {
    const uint32_t src = j * hosts / s.long_flows;
    flows.push_back({src, (src + hosts / 2) % hosts, 0, 0, 0, kBenchLongPort});
  }
  for (uint64_t r = 0; r * s.incast_period_ns + s.incast_period_ns / 4 < s.duration_ns * 3 / 4;
       ++r) {
    const uint32_t ps = static_cast<uint32_t>((37 * r + 3) % hosts);
    for (uint32_t k = 0; k < s.incast_fanin; ++k) {
      const uint32_t worker = (ps + 1 + k * (hosts / s.incast_fanin)) % hosts;
      flows.push_back({worker, ps, r * s.incast_period_ns + s.incast_period_ns / 4, s.incast_bytes,
                       0, kBenchIncastPort});
    }
  }
  for (std::size_t f = 0; f < flows.size(); ++f) {
    flows[f].src_port = static_cast<uint16_t>(10000 + f);
  }
  return flows;
}

namespace {

// A positive whole number within [1, max], else false.
bool ParseCount(std::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0 || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseBenchArgs(int argc, char** argv, BenchShape* shape, std::string* error) {
  BenchShape s;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--quick") s = QuickShape();
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view name = argv[i];
    if (name == "--quick") continue;
    if (i + 1 >= argc) {
      *error = std::string(name) + ": unknown option or missing value";
      return false;
    }
    const std::string_view text = argv[++i];
    uint64_t v = 0;
    bool ok = true;
    if (name == "--duration-ms") {
      ok = ParseCount(text, 10'000, &v) && (s.duration_ns = v * 1'000'000, true);
    } else if (name == "--long-flows") {
      ok = ParseCount(text, 4096, &v) && (s.long_flows = static_cast<uint32_t>(v), true);
    } else if (name == "--incast-fanin") {
      ok = ParseCount(text, 4096, &v) && (s.incast_fanin = static_cast<uint32_t>(v), true);
    } else if (name == "--incast-kb") {
      ok = ParseCount(text, 1 << 20, &v) && (s.incast_bytes = v * 1024, true);
    } else if (name == "--incast-period-us") {
      ok = ParseCount(text, 10'000'000, &v) && (s.incast_period_ns = v * 1000, true);
    } else if (name == "--ecn-k") {
      ok = ParseCount(text, 100'000, &v) && (s.ecn_k_pkts = static_cast<uint32_t>(v), true);
    } else if (name == "--queue-pkts") {
      ok = ParseCount(text, 100'000, &v) && (s.queue_pkts = static_cast<uint32_t>(v), true);
    } else if (name == "--tors") {
      ok = ParseCount(text, 16, &v) && (s.tors = static_cast<uint32_t>(v), true);
    } else if (name == "--hosts-per-tor") {
      ok = ParseCount(text, 32, &v) && (s.hosts_per_tor = static_cast<uint32_t>(v), true);
    } else if (name == "--spines") {
      ok = ParseCount(text, 8, &v) && (s.spines = static_cast<uint32_t>(v), true);
    } else if (name == "--partitions") {
      ok = ParseCount(text, 64, &v) && v >= 1 && (s.partitions = static_cast<uint32_t>(v), true);
    } else {
      *error = std::string(name) + ": unknown option";
      return false;
    }
    if (!ok) {
      *error = std::string(name) + " " + std::string(text) + ": not a number in range";
      return false;
    }
  }
  if (s.tors < 2 || s.long_flows > s.hosts() || s.incast_fanin >= s.hosts()) {
    *error = "need 2 or more ToRs, long flows <= hosts and incast fan-in < hosts";
    return false;
  }
  *shape = s;
  return true;
}

std::string FormatBenchLine(const char* engine, const BenchShape& s, const BenchResult& r) {
  char line[512];
  std::snprintf(line, sizeof(line),
                "engine=%s wall_s=%.3f events=%llu packet_hops=%llu hops_per_s=%.0f "
                "flows_started=%llu flows_completed=%llu bytes_delivered=%llu "
                "mean_queue_pkts=%.1f ecn_marks=%llu drops=%llu virtual_ms=%.3f hosts=%u",
                engine, r.wall_s, static_cast<unsigned long long>(r.events),
                static_cast<unsigned long long>(r.packet_hops),
                r.wall_s > 0 ? static_cast<double>(r.packet_hops) / r.wall_s : 0.0,
                static_cast<unsigned long long>(r.flows_started),
                static_cast<unsigned long long>(r.flows_completed),
                static_cast<unsigned long long>(r.bytes_delivered), r.mean_queue_pkts,
                static_cast<unsigned long long>(r.ecn_marks),
                static_cast<unsigned long long>(r.drops), s.duration_ns / 1e6, s.hosts());
  return line;
}

}  // namespace swemu_bench
