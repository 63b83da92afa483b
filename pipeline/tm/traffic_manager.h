#pragma once
// The traffic manager between the ingress and egress pipelines: per egress port 8 queues
// (queue 7 = highest strict priority) with packet/byte accounting, per-queue ECN-marking and drop
// thresholds, per-port and shared buffer limits, strict or DRR scheduling, per-queue pps and
// per-port link-rate shaping, multicast replication, and a shared buffer with per-queue guaranteed
// minimums and dynamic thresholds (docs/architecture.md, "The buffer model").
//
// Time is injected: every fast-path call takes `now`. One thread owns a TrafficManager; control
// calls are made by that thread (or while it is paused). The pool must outlive the TM; the
// destructor returns every queued packet to it.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/drop_reason.h"
#include "pipeline/core/packet.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"
#include "pipeline/tm/multicast.h"
#include "pipeline/tm/pacer.h"
#include "pipeline/tm/packet_ring.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {

struct QueueCounters {
  uint64_t enqueued = 0;
  uint64_t dequeued = 0;
  uint64_t marked = 0;   // CE marks the egress pipeline really applied (CountMarked)
  uint64_t dropped = 0;  // every TM drop aimed at this queue, whatever the reason
  uint64_t enq_bytes = 0;
  uint64_t deq_bytes = 0;
  uint32_t max_depth_pkts = 0;
  uint64_t max_depth_bytes = 0;
};

class TrafficManager {
 public:
  static Result<std::unique_ptr<TrafficManager>> Create(const TmConfig& config, PacketPool& pool);
  ~TrafficManager();
  TrafficManager(const TrafficManager&) = delete;
  TrafficManager& operator=(const TrafficManager&) = delete;

  // ---- Fast path ----

