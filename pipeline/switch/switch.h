#pragma once
// One emulated switch: parser, ingress program, traffic manager, egress program, deparser, the
// control commands and the counters. Offline, the engine drives it on a virtual clock; in real
// time, swemu's lcores drive it on a TSC clock. No DPDK here.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "pipeline/control/command_table.h"
#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/parser/deparser.h"
#include "pipeline/parser/parser.h"
#include "pipeline/program/program.h"
#include "pipeline/program/stage_profile.h"
#include "pipeline/switch/counters.h"
#include "pipeline/switch/cpu_path.h"
#include "pipeline/tm/traffic_manager.h"

namespace swemu {

struct SwitchConfig {
  std::string name = "sw0";
  uint16_t num_ports = 4;
  std::string program = "l2l3";
  ProgramOptions program_options;
  PipelineConfig pipeline;
  ParserConfig parser;
  DeparserConfig deparser;
  TmConfig tm;  // tm.num_ports is taken from num_ports
  uint64_t seed = 1;
  CpuPortConfig cpu;
  std::vector<RouterInterface> interfaces;

  Status Validate() const;
};

// Real time on several lcores: each lcore runs its own replica of the switch and transmits only
// the egress ports it owns. After ingress, a replica hands a packet for another lcore's port to
// the router, which queues it for that lcore (whose replica calls EnqueueFromPeer).
class EgressRouter {
 public:
  virtual ~EgressRouter() = default;
  virtual bool IsLocal(PortId port) const noexcept = 0;
  // False when the peer's ring is full: the caller drops the packet (shard_ring_full).
  virtual bool Forward(Packet* pkt) noexcept = 0;
  // Recirculation: true when this replica runs ingress for the shard key.
  virtual bool IsLocalShard(uint32_t /*key*/) const noexcept { return true; }
  // Hands a recirculated, parsed packet to the replica that runs ingress for its shard key (which
  // calls ReceiveRecirculated); false when the ring is full (the caller drops, shard_ring_full).
  virtual bool Recirculate(Packet* /*pkt*/, uint32_t /*key*/) noexcept { return false; }
};

// Real time: where a run of packets goes when it cuts through the TM (TrafficManager::
// PassThrough), after egress and the deparser, instead of waiting for the port's next transmit.
class CutThroughSink {
 public:
  virtual ~CutThroughSink() = default;
  // Whether `port` (a port of the switch) can send now, with nothing of its own still waiting.
  virtual bool Ready(PortId port) noexcept = 0;
  // Takes the packets leaving `port`, in order.
  virtual void Send(PortId port, Packet** pkts, uint32_t n) noexcept = 0;
};

class Switch {
 public:
  // Loads the program (refused with its resource report when it does not fit).
  static Result<std::unique_ptr<Switch>> Create(SwitchConfig config, PacketPool& pool,
                                                const Clock& clock);
  ~Switch();

