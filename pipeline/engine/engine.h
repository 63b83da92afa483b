#pragma once
// The virtual-time engine: several switches joined by links (rate, delay, loss), hosts on switch
// ports (pcap sources/sinks, later hostlib endpoints), all driven by one VirtualClock through a
// discrete-event agenda. No wall clock: the same inputs and seed give the same output bytes.
//
// Partitions. By default one agenda runs everything, and events at one instant run in the order
// they were scheduled. An engine made with N >= 1 partitions gives each partition its own
// switches (and their hosts), agenda, clock and packet pool, and runs the partitions at once on
// an Intel TBB task arena in windows of virtual time as long as the shortest delay of a link
// between two partitions (the lookahead: nothing one partition does in a window can reach
// another within it); frames crossing are taken in by their partitions in the next window. Events at one instant
// then run ordered by the node (switch or host) that scheduled them and that node's own count,
// a key no partitioning changes, so every N >= 1 gives the same output bytes (which may differ
// from the default's where events tie).
//
// Ranks. Given a RankExchange (MPI: pipeline/mpi/), the partitions are spread over the processes
// of one run: rank r runs the partitions k with k % ranks == r, and every window ends with the
// frames for other ranks' partitions sent to them and the next window agreed by all. As in
// ns-3's distributed simulator, every rank builds every switch (names, ports, rates, tables), but
// only a switch's own rank runs it; hosts, frames and agendas exist only on their rank. The
// reports (CountersJson, PortSummary, CheckConservation, counters) cover the whole network on
// every rank once a run ends. Output bytes are those of the same partitions on threads.
//
// Timing model. A frame a host sends arrives at the switch after the host link's delay. A frame
// a switch port transmits (when its TM shaper lets it start) reaches the far end after its
// serialization time, (len + wire_overhead) * 8 / port rate (0 on an unshaped port), plus the
// link's or host link's delay. Loss is drawn per direction from the seed.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/drop_reason.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"
#include "pipeline/engine/engine_host.h"
#include "pipeline/engine/event_queue.h"
#include "pipeline/engine/rank_exchange.h"
#include "pipeline/engine/rng.h"
#include "pipeline/switch/switch.h"

namespace swemu {

class ThreadArena;  // pipeline/core/independent_runs.h

struct LinkSpec {
  std::string a;
  PortId a_port = 0;
  std::string b;
  PortId b_port = 0;
  uint64_t rate_bps = 0;  // > 0; both ends' port shaping rate (ApplyLinkRates)
  TimeNs delay_ns = 0;
  double loss = 0;  // per frame, each direction
};

// A link's rate is both its ends' port shaping rate from the switches' creation: appends to
// config.tm.port_rates an entry for each end of `links` on switch config.name (after the
// switch's own, so it overrides a [port.N] rate). An end whose port the switch lacks, or a rate
// AddLink refuses, is left out for AddLink to name. Call it on every config before AddSwitch.
void ApplyLinkRates(const std::vector<LinkSpec>& links, SwitchConfig& config);

struct HostPortSpec {
  std::string sw;
  PortId port = 0;
  std::string in_pcap;   // empty: sends nothing
  std::string out_pcap;  // empty: received frames are counted and discarded
  TimeNs delay_ns = 0;
  double loss = 0;
};

struct EngineCounters {
  uint64_t injected = 0;     // frames hosts offered (including those the engine dropped)
  uint64_t delivered = 0;    // frames that reached a host
  uint64_t link_frames = 0;  // frames switches sent over switch-to-switch links
  uint64_t in_flight = 0;    // frames on a wire right now
  std::array<uint64_t, kDropReasonCount> drops = {};  // loss_injected, link_down, ...

