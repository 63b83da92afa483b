// Traffic manager construction, control path, counters and `show queues` text.
#include <algorithm>
#include <string>

#include "pipeline/tm/traffic_manager.h"

namespace swemu {
namespace {

const QueueCounters kNoCounters{};

std::string PortQueueName(PortId port, int queue) {
  return "port " + std::to_string(port) + " queue " + std::to_string(queue);
}

}  // namespace

Result<std::unique_ptr<TrafficManager>> TrafficManager::Create(const TmConfig& config,
                                                               PacketPool& pool) {
  SWEMU_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<TrafficManager> tm(new TrafficManager(config, pool));
  for (PortId p = 0; p < tm->num_ports_; ++p) {
    for (Queue& queue : tm->ports_[p].queues) {
      if (!queue.ring.Reserve(queue.limit_pkts)) {
        return Status::Error("tm: cannot allocate queues of " +
                             std::to_string(queue.limit_pkts) + " packets for port " +
                             std::to_string(p));
      }
    }
  }
  return tm;
}

TrafficManager::TrafficManager(const TmConfig& config, PacketPool& pool)
    : pool_(pool),
      num_ports_(config.num_ports),
      wire_overhead_bytes_(config.wire_overhead_bytes),
      quantum_bytes_(config.quantum_bytes),
      pushout_(config.pushout),
      port_buffer_bytes_(config.port_buffer_bytes),
      shared_buffer_bytes_(config.shared_buffer_bytes),
      pool_bytes_(config.shared_buffer_bytes - config.ReservedBytes()),
      reserved_bytes_(config.ReservedBytes()),
      shared_limit_bytes_(pool_bytes_),
      ports_(new Port[config.num_ports]),
      marked_((config.num_ports + 63) / 64, 0),
      mc_(config.num_ports) {
  for (PortId p = 0; p < num_ports_; ++p) {
    Port& port = ports_[p];
    port.scheduler = config.scheduler;
    port.link.SetRate(config.PortRateBps(p));
    const QueueConfig settings = config.QueueFor(p);
    for (int q = 0; q < kQueuesPerPort; ++q) {
      Queue& queue = port.queues[q];
      queue.limit_pkts = settings.depth_pkts;
      queue.ecn_threshold = settings.ecn_threshold_bytes;
      queue.drop_threshold = settings.drop_threshold_bytes;
      queue.weight = settings.weight;
      queue.quantum = uint64_t{settings.weight} * quantum_bytes_;
      queue.pacer.SetRate(settings.rate_pps);
      port.buffers[q] = {settings.alpha, settings.guaranteed_min_bytes};
      queue.managed = settings.alpha != 0 || settings.guaranteed_min_bytes != 0;
      if (settings.rate_pps != 0) port.paced |= 1u << q;
    }
    UpdatePlain(port);
    MarkPort(p);
  }
}

TrafficManager::~TrafficManager() { FreeAll(); }

uint64_t TrafficManager::HostBytes() const {
  uint64_t bytes = sizeof(*this) + uint64_t{num_ports_} * sizeof(Port) + mc_.HostBytes();
  for (PortId p = 0; p < num_ports_; ++p) {
    for (const Queue& queue : ports_[p].queues) bytes += queue.ring.bytes();
  }
  return bytes;
}

uint64_t TrafficManager::RingSlots() const {
  uint64_t slots = 0;
  for (PortId p = 0; p < num_ports_; ++p) {
    for (const Queue& queue : ports_[p].queues) {
      if (queue.ring.bytes() != 0) slots += queue.ring.capacity();
    }
  }
  return slots;
}

void TrafficManager::UpdatePlain(Port& port) {
  port.plain = port.scheduler == SchedulerKind::kStrict && port.paced == 0 && !port.link.enabled();
}

uint64_t TrafficManager::FreeAll() {
  uint64_t freed = 0;
  for (PortId p = 0; p < num_ports_; ++p) {
    Port& port = ports_[p];
    for (Queue& queue : port.queues) {
      while (!queue.ring.empty()) {
        pool_.Free(queue.ring.Pop());
        ++freed;
      }
      queue.bytes = 0;
      queue.deficit = 0;
    }
    port.bytes = 0;
    port.nonempty = 0;
  }
  shared_used_bytes_ = 0;
  reserved_used_bytes_ = 0;
  shared_limit_bytes_ = pool_bytes_;
  total_queued_ = 0;
  return freed;
}

Status TrafficManager::CheckPortQueue(PortId port, int queue) const {
  if (port >= num_ports_) {
    return Status::Error("tm port " + std::to_string(port) + " out of range [0, " +
                         std::to_string(num_ports_ - 1) + "]");
  }
  if (queue < 0 || queue >= kQueuesPerPort) {
    return Status::Error("tm queue " + std::to_string(queue) + " out of range [0, " +
                         std::to_string(kQueuesPerPort - 1) + "]");
  }
  return Status::Ok();
}

// Validates the whole selection before touching anything, then applies fn to each queue.
template <typename Fn>
Status TrafficManager::ForSelected(std::optional<PortId> port, std::optional<int> queue, Fn fn) {
  SWEMU_RETURN_IF_ERROR(CheckPortQueue(port.value_or(0), queue.value_or(0)));
  PortId first_port = port.value_or(0);
  PortId end_port = port.has_value() ? *port + 1 : num_ports_;
  int first_queue = queue.value_or(0);
  int end_queue = queue.has_value() ? *queue + 1 : kQueuesPerPort;
  for (PortId p = first_port; p < end_port; ++p) {
    for (int q = first_queue; q < end_queue; ++q) SWEMU_RETURN_IF_ERROR(fn(ports_[p], q));
  }
  return Status::Ok();
}

Status TrafficManager::SetQueueDepth(std::optional<PortId> port, std::optional<int> queue,
                                     uint32_t pkts) {
  SWEMU_RETURN_IF_ERROR(ValidateQueueDepth(pkts));
  // Grow rings first (the only step that can fail); a grown ring with the old limit is harmless.
  SWEMU_RETURN_IF_ERROR(ForSelected(port, queue, [&](Port& p, int q) {
    if (p.queues[q].ring.Reserve(pkts)) return Status::Ok();
    return Status::Error("tm: cannot allocate " + std::to_string(pkts) + " packet slots for " +
                         PortQueueName(static_cast<PortId>(&p - ports_.get()), q));
  }));
  return ForSelected(port, queue, [&](Port& p, int q) {
    p.queues[q].limit_pkts = pkts;
    return Status::Ok();
  });
}

Status TrafficManager::SetQueueRate(std::optional<PortId> port, std::optional<int> queue,
                                    uint64_t pps) {
  SWEMU_RETURN_IF_ERROR(ValidateQueueRate(pps));
  return ForSelected(port, queue, [&](Port& p, int q) {
    p.queues[q].pacer.SetRate(pps);
    if (pps != 0) {
      p.paced |= 1u << q;
    } else {
      p.paced &= ~(1u << q);
    }
    UpdatePlain(p);
    MarkPort(static_cast<PortId>(&p - ports_.get()));  // the port may be ready sooner
    return Status::Ok();
  });
}

Status TrafficManager::SetPortRate(std::optional<PortId> port, uint64_t bps) {
  SWEMU_RETURN_IF_ERROR(ValidatePortRate(bps));
  return ForSelected(port, 0, [&](Port& p, int) {
    p.link.SetRate(bps);
    UpdatePlain(p);
    MarkPort(static_cast<PortId>(&p - ports_.get()));  // the port may be ready sooner
    return Status::Ok();
  });
}

Status TrafficManager::SetScheduler(std::optional<PortId> port, SchedulerKind kind) {
  if (kind != SchedulerKind::kStrict && kind != SchedulerKind::kWeighted) {
    return Status::Error("tm scheduler " + std::to_string(static_cast<int>(kind)) +
                         " is not strict or weighted");
  }
  return ForSelected(port, 0, [&](Port& p, int) {
    p.scheduler = kind;
    UpdatePlain(p);
    return Status::Ok();
  });
}

Status TrafficManager::SetQueueWeight(PortId port, int queue, uint32_t weight) {
  SWEMU_RETURN_IF_ERROR(CheckPortQueue(port, queue));
  SWEMU_RETURN_IF_ERROR(ValidateWeight(weight));
  Queue& q = ports_[port].queues[queue];
  q.weight = weight;
  q.quantum = uint64_t{weight} * quantum_bytes_;
  return Status::Ok();
}

Status TrafficManager::SetEcnThresholdChecked(PortId port, int queue, uint64_t bytes) {
  SWEMU_RETURN_IF_ERROR(CheckPortQueue(port, queue));
  SetEcnThreshold(port, queue, bytes);
  return Status::Ok();
}

Status TrafficManager::SetDropThresholdChecked(PortId port, int queue, uint64_t bytes) {
  SWEMU_RETURN_IF_ERROR(CheckPortQueue(port, queue));
  SetDropThreshold(port, queue, bytes);
  return Status::Ok();
}

Status TrafficManager::SetRedThresholdChecked(PortId port, int queue, uint64_t pkts) {
  SWEMU_RETURN_IF_ERROR(CheckPortQueue(port, queue));
  if (pkts > kTmMaxQueueDepthPkts) {
    return Status::Error("RED threshold " + std::to_string(pkts) + " packets: at most " +
                         std::to_string(kTmMaxQueueDepthPkts));
  }
  SetRedThreshold(port, queue, static_cast<uint32_t>(pkts));
  return Status::Ok();
}

Status TrafficManager::SetQueueAlpha(std::optional<PortId> port, std::optional<int> queue,
                                    double alpha) {
  SWEMU_RETURN_IF_ERROR(ValidateAlpha(alpha));
  return ForSelected(port, queue, [&](Port& p, int q) {
    p.buffers[q].alpha = alpha;
    p.queues[q].managed = alpha != 0 || p.buffers[q].min_bytes != 0;
    return Status::Ok();
  });
}

Status TrafficManager::SetGuaranteedMin(std::optional<PortId> port, std::optional<int> queue,
                                        uint64_t bytes) {
  // The reserve after the change, checked before anything changes.
  uint64_t reserved = reserved_bytes_;
  SWEMU_RETURN_IF_ERROR(ForSelected(port, queue, [&](Port& p, int q) {
    reserved -= p.buffers[q].min_bytes;
    if (bytes > shared_buffer_bytes_ || reserved > shared_buffer_bytes_ - bytes) {
      return Status::Error("tm guaranteed minimum " + std::to_string(bytes) +
                           " B: the minimums would exceed the shared buffer of " +
                           std::to_string(shared_buffer_bytes_) + " B");
    }
    reserved += bytes;
    return Status::Ok();
  }));
  return ForSelected(port, queue, [&](Port& p, int q) {
    Queue& target = p.queues[q];
    QueueBuffer& buffer = p.buffers[q];
    // The queue's bytes move between its reserve and the pool as its minimum moves.
    reserved_used_bytes_ -= std::min(target.bytes, buffer.min_bytes);
    reserved_used_bytes_ += std::min(target.bytes, bytes);
    reserved_bytes_ = reserved_bytes_ - buffer.min_bytes + bytes;
    buffer.min_bytes = bytes;
    target.managed = buffer.alpha != 0 || bytes != 0;
    pool_bytes_ = shared_buffer_bytes_ - reserved_bytes_;
    shared_limit_bytes_ = pool_bytes_ + reserved_used_bytes_;
    return Status::Ok();
  });
}

Status TrafficManager::SetPortBuffer(uint64_t bytes) {
  port_buffer_bytes_ = bytes;
  return Status::Ok();
}

Status TrafficManager::SetSharedBuffer(uint64_t bytes) {
  if (bytes == 0) return Status::Error("tm shared buffer bytes must be > 0");
  if (bytes < reserved_bytes_) {
    return Status::Error("tm shared buffer " + std::to_string(bytes) +
                         " B is less than the queues' guaranteed minimums (" +
                         std::to_string(reserved_bytes_) + " B)");
  }
  shared_buffer_bytes_ = bytes;
  pool_bytes_ = bytes - reserved_bytes_;
  shared_limit_bytes_ = pool_bytes_ + reserved_used_bytes_;
  return Status::Ok();
}

uint32_t TrafficManager::QueueDepthLimit(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->limit_pkts : 0;
}

uint64_t TrafficManager::QueueRate(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->pacer.rate() : 0;
}

uint32_t TrafficManager::QueueWeight(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->weight : 0;
}

uint64_t TrafficManager::PortRate(PortId port) const {
  return port < num_ports_ ? ports_[port].link.rate() : 0;
}

SchedulerKind TrafficManager::Scheduler(PortId port) const {
  return port < num_ports_ ? ports_[port].scheduler : SchedulerKind::kStrict;
}

double TrafficManager::QueueAlpha(PortId port, int queue) const {
  return FindQueue(port, queue) != nullptr ? ports_[port].buffers[queue].alpha : 0;
}

uint64_t TrafficManager::GuaranteedMin(PortId port, int queue) const {
  return FindQueue(port, queue) != nullptr ? ports_[port].buffers[queue].min_bytes : 0;
}

uint64_t TrafficManager::DynamicLimit(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  if (q == nullptr) return 0;
  const QueueBuffer& b = ports_[port].buffers[queue];
  const uint64_t free = FreePool(0);
  const uint64_t beyond = b.alpha != 0 ? DynamicThresholdBytes(b.alpha, free)
                                       : PoolPart(b.min_bytes, q->bytes) + free;
  return b.min_bytes + std::min(beyond, UINT64_MAX - b.min_bytes);
}

const QueueCounters& TrafficManager::queue_counters(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->counters : kNoCounters;
}

uint32_t TrafficManager::DepthPkts(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->ring.size() : 0;
}

uint64_t TrafficManager::DepthBytes(PortId port, int queue) const {
  const Queue* q = FindQueue(port, queue);
  return q != nullptr ? q->bytes : 0;
}

uint64_t TrafficManager::PortDepthBytes(PortId port) const {
  return port < num_ports_ ? ports_[port].bytes : 0;
}

uint64_t TrafficManager::drops(DropReason reason) const {
  auto index = static_cast<std::size_t>(reason);
  return index < kDropReasonCount ? drops_[index] : 0;
}

void TrafficManager::ResetCounters() {
  for (PortId p = 0; p < num_ports_; ++p) {
    for (Queue& queue : ports_[p].queues) {
      queue.counters = QueueCounters{};
      queue.counters.max_depth_pkts = queue.ring.size();
      queue.counters.max_depth_bytes = queue.bytes;
    }
  }
  std::fill(std::begin(drops_), std::end(drops_), 0);
  multicast_copies_ = 0;
}

// ", alpha 1/8 min 0 B limit 65536 B" for a queue under dynamic thresholds or with a minimum;
// nothing otherwise, so the static buffer's lines stay as they were.
std::string TrafficManager::DescribeBuffer(PortId port, int queue) const {
  if (!ports_[port].queues[queue].managed) return "";
  const QueueBuffer& b = ports_[port].buffers[queue];
  return ", alpha " + FormatAlpha(b.alpha) + " min " + std::to_string(b.min_bytes) + " B limit " +
         std::to_string(DynamicLimit(port, queue)) + " B";
}

std::string TrafficManager::DescribeQueues(bool all) const {
  std::string out;
  for (PortId p = 0; p < num_ports_; ++p) {
    for (int q = 0; q < kQueuesPerPort; ++q) {
      const Queue& queue = ports_[p].queues[q];
      const QueueCounters& c = queue.counters;
      if (!all && !queue.managed && queue.ring.empty() && c.enqueued == 0 && c.dropped == 0) {
        continue;
      }
      out += PortQueueName(p, q) + ": depth " + std::to_string(queue.ring.size()) + "/" +
             std::to_string(queue.limit_pkts) + " pkts " + std::to_string(queue.bytes) +
             " B, max " + std::to_string(c.max_depth_pkts) + " pkts " +
             std::to_string(c.max_depth_bytes) + " B, enq " + std::to_string(c.enqueued) + " deq " +
             std::to_string(c.dequeued) + " drop " + std::to_string(c.dropped) + " mark " +
             std::to_string(c.marked) + ", ecn " + std::to_string(queue.ecn_threshold) +
             " B drop-thr " + std::to_string(queue.drop_threshold) + " B rate " +
             std::to_string(queue.pacer.rate()) + " pps" + DescribeBuffer(p, q) + "\n";
    }
  }
  return out;
}

}  // namespace swemu
