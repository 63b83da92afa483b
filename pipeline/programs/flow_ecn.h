#pragma once
// flow_ecn: a per-flow packet counter that marks ECN, on top of l2l3's forwarding.
// (The running example of docs/programs.md; tools/new_program.sh starts a program from it.)
// Each IPv4 packet l2l3 forwards is counted in a register cell chosen by its flow hash; once a
// flow has sent more than `threshold` packets in the current window, its ECN-capable packets
// leave CE-marked (a Not-ECT packet passes unmarked: the program drops nothing of its own).
// Non-IPv4 frames are forwarded and not counted.
//
//   ingress stages 0-5  l2l3 (dmac, router_mac, qos, ipv4_lpm, ecmp, nexthop)
//   ingress stage 6     flow_ecn_count: per flow cell, lane 0 the count, lane 1 the window
//   then                CE mark when the count passed the threshold (a stateless rewrite)
//   egress              l2l3's (CE mark of congested queues, unless [program] ecn = false)
#include <cstdint>
#include <string>

#include "pipeline/programs/l2l3.h"

namespace swemu {

struct FlowEcnConfig {
  uint32_t threshold = 64;         // packets per flow and window that pass unmarked
  uint64_t window_ns = 1'000'000;  // 0: count from load (or `register_reset flow_ecn_count`)
  uint32_t flows = 4096;           // counter cells, a power of two
};

class FlowEcnProgram final : public Program {
 public:
  static constexpr int kCountStage = 6;  // the first ingress stage l2l3 leaves free

  std::string_view name() const noexcept override { return "flow_ecn"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override { l2l3_.Egress(pkt); }
  void EgressBurst(Packet** pkts, uint32_t n) noexcept override { l2l3_.EgressBurst(pkts, n); }
  // The counter cell: a cell's packets all run ingress on one lcore (cell % workers), so the
  // cell has one owner, and `register_read flow_ecn_count` takes cell i from replica i % N.
  uint32_t ShardKey(const Packet& pkt) const noexcept override { return CellOf(pkt); }
  uint32_t UserMetadataWords() const noexcept override { return 0; }
  SWEMU_L2L3_DIGESTS(l2l3_)

  const FlowEcnConfig& config() const noexcept { return config_; }

 private:
  static Result<FlowEcnConfig> ReadConfig(const ProgramOptions& options);
  Status AddCommands(CommandTable& commands);
  std::string Show() const;
  uint32_t CellOf(const Packet& pkt) const noexcept { return FlowHash(pkt) & (config_.flows - 1); }
  // Stage kCountStage over the burst: count each forwarded IPv4 packet and mark past threshold.
  void CountAndMark(Packet** pkts, uint32_t n) noexcept;

  L2l3Program l2l3_;
  RegisterArray* counts_ = nullptr;
  FlowEcnConfig config_;
};

}  // namespace swemu
