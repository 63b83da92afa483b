#pragma once
// pcn: proactive congestion notification (PCN, Kang et al., Sensors 2021, sections 2.3-3.3) on
// top of l2l3. A worker announces its gradient burst with a PCN-START (pipeline/wire/pcn.h)
// toward the PS; every switch on the path lowers the ECN threshold of the egress port toward the
// PS to the one the START carries, for all 8 queues of that port, until the announced burst
// arrives; then the port's initial threshold returns. The rules swemu adds where the paper is
// silent (scope, burst arrival, several jobs, timeout) are in docs/papers.md ("PCN").
//
// Ingress is l2l3's, and then STARTs and ACKs (UDP datagrams on the PCN port with bit 7 or 6 of
// the TOS byte set) are put in the control queue (7, the highest strict priority, as DLCP's
// control signals): a START waits behind no queued packet, so each switch applies it about
// one propagation delay after it was sent, as section 3.1's timing assumes.
//
// Everything else runs in egress, where the port toward the PS and the queue depth are known, as a
// Tofino egress program would (state indexed by the egress port, never the ingress port):
//   stage 0  pcn_job: exact match on the IPv4 destination; a hit names the PS's job (the scope:
//            only traffic to a configured PS is read as PCN)
//   stage 1  pcn_pending: one cell per (egress port, worker, job), the announced bursts
//   stage 2+ pcn_port: one lane per job per egress port (4 lanes per stage): count, threshold,
//            deadline (pipeline/programs/pcn_state.h)
//   then     ECT packets of every queue of the port are CE-marked when the packets queued ahead
//            of them at enqueue (enq_qdepth) reach the active threshold, the lowest announced
//            by a live job, else the port's initial threshold.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/programs/l2l3.h"
#include "pipeline/programs/pcn_state.h"

namespace swemu {

struct PcnCounters {
  uint64_t starts = 0;            // STARTs that announced a burst (a new pending cell)
  uint64_t starts_repeated = 0;   // the same worker's START again before its burst: no recount
  uint64_t starts_ignored = 0;    // threshold at or above the port's initial one: no state
  uint64_t starts_with_ack = 0;   // START and ACK bits both set: not a START, no state
  uint64_t acks = 0;              // ACKs seen (forwarded; they change no state)
  uint64_t bursts_arrived = 0;    // first data packet of an announcing worker: count - 1
  uint64_t pending_expired = 0;   // data packet after its START timed out: no effect
  uint64_t pending_evicted = 0;   // a live announcement overwritten by a colliding worker
  uint64_t timeouts = 0;          // job lanes whose burst never came: initial threshold back
  uint64_t marked_pcn = 0;        // CE marks made against an announced threshold
  uint64_t marked_initial = 0;    // CE marks made against the initial threshold
};

class PcnProgram final : public Program {
 public:
  static constexpr uint32_t kLanesPerStage = 4;  // stateful ALUs per stage
  static constexpr uint32_t kMaxJobs = 16;

  std::string_view name() const noexcept override { return "pcn"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override;
  void EgressBurst(Packet** pkts, uint32_t n) noexcept override;
  uint32_t UserMetadataWords() const noexcept override { return 0; }
  SWEMU_L2L3_DIGESTS(l2l3_)
  // On several lcores, by the sending host (IPv4 source; other frames by flow): a worker's
  // START and its burst take the same lcore and the same shard ring to the PS port's lcore, so
  // the START reaches egress first, as it was sent. By flow, a START handed across lcores could
  // arrive after a burst that stayed on its lcore, and the burst would not count as arrived.
  uint32_t ShardKey(const Packet& pkt) const noexcept override;

  const PcnCounters& counters() const noexcept { return counters_; }
  // Slow path, for `show pcn` and tests: the threshold port marks against at now_ns.
  uint32_t ActiveThreshold(PortId port, uint64_t now_ns) const;
  uint32_t InitialThreshold(PortId port) const { return port < initial_.size() ? initial_[port] : 0; }

 private:
  enum class Kind : uint8_t { kOther, kStart, kData };
  struct Classified {
    Kind kind = Kind::kOther;
    uint8_t job = 0;
    uint8_t threshold = 0;
  };

  Status DeclareResources(ProgramContext& ctx, uint32_t pending_slots);
  Status AddCommands(CommandTable& commands);
  std::string StatsJson() const;
  std::string Show() const;
  void Classify(Packet** pkts, uint32_t n, Classified* out) noexcept;
  Kind KindOf(Packet& pkt, Classified& c) noexcept;
  uint32_t PortStage(Packet& pkt, pcn::LaneOp op, const Classified& c, uint32_t now_ms) noexcept;

  L2l3Program l2l3_;
  TrafficManager* tm_ = nullptr;
  MatchTable* jobs_table_ = nullptr;
  RegisterArray* pending_ = nullptr;
  RegisterArray* port_ = nullptr;
  std::vector<uint32_t> initial_;  // per egress port, packets
  uint32_t jobs_ = 4;
  uint32_t timeout_ms_ = 1000;
  uint32_t burst_min_payload_ = 512;
  uint16_t udp_port_ = 0;
  int control_queue_ = 7;  // STARTs and ACKs go here (-1: where qos puts them)
  uint32_t last_ms_ = 0;  // the time of the last packet egress saw (for `show pcn`)
  PcnCounters counters_;
};

}  // namespace swemu