  uint64_t TotalDrops() const;
  void Add(const EngineCounters& other);
};

// Bounds on one run, so that a run that cannot end (a forwarding loop between switches, a host
// that retransmits for ever) ends with an error naming the bound instead.
struct EngineLimits {
  TimeNs max_virtual_ns = kNever;  // virtual time past the first event
  uint64_t max_events = ~uint64_t{0};
};

class Engine {
 public:
  // partitions 0: one agenda, events at one instant in the order scheduled (every run before
  // partitions existed); N >= 1: N partitions (above). pool_packets per partition. With
  // `ranks` (not owned; at most `partitions` of them) this process runs its rank's partitions.
  explicit Engine(uint64_t seed, std::size_t pool_packets = 65536, uint32_t partitions = 0,
                  RankExchange* ranks = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Creates the switch (per-port rates come in config.tm.port_rates) in `partition`, then runs
  // the startup script (may be empty).
  Status AddSwitch(SwitchConfig config, const std::string& startup_script, uint32_t partition = 0);
  // Joins two switches' ports. The link leaves the switches' traffic managers as they are: each
  // end's port must already be shaped to the link's rate (ApplyLinkRates), else an error. A
  // link between two partitions needs a delay above 0 (the lookahead), else an error naming it.
  Status AddLink(const LinkSpec& spec);
  // A PcapHost on the port; the input file is opened (and its link type checked) now. On a
  // switch another rank runs, the port is only marked as a host's: no file is opened.
  Status AddHostPort(const HostPortSpec& spec);
  // The extension point for live hosts (hostlib endpoints). On a switch another rank runs the
  // host is kept but never started (its own rank runs it), and may be null.
  Status AttachHost(std::string_view sw, PortId port, TimeNs delay_ns, double loss,
                    std::unique_ptr<EngineHost> host);

  // Processes events up to and including time `until`, then moves the clock to `until` (when it
  // is not kNever), so a caller stepping in slices sees time pass even when the next event is
  // further away than a slice. When no event remains, hosts are finished (output files
  // closed). May be called again to continue. Fails once a limit is passed.
  Status Run(TimeNs until = kNever);
  // The same, but returns as soon as stop() holds after an event (checked after each one), the
  // clock left at that event's time: a caller timing what it waits for gets the exact time.
  // One partition only (an error with more).
  Status Run(TimeNs until, const std::function<bool()>& stop);
  void SetLimits(const EngineLimits& limits) { limits_ = limits; }
  // Calls sample(t) at every multiple t of period_ns from the first event's time on, with the
  // switches as they are at t (before the events due at t), and once after the last event: an
  // exact record in virtual time that adds no event of its own (--telemetry). With ranks, every
  // rank's sampler runs at the same instants and sees only the switches it runs (RunsSwitchAt).
  void SetSampler(TimeNs period_ns, std::function<void(TimeNs)> sample) {
    sample_period_ns_ = period_ns;
    sampler_ = std::move(sample);
  }
  // Tests: at every look at a switch's ports, checks that each port the TM did not mark (and
  // the engine therefore skips) has its service pending in time; the run fails naming the first
  // port that has not (ScheduleAllServices' invariant).
  void SetCheckSkippedServices(bool on) { check_skipped_services_ = on; }
  uint64_t events_processed() const;
  // Of those, port and CPU services an earlier one superseded (popped and skipped).
  uint64_t stale_services() const;
  std::size_t num_partitions() const { return parts_.size(); }
  // Whether this process runs the switch (always, without ranks); false for an unknown name.
  bool RunsSwitch(std::string_view name) const;
  bool RunsSwitchAt(std::size_t index) const { return Runs(switches_[index]); }
  // What a partitioned run's synchronisation cost: its windows, the frames handed over between
  // partitions, and wall seconds: all windows, the busiest partition's share of each (summed),
  // and the hand-overs (in each window the longest a partition spent taking its frames in,
  // summed). All 0 with one partition. With ranks, this rank's view, and what it sent to the
  // others: messages (one per rank and window with frames for it), their bytes, and the wall
  // seconds spent exchanging them and agreeing on the next window.
  struct WindowStats {
    uint64_t windows = 0;
    uint64_t crossings = 0;
    double wall_s = 0;
    double busiest_s = 0;
    double handover_s = 0;
    uint64_t rank_messages = 0;
    uint64_t rank_bytes = 0;
    double rank_sync_s = 0;
  };
  const WindowStats& window_stats() const { return window_stats_; }
  uint64_t windows() const { return window_stats_.windows; }
  // The shortest delay of a link between partitions (kNever when none crosses).
  TimeNs lookahead_ns() const { return lookahead_ns_; }
  bool limit_reached() const { return limit_reached_; }

  Switch* FindSwitch(std::string_view name);
  const Switch* FindSwitch(std::string_view name) const;
  std::size_t num_switches() const { return switches_.size(); }
  Switch& switch_at(std::size_t index) { return *switches_[index].sw; }
  // Between runs every partition's clock shows the same time.
  TimeNs Now() const { return parts_[0]->clock.NowNs(); }
  const VirtualClock& clock() const { return parts_[0]->clock; }
  // The first partition's pool (the only one by default); a host uses its HostContext's.
  HeapPacketPool& pool() { return parts_[0]->pool; }
  // Summed over the partitions.
  EngineCounters counters() const;
  bool idle() const;

  // {"switches": {name: Switch::CountersJson()}, "engine": {...}}
  std::string CountersJson() const;
  // Per switch and port: rx/tx packets and bytes, what the port is attached to, then drops.
  std::string PortSummary() const;
  // Every frame is accounted for: injected + multicast copies == delivered + consumed + drops
  // (pipeline, TM, engine) + queued + in flight; and the pool holds exactly the queued and in
  // flight frames. The error names the two sides.
  Status CheckConservation() const;

 private:
  class HostSlot;
  enum class AttachKind : uint8_t { kNone, kLink, kHost };
  struct Attachment {
    AttachKind kind = AttachKind::kNone;
    bool crosses = false;  // a link to another partition's switch
    uint32_t peer = 0;     // switch index (link) or host index (host)
    PortId peer_port = 0;
    TimeNs delay_ns = 0;
    double loss = 0;
    SplitMix64 rng;
    uint64_t sent = 0;
    uint64_t lost = 0;
  };
  // What one partition runs on: its own agenda, clock, pool and counts (one thread at a time).
  struct Partition {
    Partition(std::size_t pool_packets, std::size_t partitions, bool runs_here)
        : local(runs_here), pool(pool_packets) {
      for (auto& by_partition : outbox) by_partition.resize(partitions);
    }
    bool local;  // this rank runs it (always, without ranks)
    VirtualClock clock;
    HeapPacketPool pool;  // before the switches: they free into it when destroyed
    EventQueue events;
    EngineCounters counters;
    Status failure;
    uint64_t events_processed = 0;
    uint64_t stale_services = 0;
    // Frames sent to other partitions' switches, by the parity of the window they were sent in
    // and the partition they go to, keyed: each partition takes a window's frames in (copies
    // them into its pool) on its own thread at the start of the next window, and the sender
    // frees them at the start of the one after.
    std::array<std::vector<std::vector<Event>>, 2> outbox;
    std::array<TimeNs, 2> outbox_first = {kNever, kNever};  // the earliest arrival in each
    uint64_t crossings = 0;  // frames taken in
    double busy_s = 0;       // wall seconds of its last window
    double take_s = 0;       // of them, taking the frames in
  };
  struct SwitchSlot {
    uint32_t partition = 0;
    uint64_t pushes = 0;  // events this switch scheduled (the partitioned key)
    std::unique_ptr<Switch> sw;
    std::vector<Attachment> ports;
    std::vector<TimeNs> service_at;     // pending service event per port, kNever if none
    std::vector<uint64_t> service_gen;  // an event with an older generation is stale
    TimeNs cpu_at = kNever;              // pending CPU-port event (packet-in, agent timer)
    uint64_t cpu_gen = 0;                // as service_gen
    TimeNs control_at = kNever;         // pending control-plane event (digests), kNever if none
  };
  // What a switch's own rank reports of it (GatherRanks), kept on the others.
  struct Tally {  // CheckConservation's terms
    uint64_t copies = 0, consumed = 0, dropped = 0, queued = 0;
    uint64_t cpu_created = 0, cpu_freed = 0, cpu_held = 0;
  };
  struct RemoteSwitch {
    std::string counters_json;
    std::string summary;
    Tally tally;
  };
  // A window's start and what stops the run, agreed by every rank (combined by AgreeOnWindow).
  struct WindowTerms {
    TimeNs next = kNever;
    uint64_t failed = 0;
    uint64_t events = 0;
    uint64_t due = 0;
  };

  Result<std::pair<uint32_t, PortId>> ResolvePort(std::string_view sw, PortId port,
                                                  std::string_view what) const;
  Partition& PartOf(uint32_t sw) { return *parts_[switches_[sw].partition]; }
  // The loop of one partition (or of the only one) up to and including `last`.
  void RunPartition(Partition& part, TimeNs last);
  Status RunWindows(TimeNs until);
  void RunWindow(TimeNs last);
  // Partition k takes in the frames sent to it in a window of `parity`; a partition frees the
  // frames it sent in one; both at once after a run's last window.
  void TakeCrossings(uint32_t k, uint32_t parity);
  void FreeSent(Partition& part, uint32_t parity);
  void FlushCrossings();
  // Ranks: after a window, the frames for other ranks' partitions go to them and theirs come in.
  void SendAcrossRanks();
  void TakeFromRank(std::span<const uint8_t> frames);
  WindowTerms AgreeOnWindow(WindowTerms mine);
  // A failure on any rank, as the first failing rank tells it.
  Status AgreedFailure(const Status& mine);
  // After a run: every rank learns the others' counts and reports, and the latest clock.
  void GatherRanks();
  void WriteReport(WireWriter& out) const;
  void ReadReport(WireReader& in);
  Tally SwitchTally(const SwitchSlot& slot) const;
  std::string SwitchSummary(const SwitchSlot& slot) const;
  bool Runs(const SwitchSlot& slot) const { return parts_[slot.partition]->local; }
  void SetClocks(TimeNs now);
  // The events still due (the limits' messages).
  std::size_t EventsDue() const;
  void Dispatch(Partition& part, const Event& event);
  void Service(uint32_t sw, PortId port);
  void ScheduleService(uint32_t sw, PortId port, TimeNs earliest);
  // The service of every port that may be ready sooner than its pending one (the ports the TM
  // marked, and just_served), and the CPU port's (ScheduleCpu).
  void ScheduleAllServices(uint32_t sw, PortId just_served = kPortUnset);
  // SetCheckSkippedServices: sets failure_ if a port the TM did not mark needs a service.
  void CheckSkippedServices(uint32_t sw);
  // An event when the switch's CPU port next has work (a program without an agent never has).
  void ScheduleCpu(uint32_t sw);
  // An event when the switch's next digest is due (a program that sends none never has one).
  void ScheduleControlPlane(uint32_t sw);
  void Deliver(uint32_t sw, PortId port, Packet* pkt);
  void SendFromHost(HostSlot& host, Packet* pkt);
  // Queues an event `node` scheduled (a switch's index, or kHostNode | a host's), keyed by node
  // and its own count `pushes` when partitioned.
  void Push(Partition& part, Event event, uint64_t node, uint64_t& pushes);
  static constexpr uint64_t kHostNode = uint64_t{1} << 23;
  // The partitioned key of the next event `node` schedules: the node, then its own count.
  static uint64_t NodeKey(uint64_t node, uint64_t& pushes) { return (node << 40) | pushes++; }
  // Once no event remains (on any rank): the sampler's last look and the hosts' Finish, once.
  Status FinishIfIdle();
  bool LocalIdle() const;
  TimeNs SerializationNs(const Switch& sw, PortId port, uint32_t len) const;
  std::string Describe(const Attachment& attachment) const;

  uint64_t seed_;
  bool node_order_;  // partitioned: events at one instant keyed by the node that scheduled them
  std::vector<std::unique_ptr<Partition>> parts_;  // before the switches (their pools)
  std::vector<SwitchSlot> switches_;
  std::vector<std::unique_ptr<HostSlot>> hosts_;
  RankExchange* ranks_ = nullptr;
  std::vector<uint32_t> local_parts_;  // the partitions this process runs
  bool ranks_idle_ = false;            // ranks: no event was due anywhere at the last agreement
  std::vector<RemoteSwitch> remote_;   // by switch index; empty without ranks
  EngineCounters remote_counters_;     // the other ranks' summed (GatherRanks)
  uint64_t remote_events_ = 0, remote_stale_ = 0, remote_in_use_ = 0;
  Status failure_;  // a partitioned run's limits
  EngineLimits limits_;
  TimeNs lookahead_ns_ = kNever;
  std::unique_ptr<ThreadArena> arena_;  // a partitioned run's threads, kept between runs
  uint32_t parity_ = 0;  // of the window running: where its crossings go
  WindowStats window_stats_;
  TimeNs sample_period_ns_ = 0;
  TimeNs next_sample_ns_ = kNever;
  std::function<void(TimeNs)> sampler_;
  bool limit_reached_ = false;
  bool check_skipped_services_ = false;
  TimeNs first_event_ns_ = kNever;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace swemu
