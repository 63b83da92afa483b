#pragma once
// DLCP's simulation (5.2), scaled to what the virtual-time engine runs in seconds: by default a
// leaf-spine fabric of `tors` ToRs with `hosts_per_tor` hosts and `spines` cores (every ToR
// linked to every core), or any network a topology file describes (hostlib/dlcp/fabric.h); one
// parameter-server iteration of a real model: the push (every worker sends every
// layer's gradients to that layer's PS, chosen at random per layer; tensors over 4 MB (scaled)
// split evenly over all PSs; 4 workers per PS, PSs colocated with workers), then the pull (a
// PS sends a layer's aggregate back to every worker once all workers' pushes of it have
// arrived: for DLCP, once each met its bound). Run once per scheme on the same topology and the
// same tensors: DLCP (the dlcp program, per-packet spraying, DLCP hosts with the push bound and
// the stricter pull bound) and the paper's baselines (5.2.1): DCTCP (l2l3, per-flow ECMP, ECN at
// 65 packets, model DCTCP with initial window 10 and a minimum RTO), PIAS (the same, with each
// segment's priority from the bytes its flow sent and the switches' eight strict-priority
// queues by it) and pFabric (l2l3 spraying per packet, priority by remaining size, small
// buffers, the minimal transport; hostlib/common/packet_priority.h). Reported: the flows' mean
// and p99 completion times (all, push, pull), the iteration's communication time, and the loss
// each layer saw.
#include <cstdint>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"
#include "pipeline/tm/tm_config.h"
#include "swemu/topology_config.h"

namespace swemu {

// The schemes a run compares: DLCP and the paper's baselines (5.2.1).
enum class DlcpScheme : uint8_t { kDlcp, kDctcp, kPias, kPfabric };
// "dlcp", "dctcp", "pias", "pfabric": --schemes' words and the CSV's transport column.
const char* DlcpSchemeName(DlcpScheme scheme);
// The report's: "DLCP", "DCTCP", "PIAS", "pFabric".
const char* DlcpSchemeLabel(DlcpScheme scheme);
// A comma-separated list of names: dlcp and at least one baseline, each once, in any order.
Result<std::vector<DlcpScheme>> ParseDlcpSchemes(std::string_view text);

// The network is a description (hostlib/dlcp/fabric.h): the leaf-spine below by default, or a
// --topology file; buffer_pkts and the thresholds are the scheme's and apply to either.
struct DlcpExperimentOptions {
  // The default network's shape (DlcpExperimentTopology).
  uint32_t tors = 3;
  uint32_t hosts_per_tor = 4;
  uint32_t spines = 2;
  uint64_t link_bps = kDefaultPortRateBps;  // every link (the paper's 100G, scaled)
  TimeNs link_delay_ns = 5'000;        // per hop
  uint32_t buffer_pkts = 349;          // per queue: 512 KB of 1500-byte packets
  std::string model = "ResNet50";
  uint32_t scale = 64;                 // layer sizes divided by this
  double loss_bound = 0.1;             // DLCP's push bound, for every tensor
  double pull_bound = 0.01;            // DLCP's pull bound (stricter, 3.2.1)
  bool pull = true;                    // the pull stage after the push
  TimeNs min_rto_ns = 10'000'000;      // DCTCP's and PIAS's (10 ms headline; 5 and 1 ms in 5.3)
  uint32_t dlcp_t = 0;                 // 0: the dlcp program's defaults (or dlcp_load's)
  double dlcp_d = 0;
  // > 0: DLCP's thresholds from Appendix B (the fit T, d and the optimum's L_i) for this load,
  // the model and buffer_pkts, instead of the program's defaults.
  double dlcp_load = 0;
  uint64_t seed = 1;
  double alpha = 0;  // [tm] alpha on every queue of every switch, both schemes; 0: static buffer
  // 0: one job of every host. Else the hosts form hosts / job_hosts jobs (at least one), host h
  // in job h % jobs, each its own PS iteration (its PSs, its draws): the load per host stays
  // the same as the fabric grows (DlcpJobCount).
  uint32_t job_hosts = 0;
  // 0: every host is a worker. Else this many (the paper's Fig. 14 x axis), spread evenly over
  // the switches with hosts (DlcpWorkerHosts); the other hosts stay idle.
  uint32_t workers = 0;
  // Every host's flows share one NIC at its link's rate (SharedNic), DLCP's and the baselines'
  // alike; false: each flow is paced alone at the link's rate (a host of n flows offers n
  // links' worth), as every run did before 2026-12-07.
  bool shared_nic = true;
  // The engine's partitions (0: one agenda; N >= 1: N threads, the same results for every N).
  uint32_t partitions = 0;

