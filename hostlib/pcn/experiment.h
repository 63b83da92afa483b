#pragma once
// The paper's experiment (section 4) in virtual time: switches running the pcn program (by
// default a root and two leaves, or any topology: hostlib/pcn/network.h); background hosts send
// long-lived ECN-reactive TCP flows to the PS, which hangs off its switch behind the shaped
// bottleneck port; DDL workers start after a while and alternate bursts toward the PS with
// network-idle periods, announcing each burst with a PCN-START (or not: the run without PCN).
// Deterministic for a seed. The metrics are the paper's, measured at the port toward the PS.
#include <cstdint>
#include <string>
#include <vector>

#include "hostlib/common/ecn_tcp.h"
#include "hostlib/pcn/network.h"
#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

namespace swemu {

struct PcnExperimentOptions {
  // The default network's shape (DefaultPcnNetwork); a topology file says its own.
  uint64_t bottleneck_bps = 100'000'000;  // the root's port toward the PS
  uint64_t edge_bps = 1'000'000'000;      // leaf uplinks and host NICs
  TimeNs rtt_ns = 7'690'000;  // propagation RTT host -> PS -> host (RTT * C = 96.1 kB at 100M)
  uint32_t queue_pkts = 60;
  uint32_t initial_threshold = 40;
  uint32_t pcn_threshold = 10;
  uint32_t background_per_leaf = 3;
  uint32_t workers = 2;  // spread over the two leaves
  TimeNs duration_ns = 100'000'000'000;
  TimeNs ddl_start_ns = 20'000'000'000;
  TimeNs idle_ns = 7'000'000'000;
  uint32_t iterations = 6;
  uint64_t burst_bytes = 500'000;    // per worker and burst
  uint64_t burst_rate_bps = 30'000'000;  // each worker's burst rate limit (iperf3 -b); 0: NIC's
  TimeNs ack_wait_ns = 0;                // 0: two RTTs
  // The burst's least delay after its START (DdlWorkerOptions::min_lead_ns): about the round
  // trips an iperf3 run spends before its first data (two TCP handshakes, the cookie and the
  // parameters), which the paper's bursts had and model flows do not (docs/papers.md, "PCN").
  TimeNs lead_ns = 40'000'000;
  CongestionControl cc = CongestionControl::kReno;
  TimeNs min_rto_ns = 200'000'000;
  uint64_t seed = 1;
  TimeNs sample_ns = 10'000;   // queue depth sampling (below one frame time at 100M)
  std::string telemetry_path;  // the PS port's queues every telemetry_period_ns; empty: none
  TimeNs telemetry_period_ns = 1'000'000;

  Status Validate() const;
};

// One worker's burst (workers drift apart over the iterations, as each idles after its own).
struct PcnBurstMetrics {
  uint32_t worker = 0;
  uint32_t iteration = 0;
  TimeNs start_ns = 0;         // its first data segment is sent
  TimeNs done_ns = 0;          // its last byte is acknowledged
  uint64_t bytes = 0;
  TimeNs arrival_ns = 0;       // the burst's first frame reaches the port toward the PS
  uint32_t start_queue = 0;    // packets queued there when it is enqueued
  uint32_t max_queue = 0;      // highest depth until the burst's last byte is acknowledged
  double mean_queue_delay_ms = 0;  // depth x frame time, averaged over that interval
  TimeNs bct_ns = 0;           // first data segment sent to last byte acknowledged
  double ddl_mbps = 0;         // the burst's bytes over its BCT
  uint64_t retransmits = 0;
  bool acked = false;          // its START was answered
};

// The network as built, for the report: its shape, the PS's port as its switch has it.
struct PcnNetworkFigures {
  std::string shape;      // PcnNetwork::shape
  std::string ps_switch;  // the PS's switch ("root")
  uint32_t workers = 0;
  uint64_t bottleneck_bps = 0;  // the rate of the port toward the PS
  uint32_t queue_pkts = 0;      // its queue depth
  uint64_t edge_bps = 0;        // the fastest link (the hosts' NICs)
  TimeNs rtt_min_ns = 0;        // the workers' and background hosts' propagation round trips
  TimeNs rtt_max_ns = 0;
};

struct PcnRunResult {
  bool pcn = false;
  PcnNetworkFigures network;
  std::vector<PcnBurstMetrics> bursts;
  double background_mbps = 0;  // background goodput while the DDL ran (first START to last ack)
  double background_mbps_before = 0;  // ... and before the DDL started (the warm-up)
  uint64_t root_marks = 0;  // at the port toward the PS (the root's in the default network)
  uint64_t root_drops = 0;
  uint64_t pcn_starts = 0;          // the PS's switch's pcn counters
  uint64_t pcn_bursts_arrived = 0;
  uint64_t pcn_timeouts = 0;
  TimeNs virtual_ns = 0;
  uint64_t events = 0;

  // Means over the bursts.
  double MeanStartQueue() const;
  double MeanMaxQueue() const;
  double MeanBctMs() const;
  double MeanDdlMbps() const;
  double MeanQueueDelayMs() const;
};

// One run on a network; the options' shape fields are not used.
Result<PcnRunResult> RunPcnExperiment(const PcnExperimentOptions& options, const PcnNetwork& net,
                                      bool pcn);
// One run on the default network (DefaultPcnNetwork).
Result<PcnRunResult> RunPcnExperiment(const PcnExperimentOptions& options, bool pcn);
// Builds the network in an engine without running it: what a run would refuse (a port that
// does not exist, a command a switch refuses, an unshaped PS port), as one line.
Status CheckPcnNetwork(const PcnExperimentOptions& options, const PcnNetwork& net);

// The side-by-side table: the paper's figures, then swemu's without and with PCN and the change.
std::string FormatPcnComparison(const PcnExperimentOptions& options, const PcnRunResult& without,
                                const PcnRunResult& with);
std::string PcnRunJson(const PcnRunResult& run);

}  // namespace swemu
