#pragma once
// The run-to-completion loop on one lcore (DPDK l2fwd's shape): per port, RX a burst of 32 into
// the switch's ingress; per port, TX up to 32 from its TM (through the port's loss and delay,
// port_effects.h); then poll the control mailbox. The lcore owns the switch and every counter
// here, so none of it is locked or atomic. With --pcap-dir it also copies recorded ports' frames
// into its own ring of the PcapRecorder.
#include <rte_mempool.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/switch/switch.h"
#include "swemu/control_mailbox.h"
#include "swemu/dpdk/port_effects.h"
#include "swemu/dpdk/ports.h"
#include "swemu/dpdk/tsc_clock.h"

namespace swemu {

class MbufPacketPool;
class PcapRecorder;
class PcapRing;
class ShardRouter;

struct DatapathOptions {
  bool busy_poll = false;          // never back off
  bool cut_through = true;         // [dpdk] cut_through: runs for an idle plain port skip the TM
  uint64_t run_for_ns = 0;         // 0: until stop
  uint64_t stats_interval_ns = 0;  // 0: no periodic line
  bool stats_stages = false;       // each stats line is followed by the per-stage cycles
};

// Frames as the DPDK ports saw them (a frame the TX queue refused is not counted as tx).
struct WirePortCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_bytes = 0;
};

// TSC cycles spent in one phase, over the bursts that carried packets (empty polls excluded), in
// the loops that sample them (Datapath::kTimingEvery).
struct PhaseCycles {
  uint64_t cycles = 0;
  uint64_t packets = 0;
  void Add(uint64_t spent, uint64_t n) noexcept {
    cycles += spent;
    packets += n;
  }
};

// What a --stats-interval line reads: per-port wire counters and drops by reason.
struct StatsSample {
  std::vector<WirePortCounters> wire;
  std::array<uint64_t, kDropReasonCount> drops = {};
};

struct RuntimeCounters {
  PhaseCycles rx;       // rte_eth_rx_burst and mbuf -> Packet
  PhaseCycles ingress;  // Switch::ReceiveBurst: parser, ingress stages, TM enqueue
  PhaseCycles egress;   // Switch::Transmit: TM dequeue, egress stages, deparser
  PhaseCycles tx;       // Packet -> mbuf and rte_eth_tx_burst
  uint64_t loops = 0;
  uint64_t idle_loops = 0;
  uint64_t sleeps = 0;
  uint64_t rx_held = 0;      // port polls skipped: a ring to a peer was nearly full
  uint64_t cut_through = 0;  // packets sent from ingress straight to an idle port (no TM wait)
  // The lcore's TSC cycles in this switch's loop steps (its RX, TX and mailbox; the back-off
  // between loops excluded): steps that moved frames, empty ones, and steps longer than
  // Datapath::kStalledStepNs (the thread was off its CPU), which count in neither.
  uint64_t moved_cycles = 0;
  uint64_t empty_cycles = 0;
  uint64_t stalled_cycles = 0;
  uint64_t stalled_steps = 0;
};

class Datapath final : public CutThroughSink {
 public:
  static constexpr uint16_t kBurst = 32;
  static constexpr uint32_t kTxBurstsPerLoop = 4;
  static constexpr uint64_t kSpinLoops = 100;     // empty loops before backing off
  static constexpr uint64_t kPauseLoops = 10000;  // then rte_pause() loops before sleeping
  static constexpr uint64_t kMinSleepNs = 10'000;
  static constexpr uint64_t kMaxSleepNs = 200'000;
  static constexpr int kDiscardBursts = 256;  // per port at shutdown: 8192 frames
  // Sharded shutdown: a lcore keeps draining this long after it stopped RX, for frames its
  // peers still hand over.
  static constexpr uint64_t kShardGraceNs = 20'000'000;
  // Sharded: a lcore polls its ports only while every ring to a peer has this much room. A loop
  // may hand a peer what its own RX and its peers' burst produce, multicast copies included.
  static constexpr uint32_t kShardRoom = 4 * kBurst;

  // Phase cycles (`show runtime`) are taken in one loop out of this many: reading the TSC costs
  // about as much as a packet's TM work.
  static constexpr uint64_t kTimingEvery = 16;
  // A loop step longer than this was not all work: the thread lost its CPU (or took a long
  // interrupt) during it. A step of the real-time loop moves at most a few hundred frames.
  static constexpr uint64_t kStalledStepNs = 200'000;

