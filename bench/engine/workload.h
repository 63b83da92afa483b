#pragma once
// The work both sides of the engine benchmark run (bench/engine/README.md): a leaf-spine, its
// queues and ECN threshold, and the same flows: long DCTCP flows plus a parameter-server incast.
// Plain C++ so that the ns-3 side (which links nothing of swemu) includes it too; one place for
// the shape, the flows, the options and the result line.
#include <cstdint>
#include <string>
#include <vector>

namespace swemu_bench {

struct BenchShape {
  uint32_t spines = 4;
  uint32_t tors = 8;
  uint32_t hosts_per_tor = 16;
  uint64_t link_bps = 100'000'000'000;
  uint64_t link_delay_ns = 2'000;  // every link, host links too
  uint32_t ecn_k_pkts = 65;        // mark at K packets queued (DCTCP's K)
  uint32_t queue_pkts = 350;       // per egress queue (512 KB of 1514-byte frames)
  uint64_t min_rto_ns = 10'000'000;
  uint64_t duration_ns = 5'000'000;  // virtual time both run
  uint32_t long_flows = 32;    // from every (hosts / long_flows)-th host, half the fabric away
  uint32_t incast_fanin = 16;  // workers per incast round
  uint64_t incast_bytes = 256 * 1024;  // each worker's push to the PS
  uint64_t incast_period_ns = 1'000'000;
  uint32_t partitions = 0;  // swemu's side: the engine's partitions (0: one agenda)
  uint32_t hosts() const { return tors * hosts_per_tor; }
};

// The sizes --quick picks: a smoke test of a few seconds.
BenchShape QuickShape();

struct BenchFlow {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint64_t start_ns = 0;
  uint64_t bytes = 0;  // 0: a long flow, sending until the end of the run
  uint16_t src_port = 0;
  uint16_t dst_port = 0;  // kBenchLongPort or kBenchIncastPort
};
inline constexpr uint16_t kBenchLongPort = 5000;
inline constexpr uint16_t kBenchIncastPort = 5001;

// Long flow j: host j * hosts / long_flows to the host hosts / 2 further (another ToR), from 0.
// Incast round r, starting at r * period + period / 4 while that is within the first 3/4 of the
// run: PS (37 r + 3) mod hosts, its workers the hosts 1 + k * (hosts / fanin) after it.
std::vector<BenchFlow> PlanBenchFlows(const BenchShape& shape);

// --quick, --duration-ms, --long-flows, --incast-fanin, --incast-kb, --incast-period-us,
// --ecn-k, --queue-pkts, --tors, --hosts-per-tor, --spines. False with one line in *error.
bool ParseBenchArgs(int argc, char** argv, BenchShape* shape, std::string* error);

struct BenchResult {
  double wall_s = 0;
  uint64_t events = 0;
  uint64_t packet_hops = 0;      // frames that crossed one link (host links included)
  uint64_t flows_started = 0;    // finite (incast) flows
  uint64_t flows_completed = 0;  // of those, every byte acknowledged
  uint64_t bytes_delivered = 0;  // in order, at the receivers, long flows included
  double mean_queue_pkts = 0;    // packets queued in the switches, sampled every 50 us
  uint64_t ecn_marks = 0;        // CE marks the switches applied
  uint64_t drops = 0;            // switch queue drops
};
inline constexpr uint64_t kBenchSampleNs = 50'000;

// engine=NAME wall_s=... events=... packet_hops=... hops_per_s=... flows_started=...
// flows_completed=... bytes_delivered=... mean_queue_pkts=... ecn_marks=... drops=...
// virtual_ms=... hosts=...
std::string FormatBenchLine(const char* engine, const BenchShape& shape, const BenchResult& r);

}  // namespace swemu_bench