  // Queues `pkt` on (meta.egress_spec, meta.queue_id & 7), or replicates it to every copy of
  // group meta.mcast_grp when that is non-zero (copies get egress_spec and egress_rid; the last
  // copy is the original). Takes ownership of `pkt`: dropped packets are counted under their
  // reason and freed. Returns the number of copies admitted (0 when dropped). With push-out
  // (TmConfig::pushout) an admission may drop queued packets of lower priority (tm_pushout).
  uint32_t Enqueue(Packet* pkt, TimeNs now) noexcept;
  // Enqueue of each packet in order, all at `now`; returns the copies admitted.
  uint32_t EnqueueBurst(Packet* const* pkts, uint32_t n, TimeNs now) noexcept;
  // Whether `b` belongs to the run that `a` starts: both unicast (mcast_grp 0), for the same
  // queue (the same egress_spec and queue_id & 7). SameRun(a, a) holds for a unicast `a`.
  static bool SameRun(const Metadata& a, const Metadata& b) noexcept {
    return (a.mcast_grp | b.mcast_grp) == 0 && RunKey(a) == RunKey(b);
  }
  // The queue a unicast packet goes to, as one word: egress_spec and queue_id & 7.
  static uint32_t RunKey(const Metadata& meta) noexcept {
    return (uint32_t{meta.egress_spec} << 8) | (meta.queue_id & (kQueuesPerPort - 1));
  }
  // EnqueueBurst of a run a caller already knows: n packets for one queue, each SameRun with the
  // first, run_bytes in all. Admitted with the accounting updated once when the whole run fits
  // every limit, else packet by packet; how many.
  uint32_t EnqueueRun(Packet* const* pkts, uint32_t n, uint64_t run_bytes, TimeNs now) noexcept;
  // Cut-through: a run as EnqueueRun takes it, for a port that holds nothing and is plain
  // (strict priority, unshaped, no paced queue), when the run fits every limit. The run then
  // passes the queue without being stored: each packet gets the metadata and the counters count
  // it exactly as if EnqueueRun had queued the run and DequeueBurst had taken it at `now`, and
  // true is returned; the caller runs egress on it at once. Otherwise false, nothing changed.
  bool PassThrough(Packet* const* pkts, uint32_t n, uint64_t run_bytes, TimeNs now) noexcept;
  // The next packet of `port` if its link and the queue rates allow one at `now`, chosen by the
  // port's scheduler; nullptr otherwise. A backlogged port keeps its exact pace even if called
  // late: a transmission starts when the link got free (or the packet arrived), not at `now`.
  Packet* Dequeue(PortId port, TimeNs now) noexcept;
  // Up to `max` packets of `port` at `now` into `out`, exactly as that many Dequeue calls would
  // return them; how many. A plain port (strict priority, unshaped) takes each queue's run of
  // packets at once, with its accounting updated once per run.
  uint32_t DequeueBurst(PortId port, TimeNs now, Packet** out, uint32_t max) noexcept;
  // Earliest time >= now at which Dequeue(port) returns a packet; kNever when the port is empty.
  // It is max(now, X), X a function of the port's own state, so between two calls X moves
  // earlier only when packets are queued on the port (Accept: unicast, multicast copies, packets
  // recirculated or sent by the CPU alike) or a control call changes a rate of the port
  // (SetPortRate, SetQueueRate); a dequeue or FreeAll moves it later or to kNever. Both mark the
  // port (TakeMarkedPorts), so a scheduler that keeps a service pending at or before every
  // port's next time only has to look again at the marked ports.
  TimeNs NextDequeueTime(PortId port, TimeNs now) const noexcept;
  // Marks `port` as above (the engine re-marks a port it must look at again); ignored out of range.
  void MarkPort(PortId port) noexcept {
    if (port < num_ports_) marked_[port >> 6] |= uint64_t{1} << (port & 63);
  }
  // Calls fn(port) for every marked port, in ascending order, and unmarks it first (fn may mark
  // it again for the next call). Every port starts marked.
  template <typename Fn>
  void TakeMarkedPorts(Fn&& fn) {
    for (std::size_t w = 0; w < marked_.size(); ++w) {
      uint64_t bits = marked_[w];
      marked_[w] = 0;
      for (; bits != 0; bits &= bits - 1) {
        fn(static_cast<PortId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
      }
    }
  }

  // Dataplane-settable thresholds (PCN moves them per packet); out-of-range port/queue ignored.
  void SetEcnThreshold(PortId port, int queue, uint64_t bytes) noexcept;
  void SetDropThreshold(PortId port, int queue, uint64_t bytes) noexcept;
  // RED with ECN, as commodity switches do it (DLCP's selective dropping, 4.2): with this many
  // packets or more already queued, an arriving ECT packet is marked (meta.congested) and a
  // Not-ECT one is dropped (tm_red_not_ect). 0 = off.
  void SetRedThreshold(PortId port, int queue, uint32_t pkts) noexcept;
  uint64_t EcnThreshold(PortId port, int queue) const noexcept;
  uint64_t DropThreshold(PortId port, int queue) const noexcept;
  uint32_t RedThreshold(PortId port, int queue) const noexcept;
  // Egress calls this when it really marks CE on a packet from (port, queue).
  void CountMarked(PortId port, int queue) noexcept;

  // ---- Control path: one-line errors naming port/queue/value; nothing changes on error ----

  // BMv2 set_queue_depth / set_queue_rate: no port = every port, no queue = every queue.
  // Lowering a depth below the current occupancy refuses new packets until it drains; raising
  // it beyond a queue's ring (sized to the depth, rounded up to a power of two) reallocates it.
  Status SetQueueDepth(std::optional<PortId> port, std::optional<int> queue, uint32_t pkts);
  Status SetQueueRate(std::optional<PortId> port, std::optional<int> queue, uint64_t pps);
  Status SetPortRate(std::optional<PortId> port, uint64_t bps);  // 0 = unshaped
  Status SetScheduler(std::optional<PortId> port, SchedulerKind kind);
  Status SetQueueWeight(PortId port, int queue, uint32_t weight);
  Status SetEcnThresholdChecked(PortId port, int queue, uint64_t bytes);
  Status SetDropThresholdChecked(PortId port, int queue, uint64_t bytes);
  Status SetRedThresholdChecked(PortId port, int queue, uint64_t pkts);
  // Dynamic thresholds: alpha 0 = off (ValidateAlpha); a guaranteed minimum is reserved out of
  // the shared buffer, so the minimums together must fit in it.
  Status SetQueueAlpha(std::optional<PortId> port, std::optional<int> queue, double alpha);
  Status SetGuaranteedMin(std::optional<PortId> port, std::optional<int> queue, uint64_t bytes);
  Status SetPortBuffer(uint64_t bytes);    // 0 = no per-port limit
  Status SetSharedBuffer(uint64_t bytes);  // > 0, at least the reserved minimums
  // Frees every queued packet (shutdown, reset); returns how many, for the caller's accounting.
  uint64_t FreeAll();

  // Multicast, BMv2 names (mc_mgrp_create, mc_node_create, ...); see McTable.
  Result<uint16_t> McGroupCreate(uint16_t grp) { return mc_.GroupCreate(grp); }
  Status McGroupDestroy(uint16_t grp) { return mc_.GroupDestroy(grp); }
  Result<uint32_t> McNodeCreate(uint16_t rid, std::vector<PortId> ports) {
    return mc_.NodeCreate(rid, std::move(ports));
  }
  Status McNodeDestroy(uint32_t handle) { return mc_.NodeDestroy(handle); }
  Status McNodeAssociate(uint16_t grp, uint32_t handle) { return mc_.NodeAssociate(grp, handle); }
  Status McNodeDissociate(uint16_t grp, uint32_t handle) { return mc_.NodeDissociate(grp, handle); }
  std::string McDump() const { return mc_.Dump(); }
  // A group's copies in replication order: sharded real time replicates before the TM, so each
  // copy can go to the lcore that owns its port.
  std::span<const McCopy> McCopies(uint16_t grp) const noexcept { return mc_.Copies(grp); }

  // ---- Configuration read-back (CLI `show`) ----
  uint16_t num_ports() const { return num_ports_; }
  uint32_t QueueDepthLimit(PortId port, int queue) const;
  uint64_t QueueRate(PortId port, int queue) const;
  uint32_t QueueWeight(PortId port, int queue) const;
  uint64_t PortRate(PortId port) const;
  SchedulerKind Scheduler(PortId port) const;
  uint64_t port_buffer_bytes() const { return port_buffer_bytes_; }
  uint64_t shared_buffer_bytes() const { return shared_buffer_bytes_; }
  bool pushout() const { return pushout_; }
  double QueueAlpha(PortId port, int queue) const;
  uint64_t GuaranteedMin(PortId port, int queue) const;
  // The shared pool: the shared buffer less every queue's guaranteed minimum, and the bytes of it
  // in use (each queue's bytes beyond its minimum).
  uint64_t PoolBytes() const { return pool_bytes_; }
  uint64_t PoolUsedBytes() const { return shared_used_bytes_ - reserved_used_bytes_; }
  // The most bytes queue (port, queue) may hold now: its minimum + alpha x the free pool
  // (rounded down); with alpha off, its minimum + the free pool. 0 for an out-of-range queue.
  uint64_t DynamicLimit(PortId port, int queue) const;
  // Host memory: the per-port and per-queue state, every queue's ring of packet pointers (sized
  // to its depth limit, rounded up to a power of two) and the multicast tables. Queued packets'
  // buffers belong to the PacketPool and are not counted here.
  uint64_t HostBytes() const;
  // Ring slots over every queue, as allocated.
  uint64_t RingSlots() const;

  // ---- Counters and occupancy (zero for an out-of-range port/queue) ----
  const QueueCounters& queue_counters(PortId port, int queue) const;
  uint32_t DepthPkts(PortId port, int queue) const;
  uint64_t DepthBytes(PortId port, int queue) const;
  uint64_t PortDepthBytes(PortId port) const;
  uint64_t SharedUsedBytes() const { return shared_used_bytes_; }
  uint64_t TotalQueued() const { return total_queued_; }
  uint64_t drops(DropReason reason) const;
  // Extra copies replication asked for (n - 1 per packet to an n-copy group), whether or not the
  // clone succeeded; a failed clone is a kMulticastCloneFailed drop. So, over the TM's life:
  // packets in + multicast_copies() == admitted + sum of drops(reason) - drops(kTmPushout)
  // (a packet pushed out was admitted first).
  uint64_t multicast_copies() const { return multicast_copies_; }
  // Zeroes every counter; max depths restart from the current depths.
  void ResetCounters();
  // One line per queue that is occupied, has counted anything or has an alpha or a minimum (all
  // queues if `all`).
  std::string DescribeQueues(bool all = false) const;

 private:
  struct Queue {
    PacketRing ring;
    uint64_t bytes = 0;
    uint32_t limit_pkts = 0;
    uint64_t ecn_threshold = 0;
    uint64_t drop_threshold = 0;
    uint32_t red_pkts = 0;  // SetRedThreshold; 0 = off
    bool managed = false;   // alpha or min_bytes set: admission takes BufferCheck
    int64_t deficit = 0;  // DRR
    uint64_t quantum = 0;
    uint32_t weight = 1;
    Pacer pacer;  // queue rate in packets/s
    QueueCounters counters;
  };
  // A queue's share of the shared buffer, beside its Queue (which stays three cache lines).
  struct QueueBuffer {
    double alpha = 0;        // dynamic threshold; 0 = off
    uint64_t min_bytes = 0;  // guaranteed minimum
  };
  struct Port {
    Queue queues[kQueuesPerPort];
    uint64_t bytes = 0;
    uint32_t nonempty = 0;  // bit q: queue q holds packets
    uint32_t paced = 0;     // bit q: queue q has a packet rate
    SchedulerKind scheduler = SchedulerKind::kStrict;
    uint8_t drr_current = 0;  // queue whose DRR turn it is
    bool drr_fresh = false;   // it already received its quantum this turn
    bool plain = true;        // strict priority, unshaped, no paced queue: the quick path
    Pacer link;               // link rate in bits/s
    QueueBuffer buffers[kQueuesPerPort];
  };

  TrafficManager(const TmConfig& config, PacketPool& pool);
  bool Admit(Packet* pkt, TimeNs now) noexcept;
  // Whether n more packets, run_bytes in all, fit every limit of `queue` on `port`: its packet
  // limit and drop threshold, the port buffer and the shared buffer; and, with a RED threshold,
  // whether the whole run stays below it (else it is admitted packet by packet).
  bool RunFits(const Port& port, const Queue& queue, uint32_t n, uint64_t run_bytes) const noexcept;
  // Whether run_bytes more fit queue's share of the buffer (docs/architecture.md): kNone, or
  // kTmSharedBufferFull / kTmDynamicThreshold. The threshold is alpha x (pool - used - extra):
  // Admit passes extra 0 (the rule for one packet); RunFits passes the run's own growth, a bound
  // every packet of the run meets when the last one does.
  DropReason BufferCheck(const Queue& queue, const QueueBuffer& buffer, uint64_t run_bytes,
                         bool whole_run) const noexcept;
  // Bytes of `bytes` in a queue with minimum `min` that sit in the shared pool, beyond it.
  static uint64_t PoolPart(uint64_t min, uint64_t bytes) noexcept {
    return bytes > min ? bytes - min : 0;
  }
  // Moves the reserved-bytes total as a queue with minimum `min` goes from `before` to `after`.
  void TrackReserved(uint64_t min, uint64_t before, uint64_t after) noexcept {
    reserved_used_bytes_ += std::min(after, min);
    reserved_used_bytes_ -= std::min(before, min);
    shared_limit_bytes_ = pool_bytes_ + reserved_used_bytes_;
  }
  uint64_t FreePool(uint64_t extra) const noexcept;
  std::string DescribeBuffer(PortId port, int queue) const;
  // Queues n packets (run_bytes in all) that fit queue qid of the port: their queue metadata,
  // then the accounting, once.
  void Accept(Port& port, int qid, Packet* const* pkts, uint32_t n, uint64_t run_bytes,
              TimeNs now) noexcept;
  uint32_t EnqueueMulticast(Packet* pkt, TimeNs now) noexcept;
  void Drop(Packet* pkt, DropReason reason, Queue* queue) noexcept;
  // Push-out for a unicast arrival `pkt` to queue qid of the port, refused for the port buffer
  // or (qid unmanaged) the shared buffer while its own queue's limits hold: when dropping every
  // lower queue of the port would make room, drops their tail packets, the lowest queue's first,
  // until it fits, and returns true; else changes nothing and returns false.
  bool PushOut(Port& port, int qid, const Packet& pkt) noexcept;
  // Drops the newest packet of queue qid (non-empty) of the port as tm_pushout, with its
  // accounting.
  void DropTail(Port& port, int qid) noexcept;
  int ScheduleShaped(Port& port, TimeNs now) noexcept;
  uint32_t EligibleQueues(const Port& port, TimeNs now) const noexcept;
  int PickWeighted(Port& port, uint32_t eligible) noexcept;
  void StartTransmission(Port& port, Queue& queue, const Packet& pkt, TimeNs now) noexcept;
  static void UpdatePlain(Port& port);
  // Pops up to max packets from queue qid (non-empty) of the port, with their queue metadata,
  // and updates the accounting once.
  uint32_t DequeueRun(Port& port, PortId port_id, int qid, TimeNs now, Packet** out,
                      uint32_t max) noexcept;
  const Queue* FindQueue(PortId port, int queue) const noexcept;
  Queue* FindQueue(PortId port, int queue) noexcept;
  Status CheckPortQueue(PortId port, int queue) const;
  template <typename Fn>
  Status ForSelected(std::optional<PortId> port, std::optional<int> queue, Fn fn);

  PacketPool& pool_;
  uint16_t num_ports_;
  uint32_t wire_overhead_bytes_;
  uint32_t quantum_bytes_;
  bool pushout_;
  uint64_t port_buffer_bytes_;
  uint64_t shared_buffer_bytes_;
  uint64_t shared_used_bytes_ = 0;
  uint64_t pool_bytes_;               // shared_buffer_bytes_ - reserved_bytes_
  uint64_t reserved_bytes_ = 0;       // every queue's guaranteed minimum
  uint64_t reserved_used_bytes_ = 0;  // the part of shared_used_bytes_ within minimums
  // pool_bytes_ + reserved_used_bytes_: a queue without a minimum fits the pool when
  // shared_used_bytes_ + its bytes stay within it (shared_buffer_bytes_ when nothing is reserved).
  uint64_t shared_limit_bytes_;
  uint64_t total_queued_ = 0;
  uint64_t multicast_copies_ = 0;
  uint64_t drops_[kDropReasonCount] = {};
  std::unique_ptr<Port[]> ports_;
  std::vector<uint64_t> marked_;  // bit p % 64 of word p / 64: port p is marked (MarkPort)
  McTable mc_;
};

}  // namespace swemu