  Status Validate() const;
};

struct DlcpFlowResult {
  uint32_t layer = 0;
  bool pull = false;
  uint32_t from = 0, to = 0;  // host indexes (the topology's order); a push goes worker -> PS
  uint64_t bytes = 0;
  TimeNs start_ns = 0;        // a push starts at 0, a pull once its layer's pushes arrived
  TimeNs fct_ns = 0;
  TimeNs arrived_ns = 0;  // at the receiver: its bound met (DLCP), its last byte in order (DCTCP)
  double loss = 0;  // share of the tensor not delivered when the flow completed
};

// What the engine did in one run (--engine-stats): its events, the frames hosts offered, the
// frames switches sent over switch-to-switch links, the frames delivered to hosts.
struct DlcpEngineStats {
  uint64_t events = 0, injected = 0, link_frames = 0, delivered = 0;
  // What the hosts sent: data packets (DLCP) or segments (the baselines), of which resent;
  // DLCP's retransmission requests, the baselines' timeouts.
  uint64_t data_packets = 0, resent = 0, retransmit_requests = 0, timeouts = 0;
  // The process's CPU seconds for the run, where the caller measured them (0: not measured):
  // on a busy machine the wall time says little, the CPU time what the run costs.
  double cpu_s = 0;
  // Packet-hops: a frame's arrival at a switch, from a host or over a link.
  uint64_t packet_hops() const { return injected + link_frames; }
};

struct DlcpRunResult {
  DlcpScheme scheme = DlcpScheme::kDlcp;
  std::string transport;  // DlcpSchemeName(scheme)
  DlcpEngineStats engine;
  uint32_t hosts = 0;  // the hosts that take part: the workers (PSs among them)
  uint32_t jobs = 1;  // DlcpJobCount for the run's hosts
  std::vector<DlcpFlowResult> flows;
  std::vector<double> layer_loss;       // mean loss per layer, push flows
  std::vector<double> layer_loss_pull;  // the same, pull flows (empty without the pull)
  uint64_t red_drops = 0, queue_drops = 0, marks = 0;
  uint64_t dt_drops = 0;  // tm_dynamic_threshold (with alpha)
  uint64_t port_drops = 0;  // tm_port_buffer_full and tm_pushout (pFabric's port buffer)
  TimeNs iteration_ns = 0;  // the last flow's completion: the iteration's communication time
  std::string thresholds;   // the dlcp_thresholds command installed, if any
  std::string settings;     // PIAS's and pFabric's own, in words (their report line)
  std::string fabric;       // the network, in words (DescribeDlcpTopology)
  enum class Stage { kAll, kPush, kPull };
  double MeanFctMs(Stage stage = Stage::kAll) const;
  double P99FctMs(Stage stage = Stage::kAll) const;
};

// How many jobs `hosts` hosts form under o.job_hosts (1 when it is 0).
uint32_t DlcpJobCount(const DlcpExperimentOptions& o, uint32_t hosts);
// The hosts (indexes in topo's order, ascending) that are workers: all of them when workers is
// 0, else `workers` of them taken round robin over the switches with hosts (each switch's in
// its order), so every rack gets workers / racks or one more. Errors for more workers than
// hosts or fewer than one PS's.
Result<std::vector<uint32_t>> DlcpWorkerHosts(const TopologyConfig& topo, uint32_t workers);

// The default network: the leaf-spine of the options' shape (tors, hosts_per_tor, spines,
// link_bps, link_delay_ns), switches, links and hosts in the order the figures were run with.
TopologyConfig DlcpExperimentTopology(const DlcpExperimentOptions& options);
// One scheme's run on `topo`, which must pass CheckDlcpTopology (refused otherwise); every host
// is a worker, every 4th in `topo`'s order also a PS.
Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& options,
                                        const TopologyConfig& topo, DlcpScheme scheme);
// The same with dlcp: DLCP, else the DCTCP baseline.
Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& options,
                                        const TopologyConfig& topo, bool dlcp);
// The same on DlcpExperimentTopology(options).
Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& options, bool dlcp);
Result<DlcpRunResult> RunDlcpExperiment(const DlcpExperimentOptions& options, DlcpScheme scheme);
// Every flow of the runs, in order, as CSV (a header line, then transport, stage, layer, from,
// to, bytes, start_ns, fct_ns, arrived_ns, loss), for tools/dlcp/dlcp_plot.py.
std::string DlcpFlowsCsv(const std::vector<const DlcpRunResult*>& runs);
std::string DlcpFlowsCsv(const DlcpRunResult& dlcp, const DlcpRunResult& dctcp);
// One line per run: its events and packet-hops (the engine's work), with the wall seconds
// each took (measured by the caller; nothing else in the report depends on the machine).
std::string FormatDlcpEngineStats(const std::vector<std::pair<const DlcpRunResult*, double>>& runs);
std::string FormatDlcpEngineStats(const DlcpRunResult& dlcp, double dlcp_wall_s,
                                  const DlcpRunResult& dctcp, double dctcp_wall_s);
// DLCP against each baseline: a comparison table per baseline (in the order given), the drops
// and each stage's loss per layer: its mean and worst layer, or with `every_layer` one line per
// layer.
std::string FormatDlcpComparison(const DlcpExperimentOptions& o, const DlcpRunResult& dlcp,
                                 const std::vector<const DlcpRunResult*>& baselines,
                                 bool every_layer);
std::string FormatDlcpComparison(const DlcpExperimentOptions& o, const DlcpRunResult& dlcp,
                                 const DlcpRunResult& dctcp, bool every_layer);

}  // namespace swemu