  // Fast path. Takes ownership of the packets: each is queued, consumed or dropped (and freed).
  void ReceiveBurst(Packet** pkts, uint32_t n, PortId ingress_port) noexcept;
  void Receive(Packet* pkt, PortId ingress_port) noexcept { ReceiveBurst(&pkt, 1, ingress_port); }
  // ReceiveBurst in two halves, for a receive loop that already touches each packet (real time):
  // StartPass on each packet of the burst, then ReceiveStarted on the burst, with the bytes it
  // carries. ingress_port must be a port of the switch; `now` is the clock's now.
  void StartPass(Packet& pkt, PortId ingress_port, TimeNs now) const noexcept {
    pkt.ResetState(user_words_);
    pkt.meta.ingress_port = ingress_port;
    pkt.meta.ingress_ts = now;
  }
  void ReceiveStarted(Packet** pkts, uint32_t n, PortId ingress_port, uint64_t bytes) noexcept;
  // The next packet leaving `port` at the clock's now (after egress and deparser), or nullptr.
  // Packets the egress drops are freed and counted; recirculated ones re-enter ingress.
  Packet* Transmit(PortId port) noexcept {
    Packet* pkt = nullptr;
    return TransmitBurst(port, &pkt, 1) == 1 ? pkt : nullptr;
  }
  // Up to max packets leaving `port` now, in order, into out; returns how many.
  uint32_t TransmitBurst(PortId port, Packet** out, uint32_t max) noexcept;
  // Sharded real time (EgressRouter): the program's shard key of a packet received on
  // ingress_port (parses it; the packet's flow hash when the parse fails, and the drop marked).
  // ReceiveParsedBurst then runs ingress without parsing again, on this or another replica.
  uint32_t ShardKeyOf(Packet& pkt, PortId ingress_port) noexcept;
  // Like ReceiveBurst for packets ShardKeyOf parsed (their meta.ingress_port set, headers kept);
  // a packet whose parse failed is dropped under the parser's reason.
  void ReceiveParsedBurst(Packet** pkts, uint32_t n) noexcept;
  // Ingress again for packets a peer's egress recirculated (EgressRouter::Recirculate).
  void ReceiveRecirculated(Packet** pkts, uint32_t n) noexcept;
  // Queues a packet another replica's ingress routed here (its metadata as that ingress left it).
  void EnqueueFromPeer(Packet* pkt) noexcept { tm_->Enqueue(pkt, pkt->meta.ingress_ts); }
  // Before traffic; nullptr (the default): every port is local.
  void SetEgressRouter(EgressRouter* router) { router_ = router; }
  // Before traffic; nullptr (the default): every packet waits in the TM for Transmit. With a
  // sink, a run of packets (unicast, one queue) for a plain port that holds nothing and that the
  // sink calls ready passes the TM (TrafficManager::PassThrough) and egress at once and goes to
  // the sink, as a cut-through switch sends into an idle port.
  void SetCutThroughSink(CutThroughSink* sink) { sink_ = sink; }
  // When Transmit(port) will next return a packet (kNever if the port has nothing queued).
  TimeNs NextTransmitTime(PortId port) const noexcept;
  // The control plane (CpuPath): when it next has work (kNever for a program without an agent),
  // and the work due at the clock's now. The engine schedules it; an lcore polls it.
  TimeNs NextCpuTime() const noexcept { return cpu_->NextTime(); }
  void ServiceCpu() { cpu_->Service(clock_.NowNs()); }
  const CpuPath& cpu() const { return *cpu_; }
  CpuPath& cpu() { return *cpu_; }  // real time's pump shares it between replicas

  const SwitchConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  uint16_t num_ports() const { return config_.num_ports; }
  CommandTable& commands() { return commands_; }
  const CommandTable& commands() const { return commands_; }
  // Runs one control command, its output dropped; the error names the switch and the command
  // ("tor0: table_add ...: problem"), for programs that set switches up.
  Status Command(const std::string& line) {
    Result<std::string> r = commands_.Execute(line);
    if (!r.ok()) return Status::Error(name() + ": " + line + ": " + r.message());
    return Status::Ok();
  }
  TrafficManager& tm() { return *tm_; }
  const TrafficManager& tm() const { return *tm_; }
  Program& program() { return *program_; }
  PipelineResources& resources() { return resources_; }
  const ResourceReport& resource_report() const { return report_; }
  // Cycles per element (parser, stages, TM, deparser); off until stage_profile().Enable(true).
  StageProfile& stage_profile() { return *profile_; }
  const StageProfile& stage_profile() const { return *profile_; }
  const SwitchCounters& counters() const { return counters_; }
  PacketPool& pool() { return pool_; }
  const Clock& clock() const { return clock_; }