  // `loop_clock` is the switch's clock: the datapath latches it once per loop.
  // `pool` is the switch's: the datapath attaches its packet descriptors to received mbufs.
  Datapath(Switch& sw, MbufPacketPool& pool, const DpdkPorts& ports, ControlMailbox& mailbox,
           const TscClock& clock, LoopClock& loop_clock, std::ostream& out);

  // Registers `show runtime`, `set_port_loss` and `set_port_delay` in the switch's command table.
  Status AddCommands();
  // Before Run (and before the startup script): port p's loss seed, delay-line size (0: none)
  // and configured loss and delay.
  void InitPortEffects(uint64_t seed, PortId p, uint32_t delay_frames, double loss,
                       uint64_t delay_ns);
  // Before Run: record rx/tx of the recorder's ports into `ring` (this lcore's); timestamps are
  // TscClock ns + offset.
  void SetRecorder(PcapRecorder* recorder, PcapRing* ring, uint64_t wall_offset_ns) {
    recorder_ = recorder;
    pcap_ring_ = ring;
    wall_offset_ns_ = wall_offset_ns;
  }
  // Before Run, with [dpdk] workers > 1 (shard.h): this lcore receives and transmits only the
  // ports it owns, sends packets to their shard's lcore and takes its peers' packets.
  void SetShard(ShardRouter* shard);
  // Runs until `stop` or run_for; then stops RX, transmits what the TM holds (at most 1 s) and
  // closes the mailbox. With options.cut_through the switch sends runs for an idle port through
  // this datapath's Send (CutThroughSink) during ingress.
  void Run(const DatapathOptions& options, const std::atomic<bool>& stop);
  // Several switches on this one lcore (swemu --also-switch): each loop runs one loop of each
  // datapath in turn, paths[i] with each[i] (busy_poll and run_for: each[0]'s); they back off
  // only when none moved a frame (and sleep only when none holds one). Then each drains and
  // closes its mailbox, as Run does.
  static void RunTogether(const std::vector<Datapath*>& paths,
                          const std::vector<DatapathOptions>& each, const std::atomic<bool>& stop);
  // CutThroughSink, on the lcore during ingress: a port this lcore owns with no refused frames
  // waiting; Send takes the frames as TransmitPort takes the TM's (loss, delay, recording, TX).
  bool Ready(PortId port) noexcept override { return Owns(port) && backlog_[port].n == 0; }
  void Send(PortId port, Packet** pkts, uint32_t n) noexcept override;
  // After Run: frees frames still waiting in RX queues (a net_ring loops TX back); how many.
  uint64_t DiscardRx();
  // After Run: frees frames still in delay lines; how many.
  uint64_t DiscardDelayed();
  // Frees what the devices refused and still waits in the TX backlogs (after the drain).
  uint64_t DiscardBacklog();

  // Drops by reason: the switch's and the datapath's own (tx_queue_full, ...).
  std::array<uint64_t, kDropReasonCount> AllDrops() const;
  // The same whatever counter_reset cleared (the shutdown summary, beside the wire counters).
  std::array<uint64_t, kDropReasonCount> AllDropsSinceStart() const;
  const WirePortCounters& port_counters(PortId p) const { return wire_[p]; }
  // Per-port table and drops, in the offline mode's style.
  std::string Summary() const { return Summary({this}); }
  // Sharded: port p's row from shards[p % size], drops and counts summed over the shards.
  static std::string Summary(const std::vector<const Datapath*>& shards);
  std::string RuntimeReport() const;
  // `show runtime`'s per-stage lines (the switch's StageProfile over the loops that time their
  // phases): the first call starts the sampling and says so; nothing is timed before.
  std::string StageReport();
  void StartStageSampling();
  // Several lcores: this lcore's counters, taken on the lcore (ControlMailbox::Call).
  StatsSample Sample() const { return {wire_, AllDrops()}; }
  // The whole switch from every lcore's sample: port p from lcore p % N, drops summed.
  static StatsSample MergeSamples(const std::vector<StatsSample>& samples);
  // One --stats-interval line: rates of the device ports between two samples `seconds` apart.
  static std::string StatsLine(const DpdkPorts& ports, const StatsSample& now,
                               const StatsSample& then, double seconds);

