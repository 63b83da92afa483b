// Traffic manager fast path: admission, replication, scheduling and shaping.
#include "pipeline/tm/traffic_manager.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace swemu {
namespace {

// The IPv4 ECN field says ECT(0), ECT(1) or CE; anything not IPv4 is Not-ECT.
bool IsEct(const Packet& pkt) noexcept {
  return pkt.hdr.has_ipv4() && (pkt.data[pkt.hdr.ipv4 + 1] & 0x3) != 0;
}

uint32_t Saturate32(uint64_t value) {
  return static_cast<uint32_t>(std::min<uint64_t>(value, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

// Always inlined into its two callers, EnqueueRun (a run that fits) and Admit (one packet).
[[gnu::always_inline]] inline void TrafficManager::Accept(Port& port, int qid, Packet* const* pkts,
                                                          uint32_t n, uint64_t run_bytes,
                                                          TimeNs now) noexcept {
  Queue& queue = port.queues[qid];
  const uint32_t depth = queue.ring.size();
  uint64_t bytes = queue.bytes;
  for (uint32_t i = 0; i < n; ++i) {  // each packet sees the queue as the one before left it
    Metadata& meta = pkts[i]->meta;
    meta.queue_id = static_cast<uint8_t>(qid);
    meta.enq_ts = now;
    meta.enq_qdepth = depth + i;
    meta.enq_qdepth_bytes = Saturate32(bytes);
    meta.congested = queue.ecn_threshold != 0 && bytes >= queue.ecn_threshold;
    bytes += pkts[i]->len;
  }
  queue.ring.PushBurst(pkts, n);
  if (queue.managed) [[unlikely]] TrackReserved(port.buffers[qid].min_bytes, queue.bytes, bytes);
  queue.bytes = bytes;
  port.bytes += run_bytes;
  port.nonempty |= 1u << qid;
  MarkPort(static_cast<PortId>(&port - ports_.get()));
  shared_used_bytes_ += run_bytes;
  total_queued_ += n;
  QueueCounters& c = queue.counters;
  c.enqueued += n;
  c.enq_bytes += run_bytes;
  c.max_depth_pkts = std::max(c.max_depth_pkts, depth + n);
  c.max_depth_bytes = std::max(c.max_depth_bytes, bytes);
}

// Each limit is a bound on a running total, so a run fits when its last packet does.
inline bool TrafficManager::RunFits(const Port& port, const Queue& queue, uint32_t n,
                                    uint64_t run_bytes) const noexcept {
  // A RED threshold lets the run through only when all of it stays below (no mark, no drop).
  return queue.ring.size() + n <= queue.limit_pkts &&
         (queue.red_pkts == 0 || queue.ring.size() + n <= queue.red_pkts) &&
         (queue.drop_threshold == 0 || queue.bytes + run_bytes <= queue.drop_threshold) &&
         (port_buffer_bytes_ == 0 || port.bytes + run_bytes <= port_buffer_bytes_) &&
         (queue.managed ? BufferCheck(queue, port.buffers[&queue - port.queues], run_bytes,
                                      true) == DropReason::kNone
                        : shared_used_bytes_ + run_bytes <= shared_limit_bytes_);
}

uint64_t TrafficManager::FreePool(uint64_t extra) const noexcept {
  const uint64_t used = PoolUsedBytes() + extra;
  return pool_bytes_ > used ? pool_bytes_ - used : 0;
}

// Bytes up to the queue's minimum come from its reserve; beyond it, from the shared pool, while
// the pool has room and, with alpha, while the queue's pool bytes stay within alpha x the pool
// left free. A packet straddling the minimum takes its reserve's rest and the pool for the part
// beyond. Both bounds hold for a run when they hold for its last packet: the queue's pool bytes
// only grow along a run and the free pool only shrinks.
// Out of line: queues without alpha or a minimum never call it, and their path stays small.
[[gnu::noinline]] DropReason TrafficManager::BufferCheck(const Queue& queue,
                                                         const QueueBuffer& buffer,
                                                         uint64_t run_bytes,
                                                         bool whole_run) const noexcept {
  const uint64_t pool_after = PoolPart(buffer.min_bytes, queue.bytes + run_bytes);
  const uint64_t grow = pool_after - PoolPart(buffer.min_bytes, queue.bytes);
  if (grow == 0) return DropReason::kNone;
  if (PoolUsedBytes() + grow > pool_bytes_) return DropReason::kTmSharedBufferFull;
  if (buffer.alpha == 0) return DropReason::kNone;
  const uint64_t limit = DynamicThresholdBytes(buffer.alpha, FreePool(whole_run ? grow : 0));
  return pool_after <= limit ? DropReason::kNone : DropReason::kTmDynamicThreshold;
}

uint32_t TrafficManager::Enqueue(Packet* pkt, TimeNs now) noexcept {
  return EnqueueBurst(&pkt, 1, now);
}

uint32_t TrafficManager::EnqueueBurst(Packet* const* pkts, uint32_t n, TimeNs now) noexcept {
  uint32_t admitted = 0;
  for (uint32_t i = 0; i < n;) {
    const Metadata& meta = pkts[i]->meta;
    if (meta.mcast_grp != 0) [[unlikely]] {
      admitted += EnqueueMulticast(pkts[i++], now);
      continue;
    }
    // The run of unicast packets for the same queue (a burst from one port to one port is one).
    // Its bytes add up in the same pass.
    uint64_t run_bytes = pkts[i]->len;
    uint32_t end = i + 1;
    while (end < n && SameRun(meta, pkts[end]->meta)) {
      run_bytes += pkts[end]->len;
      ++end;
    }
    admitted += EnqueueRun(pkts + i, end - i, run_bytes, now);
    i = end;
  }
  return admitted;
}

uint32_t TrafficManager::EnqueueRun(Packet* const* pkts, uint32_t n, uint64_t run_bytes,
                                    TimeNs now) noexcept {
  const PortId port_id = pkts[0]->meta.egress_spec;
  Port* port = port_id < num_ports_ ? &ports_[port_id] : nullptr;
  const int qid = pkts[0]->meta.queue_id & (kQueuesPerPort - 1);
  Queue* queue = port != nullptr ? &port->queues[qid] : nullptr;
  if (queue == nullptr || !RunFits(*port, *queue, n, run_bytes)) [[unlikely]] {
    uint32_t admitted = 0;
    for (uint32_t i = 0; i < n; ++i) admitted += Admit(pkts[i], now) ? 1 : 0;
    return admitted;
  }
  Accept(*port, qid, pkts, n, run_bytes, now);
  return n;
}

bool TrafficManager::PassThrough(Packet* const* pkts, uint32_t n, uint64_t run_bytes,
                                 TimeNs now) noexcept {
  const PortId port_id = pkts[0]->meta.egress_spec;
  if (port_id >= num_ports_) return false;
  Port& port = ports_[port_id];
  const int qid = pkts[0]->meta.queue_id & (kQueuesPerPort - 1);
  Queue& queue = port.queues[qid];
  // A run of 4 GiB or more would need the saturating byte depths: it takes the queued path.
  if (port.nonempty != 0 || !port.plain || run_bytes > UINT32_MAX ||
      !RunFits(port, queue, n, run_bytes)) {
    return false;
  }
  // One pass: what Accept stamps on an empty queue, then what DequeueRun stamps on the way out.
  // Byte depths fit 32 bits (run_bytes does), and no threshold means no byte depth reaches it.
  const uint64_t ecn = queue.ecn_threshold != 0 ? queue.ecn_threshold : UINT64_MAX;
  const auto total = static_cast<uint32_t>(run_bytes);
  uint32_t before = 0;  // bytes queued ahead of packet i
  for (uint32_t i = 0; i < n; ++i) {
    Metadata& meta = pkts[i]->meta;
    const uint32_t len = pkts[i]->len;
    meta.queue_id = static_cast<uint8_t>(qid);
    meta.enq_ts = now;
    meta.enq_qdepth = i;
    meta.enq_qdepth_bytes = before;
    meta.congested = before >= ecn;
    before += len;
    meta.egress_port = port_id;
    meta.deq_qdepth = n - 1 - i;
    meta.deq_qdepth_bytes = total - before;
    meta.deq_timedelta = 0;
  }
  QueueCounters& c = queue.counters;
  c.enqueued += n;
  c.dequeued += n;
  c.enq_bytes += run_bytes;
  c.deq_bytes += run_bytes;
  c.max_depth_pkts = std::max(c.max_depth_pkts, n);
  c.max_depth_bytes = std::max(c.max_depth_bytes, run_bytes);
  return true;
}

inline bool TrafficManager::Admit(Packet* pkt, TimeNs now) noexcept {
  PortId port_id = pkt->meta.egress_spec;
  if (port_id >= num_ports_) [[unlikely]] {
    Drop(pkt, DropReason::kBadEgressPort, nullptr);
    return false;
  }
  // Queue ids are 3 bits on the wire of a PISA TM: higher bits are ignored, not clamped.
  int qid = pkt->meta.queue_id & (kQueuesPerPort - 1);
  Port& port = ports_[port_id];
  Queue& queue = port.queues[qid];
  uint64_t len = pkt->len;
  DropReason reason = DropReason::kNone;
  if (queue.ring.size() >= queue.limit_pkts) {
    reason = DropReason::kTmQueueFull;
  } else if (queue.drop_threshold != 0 && queue.bytes + len > queue.drop_threshold) {
    reason = DropReason::kTmDropThreshold;
  } else if (port_buffer_bytes_ != 0 && port.bytes + len > port_buffer_bytes_) {
    reason = DropReason::kTmPortBufferFull;
  } else if (queue.managed) [[unlikely]] {
    reason = BufferCheck(queue, port.buffers[qid], len, false);
  } else if (shared_used_bytes_ + len > shared_limit_bytes_) {
    reason = DropReason::kTmSharedBufferFull;
  }
  const bool red = queue.red_pkts != 0 && queue.ring.size() >= queue.red_pkts;
  if (red && reason == DropReason::kNone && !IsEct(*pkt)) reason = DropReason::kTmRedNotEct;
  if (reason != DropReason::kNone) [[unlikely]] {
    // Push-out makes room in the buffers, not in the queue, and not for a packet RED would drop.
    const bool buffer =
        reason == DropReason::kTmPortBufferFull || reason == DropReason::kTmSharedBufferFull;
    if (!pushout_ || !buffer || (red && !IsEct(*pkt)) || !PushOut(port, qid, *pkt)) {
      Drop(pkt, reason, &queue);
      return false;
    }
  }
  Accept(port, qid, &pkt, 1, len, now);
  if (red) pkt->meta.congested = true;  // egress marks it CE (l2l3's ECN rewrite)
  return true;
}

// Out of line: only a refused arrival with push-out on calls it.
[[gnu::noinline]] bool TrafficManager::PushOut(Port& port, int qid, const Packet& pkt) noexcept {
  const uint32_t lower = port.nonempty & ((1u << qid) - 1);
  if (lower == 0 || pkt.meta.mcast_grp != 0 || port.scheduler != SchedulerKind::kStrict) {
    return false;
  }
  const Queue& queue = port.queues[qid];
  const uint64_t len = pkt.len;
  // What dropping every lower queue would free: port bytes, and shared-pool bytes (each queue's
  // bytes beyond its minimum; the shared limit falls with the reserved bytes released).
  uint64_t port_free = 0;
  uint64_t pool_free = 0;
  for (uint32_t bits = lower; bits != 0; bits &= bits - 1) {
    const int q = std::countr_zero(bits);
    port_free += port.queues[q].bytes;
    pool_free += PoolPart(port.buffers[q].min_bytes, port.queues[q].bytes);
  }
  // A managed queue's own share only grows as others' pool bytes go: it must hold already.
  const bool shared_ok =
      queue.managed ? BufferCheck(queue, port.buffers[qid], len, false) == DropReason::kNone
                    : shared_used_bytes_ - pool_free + len <= shared_limit_bytes_;
  const bool port_ok =
      port_buffer_bytes_ == 0 || port.bytes - port_free + len <= port_buffer_bytes_;
  if (!shared_ok || !port_ok) return false;
  while ((port_buffer_bytes_ != 0 && port.bytes + len > port_buffer_bytes_) ||
         (!queue.managed && shared_used_bytes_ + len > shared_limit_bytes_)) {
    DropTail(port, std::countr_zero(port.nonempty));  // queue 0 is served last
  }
  return true;
}

void TrafficManager::DropTail(Port& port, int qid) noexcept {
  Queue& queue = port.queues[qid];
  Packet* pkt = queue.ring.PopBack();
  const uint64_t bytes = queue.bytes - pkt->len;
  if (queue.managed) TrackReserved(port.buffers[qid].min_bytes, queue.bytes, bytes);
  queue.bytes = bytes;
  port.bytes -= pkt->len;
  shared_used_bytes_ -= pkt->len;
  --total_queued_;
  if (queue.ring.empty()) {
    port.nonempty &= ~(1u << qid);
    queue.deficit = 0;
  }
  Drop(pkt, DropReason::kTmPushout, &queue);
}

uint32_t TrafficManager::EnqueueMulticast(Packet* pkt, TimeNs now) noexcept {
  std::span<const McCopy> copies = mc_.Copies(pkt->meta.mcast_grp);
  if (copies.empty()) {
    Drop(pkt, DropReason::kMulticastEmptyGroup, nullptr);
    return 0;
  }
  multicast_copies_ += copies.size() - 1;
  uint32_t admitted = 0;
  // Clone from the untouched original first; the original itself becomes the last copy.
  for (std::size_t i = 0; i < copies.size(); ++i) {
    bool last = i + 1 == copies.size();
    Packet* copy = last ? pkt : pool_.Clone(*pkt);
    if (copy == nullptr) [[unlikely]] {
      ++drops_[static_cast<std::size_t>(DropReason::kMulticastCloneFailed)];
      if (Queue* queue = FindQueue(copies[i].port, pkt->meta.queue_id & (kQueuesPerPort - 1))) {
        ++queue->counters.dropped;
      }
      continue;
    }
    copy->meta.egress_spec = copies[i].port;
    copy->meta.egress_rid = copies[i].rid;
    admitted += Admit(copy, now) ? 1 : 0;
  }
  return admitted;
}

void TrafficManager::Drop(Packet* pkt, DropReason reason, Queue* queue) noexcept {
  ++drops_[static_cast<std::size_t>(reason)];
  if (queue != nullptr) ++queue->counters.dropped;
  pool_.Free(pkt);
}

uint32_t TrafficManager::EligibleQueues(const Port& port, TimeNs now) const noexcept {
  uint32_t eligible = port.nonempty & ~port.paced;
  for (uint32_t paced = port.nonempty & port.paced; paced != 0; paced &= paced - 1) {
    int qid = std::countr_zero(paced);
    if (port.queues[qid].pacer.ReadyAt() <= now) eligible |= 1u << qid;
  }
  return eligible;
}

// Deficit round robin over the eligible queues: a queue receives its quantum when its turn
// comes and keeps the turn while its deficit covers its head packet.
int TrafficManager::PickWeighted(Port& port, uint32_t eligible) noexcept {
  for (;;) {
    for (int step = 0; step < kQueuesPerPort; ++step) {
      int qid = port.drr_current;
      Queue& queue = port.queues[qid];
      if (eligible & (1u << qid)) {
        if (!port.drr_fresh) {
          queue.deficit += static_cast<int64_t>(queue.quantum);
          port.drr_fresh = true;
        }
        int64_t len = queue.ring.front()->len;
        if (queue.deficit >= len) {
          queue.deficit -= len;
          return qid;
        }
      }
      port.drr_current = static_cast<uint8_t>((qid + 1) % kQueuesPerPort);
      port.drr_fresh = false;
    }
    // A whole round and no quantum covers a head packet (jumbo frames, small quantum): grant
    // the rounds that would only add quanta at once, so the next pass picks one.
    uint64_t rounds = std::numeric_limits<uint64_t>::max();
    for (uint32_t bits = eligible; bits != 0; bits &= bits - 1) {
      const Queue& queue = port.queues[std::countr_zero(bits)];
      uint64_t missing = static_cast<uint64_t>(queue.ring.front()->len - queue.deficit);
      rounds = std::min(rounds, (missing + queue.quantum - 1) / queue.quantum);
    }
    for (uint32_t bits = eligible; bits != 0; bits &= bits - 1) {
      Queue& queue = port.queues[std::countr_zero(bits)];
      queue.deficit += static_cast<int64_t>((rounds - 1) * queue.quantum);
    }
  }
}

void TrafficManager::StartTransmission(Port& port, Queue& queue, const Packet& pkt,
                                       TimeNs now) noexcept {
  // The packet could have started when it arrived or when the link got free, whichever is later.
  TimeNs start = std::min(pkt.meta.enq_ts, now);
  if (port.link.enabled()) start = std::max(start, port.link.FreeFloor());
  if (queue.pacer.enabled()) start = std::max(start, queue.pacer.Start(start, 1));
  if (port.link.enabled()) {
    port.link.Start(start, (uint64_t{pkt.len} + wire_overhead_bytes_) * 8);
  }
}

// Ports that shape or weigh; out of line so the plain strict-priority path stays small.
[[gnu::noinline]] int TrafficManager::ScheduleShaped(Port& port, TimeNs now) noexcept {
  if (port.link.enabled() && port.link.ReadyAt() > now) return -1;
  uint32_t eligible = EligibleQueues(port, now);
  if (eligible == 0) return -1;
  int qid = port.scheduler == SchedulerKind::kStrict ? 31 - std::countl_zero(eligible)
                                                     : PickWeighted(port, eligible);
  Queue& queue = port.queues[qid];
  if (port.link.enabled() || queue.pacer.enabled()) {
    StartTransmission(port, queue, *queue.ring.front(), now);
  }
  return qid;
}

Packet* TrafficManager::Dequeue(PortId port_id, TimeNs now) noexcept {
  if (port_id >= num_ports_) [[unlikely]] {
    return nullptr;
  }
  Port& port = ports_[port_id];
  if (port.nonempty == 0) return nullptr;
  int qid;
  if (port.plain) [[likely]] {
    qid = 31 - std::countl_zero(port.nonempty);
  } else {
    qid = ScheduleShaped(port, now);
    if (qid < 0) return nullptr;
  }
  Packet* pkt = nullptr;
  DequeueRun(port, port_id, qid, now, &pkt, 1);
  return pkt;
}

uint32_t TrafficManager::DequeueRun(Port& port, PortId port_id, int qid, TimeNs now, Packet** out,
                                    uint32_t max) noexcept {
  Queue& queue = port.queues[qid];
  const uint32_t n = std::min(max, queue.ring.size());
  // Each packet sees the depth the queue had right after it left, as one Dequeue call each.
  uint32_t depth = queue.ring.size();
  uint64_t bytes = queue.bytes;
  for (uint32_t i = 0; i < n; ++i) {  // read from the ring and stamped in one pass
    Packet* pkt = queue.ring.at(i);
    out[i] = pkt;
    Metadata& meta = pkt->meta;
    bytes -= pkt->len;
    meta.egress_port = port_id;
    meta.deq_qdepth = --depth;
    meta.deq_qdepth_bytes = Saturate32(bytes);
    meta.deq_timedelta = Saturate32(now > meta.enq_ts ? now - meta.enq_ts : 0);
  }
  queue.ring.PopFront(n);
  if (queue.managed) [[unlikely]] TrackReserved(port.buffers[qid].min_bytes, queue.bytes, bytes);
  const uint64_t sent_bytes = queue.bytes - bytes;
  queue.bytes = bytes;
  port.bytes -= sent_bytes;
  shared_used_bytes_ -= sent_bytes;
  total_queued_ -= n;
  if (queue.ring.empty()) {
    port.nonempty &= ~(1u << qid);
    queue.deficit = 0;
  }
  queue.counters.dequeued += n;
  queue.counters.deq_bytes += sent_bytes;
  return n;
}

uint32_t TrafficManager::DequeueBurst(PortId port_id, TimeNs now, Packet** out,
                                      uint32_t max) noexcept {
  if (port_id >= num_ports_) [[unlikely]] {
    return 0;
  }
  Port& port = ports_[port_id];
  uint32_t n = 0;
  if (port.plain) [[likely]] {
    // Strict priority with nothing to wait for: each queue's run leaves at once, highest first.
    while (n < max && port.nonempty != 0) {
      const int qid = 31 - std::countl_zero(port.nonempty);
      n += DequeueRun(port, port_id, qid, now, out + n, max - n);
    }
    return n;
  }
  while (n < max) {
    Packet* pkt = Dequeue(port_id, now);
    if (pkt == nullptr) break;
    out[n++] = pkt;
  }
  return n;
}

TimeNs TrafficManager::NextDequeueTime(PortId port_id, TimeNs now) const noexcept {
  if (port_id >= num_ports_) return kNever;
  const Port& port = ports_[port_id];
  if (port.nonempty == 0) return kNever;
  TimeNs at = now;
  if (port.link.enabled()) at = std::max(at, port.link.ReadyAt());
  if ((port.nonempty & ~port.paced) != 0) return at;
  TimeNs queue_ready = kNever;
  for (uint32_t bits = port.nonempty; bits != 0; bits &= bits - 1) {
    queue_ready = std::min(queue_ready, port.queues[std::countr_zero(bits)].pacer.ReadyAt());
  }
  return std::max(at, queue_ready);
}

const TrafficManager::Queue* TrafficManager::FindQueue(PortId port, int queue) const noexcept {
  if (port >= num_ports_ || queue < 0 || queue >= kQueuesPerPort) return nullptr;
  return &ports_[port].queues[queue];
}

TrafficManager::Queue* TrafficManager::FindQueue(PortId port, int queue) noexcept {
  if (port >= num_ports_ || queue < 0 || queue >= kQueuesPerPort) return nullptr;
  return &ports_[port].queues[queue];
}

void TrafficManager::SetEcnThreshold(PortId port, int queue, uint64_t bytes) noexcept {
  if (Queue* q = FindQueue(port, queue)) q->ecn_threshold = bytes;
}

void TrafficManager::SetDropThreshold(PortId port, int queue, uint64_t bytes) noexcept {
  if (Queue* q = FindQueue(port, queue)) q->drop_threshold = bytes;
}

void TrafficManager::SetRedThreshold(PortId port, int queue, uint32_t pkts) noexcept {
  if (Queue* q = FindQueue(port, queue)) q->red_pkts = pkts;
}

uint32_t TrafficManager::RedThreshold(PortId port, int queue) const noexcept {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->red_pkts : 0;
}

uint64_t TrafficManager::EcnThreshold(PortId port, int queue) const noexcept {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->ecn_threshold : 0;
}

uint64_t TrafficManager::DropThreshold(PortId port, int queue) const noexcept {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->drop_threshold : 0;
}

void TrafficManager::CountMarked(PortId port, int queue) noexcept {
  if (Queue* q = FindQueue(port, queue)) ++q->counters.marked;
}

}  // namespace swemu