  // Extra multicast copies: the TM's, plus those the switch made itself (sharded real time).
  uint64_t MulticastCopies() const {
    return tm_->multicast_copies() + counters_.program.multicast_copies;
  }
  // All drops by reason: pipeline and TM together.
  uint64_t Drops(DropReason reason) const;
  uint64_t TotalDrops() const;
  // The control plane in virtual time: hands the program the digests due at `now` (each a
  // fixed latency after its packet) and the time. Nothing for a program without digests.
  void ServiceControlPlane(TimeNs now) {
    if (digests_ != nullptr) ServiceDigests(now);
  }
  // When ServiceControlPlane next has digests to deliver; kNever when none wait.
  TimeNs NextDigestDue() const noexcept {
    return digests_ == nullptr ? kNever : digests_->NextDue();
  }
  DigestChannel* digests() noexcept { return digests_; }
  // Zeroes every counter (counter_reset). What was counted before is kept aside, so that a
  // report of the whole run (the real-time shutdown summary, beside device counters nobody
  // resets) still adds up: the *SinceStart totals below.
  void ResetCounters();
  uint64_t DropsSinceStart(DropReason reason) const {
    return Drops(reason) + retired_.drops[static_cast<std::size_t>(reason)];
  }
  uint64_t ConsumedSinceStart() const { return counters_.program.consumed + retired_.consumed; }
  uint64_t MulticastCopiesSinceStart() const { return MulticastCopies() + retired_.copies; }
  uint64_t counter_resets() const { return retired_.resets; }
  // Every counter as a JSON object (ports, queues, drops, program, tables).
  std::string CountersJson() const;
  // Frees everything still queued (shutdown); the freed packets count as drops of nothing.
  void FreeQueued();

 private:
  friend class CpuPath;  // packet-out and back-to-ingress
  Switch(SwitchConfig config, PacketPool& pool, const Clock& clock);
  Status Load();
  // Parses (unless `parsed`), runs the program's ingress and hands each packet to the TM
  // (n <= kMaxBurst).
  void Ingress(Packet** pkts, uint32_t n, bool parsed = false) noexcept;
  // After ingress: true when the packet goes to a TM (this replica's, or a peer's through
  // RouteAway); otherwise it was dropped or consumed (and freed).
  bool ForTm(Packet* pkt) noexcept;
  // A run that cut through to `sink_`; false (nothing changed) when it must wait in the TM.
  bool CutThrough(Packet** pkts, uint32_t n, uint64_t bytes, TimeNs now) noexcept;
  // The egress pass over k packets leaving `port`: stages, deparser and tx counters. Packets it
  // drops, consumes or recirculates are taken out; the rest stay in order in pkts; how many.
  uint32_t Egress(PortId port, Packet** pkts, uint32_t k, TimeNs now) noexcept;
  // After the egress stages: the deparser; false when the packet was dropped, consumed or
  // recirculated instead of being sent.
  bool AfterEgress(Packet* pkt, PortId port, TimeNs now) noexcept;
  // Back to ingress (on the shard's replica) unless the packet used up its recirculations.
  void Recirculate(Packet* pkt, TimeNs now) noexcept;
  void Drop(Packet* pkt) noexcept;
  void ServiceDigests(TimeNs now);
  // With a router: true when the packet went to a peer or was dropped (not queued here).
  bool RouteAway(Packet* pkt) noexcept;
  // With a router: one copy per port of the packet's group, each queued on its port's owner.
  void ReplicateAway(Packet* pkt) noexcept;
  // With a router: runs a recirculated packet's ingress on the replica of its shard.
  void RecirculateAway(Packet* pkt) noexcept;

  SwitchConfig config_;
  PacketPool& pool_;
  const Clock& clock_;
  Parser parser_;
  Deparser deparser_;
  std::unique_ptr<TrafficManager> tm_;
  PipelineResources resources_;
  std::unique_ptr<CpuPath> cpu_;  // before program_: the program's agent goes first
  std::unique_ptr<Program> program_;
  ResourceReport report_;
  std::unique_ptr<StageProfile> profile_;  // after resources_: it unhooks their counters first
  CommandTable commands_;
  DigestChannel* digests_ = nullptr;  // the program's, if it sends digests
  SwitchCounters counters_;
  struct Retired {  // what counter_reset cleared, summed
    std::array<uint64_t, kDropReasonCount> drops = {};
    uint64_t consumed = 0;
    uint64_t copies = 0;
    uint64_t resets = 0;
  } retired_;
  bool parse_ = true;
  uint32_t user_words_ = kUserMetadataWords;  // Program::UserMetadataWords
  bool has_registers_ = true;  // the program has register arrays (which read access masks)
  EgressRouter* router_ = nullptr;
  CutThroughSink* sink_ = nullptr;
};

}  // namespace swemu