 private:
  // One loop at TSC time now_tsc (latched into the switch's clock).
  bool Iterate(bool rx, uint64_t now_tsc) noexcept;
  // The TSC now when this loop samples phase cycles, else 0 (no read).
  uint64_t PhaseTsc() const noexcept { return timing_ ? rte_rdtsc() : 0; }
  uint32_t ReceivePort(PortId p) noexcept;
  bool Owns(PortId p) const noexcept;
  // Sharded: runs local ingress on the burst and sends the rest to their shard's lcore.
  void Scatter(Packet** pkts, uint32_t n, PortId p) noexcept;
  // Sharded: ingress of packets peers received for this lcore, then peers' packets for its TM.
  uint32_t DrainPeers() noexcept;
  // Resends port p's backlog; true when it is empty afterwards.
  bool FlushBacklog(PortId p, uint16_t id) noexcept;
  uint32_t TransmitPort(PortId p) noexcept;
  // Packets (k <= kBurst) that left the switch on port p (device `id`) to their mbufs, their
  // descriptors back to the pool, then through the port's loss and delay to the device.
  void Emit(PortId p, uint16_t id, Packet* const* pkts, uint16_t k) noexcept;
  uint32_t ReleaseDelayed(PortId p, uint64_t now_tsc) noexcept;
  // rte_eth_tx_burst with counters; keeps in the port's backlog (or frees and counts) what the
  // queue refused. `bytes`: the n frames' bytes (FrameBytes), read before the driver owns them.
  void SendFrames(PortId p, uint16_t id, rte_mbuf** mbufs, uint16_t n, uint64_t bytes) noexcept;
  static uint64_t FrameBytes(rte_mbuf* const* mbufs, uint16_t n) noexcept;
  // Copies up to n frames into the recorder's pending slots (not yet published); how many fit.
  uint16_t FillRecords(PortId p, int direction, rte_mbuf* const* mbufs, uint16_t n) noexcept;
  bool Holding() const noexcept;
  void Drop(DropReason reason, uint64_t n = 1) noexcept {
    drops_[static_cast<std::size_t>(reason)] += n;
  }
  Result<std::string> SetPortEffect(CommandArgs args, bool loss);
  // Run's parts: before the first loop; one loop at TSC `now` with its mailbox poll (true when
  // it moved a frame); after stop, for every datapath of the lcore.
  void Start(const DatapathOptions& options);
  bool Step(uint64_t now);
  // Counts a step of `cycles` that moved frames or not (RuntimeCounters' lcore time).
  void CountStep(uint64_t cycles, bool moved) noexcept;
  static void Drain(const std::vector<Datapath*>& paths);
  // An empty loop: spin, then pause, then sleep (never while `holding` frames).
  void Idle(bool holding) noexcept;
  void PrintStats(uint64_t now_tsc);
  uint64_t NsToCycles(uint64_t ns) const;

  Switch& sw_;
  MbufPacketPool& pool_;
  rte_mempool_cache* descriptors_ = nullptr;  // this lcore's cache of pool_'s descriptors
  const DpdkPorts& ports_;
  ControlMailbox& mailbox_;
  const TscClock& clock_;
  LoopClock& loop_clock_;
  std::ostream& out_;
  uint64_t loop_tsc_ = 0;        // TSC at the start of the current loop
  bool timing_ = false;          // this loop samples phase cycles
  bool stage_sampling_ = false;  // the loops that time phases also time the stages
  ScopeOverhead stage_overhead_{};
  bool busy_poll_ = false;
  uint64_t idle_streak_ = 0;
  uint64_t sleep_ns_ = kMinSleepNs;
  uint64_t stalled_step_cycles_ = UINT64_MAX;  // kStalledStepNs in TSC cycles (Start)
  std::vector<WirePortCounters> wire_;
  std::array<uint64_t, kDropReasonCount> drops_ = {};
  RuntimeCounters runtime_;
  std::vector<PortEffects> effects_;
  uint64_t delayed_ = 0;  // frames in all delay lines
  // Per port: frames its device refused, in order; they go first next time, and while any
  // wait the port takes nothing from the TM.
  static constexpr uint16_t kBacklog = 2 * kBurst;
  struct TxBacklog {
    std::array<rte_mbuf*, kBacklog> mbufs{};
    uint16_t n = 0;
  };
  std::vector<TxBacklog> backlog_;
  uint64_t backlogged_ = 0;  // frames in all backlogs
  PcapRecorder* recorder_ = nullptr;
  PcapRing* pcap_ring_ = nullptr;
  ShardRouter* shard_ = nullptr;
  uint64_t wall_offset_ns_ = 0;
  // --stats-interval: counters at the previous line.
  uint64_t stats_last_tsc_ = 0;
  uint64_t stats_period_ = 0;         // cycles; 0: no line
  uint64_t next_stats_ = UINT64_MAX;  // TSC of the next line
  bool stats_stages_ = false;  // DatapathOptions::stats_stages (one lcore: PrintStats prints)
  StatsSample stats_last_;
};

}  // namespace swemu
