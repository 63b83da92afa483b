#include "pipeline/switch/cpu_path.h"

#include <algorithm>
#include <cstring>

#include "pipeline/switch/switch.h"

namespace swemu {

CpuPath::CpuPath(Switch& sw, const CpuPortConfig& config)
    : sw_(sw), config_(config), ring_(std::max<uint32_t>(config.queue_packets, 1)) {}

TimeNs CpuPath::NextTime() const noexcept {
  if (shared_) return kNever;
  TimeNs next = agent_ != nullptr ? agent_->NextTimer() : kNever;
  if (count_ != 0) next = std::min(next, ring_[head_]->meta.ingress_ts + config_.latency_ns);
  return next;
}

void CpuPath::Service(TimeNs now) {
  if (shared_) return;
  while (count_ != 0 && ring_[head_]->meta.ingress_ts + config_.latency_ns <= now) {
    Packet* pkt = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
    agent_->OnPacketIn(pkt, now);
  }
  if (agent_ != nullptr && agent_->NextTimer() <= now) agent_->OnTimer(now);
}

void CpuPath::FreeAll() {
  while (count_ != 0) {
    Free(ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  if (agent_ != nullptr) agent_->FreeHeld();
}

void CpuPath::Share(bool primary, TimeNs now) {
  shared_ = true;
  primary_ = primary;
  shared_now_ = now;
}

void CpuPath::TakeQueued(std::vector<Packet*>* out) {
  counters_.packet_in -= count_;
  while (count_ != 0) {
    out->push_back(ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
}

void CpuPath::RunShared(std::span<Packet* const> pkts, TimeNs now) {
  shared_now_ = now;
  for (Packet* pkt : pkts) {
    if (agent_ == nullptr) {  // no replica has one (one program): nothing is ever queued
      sw_.pool().Free(pkt);
    } else if (primary_) {
      ++counters_.packet_in;
      agent_->OnPacketIn(pkt, now);
    } else if (Packet* copy = sw_.pool().Clone(*pkt)) {
      agent_->OnPacketIn(copy, now);  // an empty pool would leave this replica behind
    }
  }
  if (agent_ != nullptr && agent_->NextTimer() <= now) agent_->OnTimer(now);
}

Packet* CpuPath::NewPacket(std::span<const uint8_t> frame) {
  Packet* pkt = sw_.pool().Alloc();
  if (pkt == nullptr) return nullptr;
  if (!pkt->Append(static_cast<uint32_t>(frame.size()))) {
    sw_.pool().Free(pkt);
    return nullptr;
  }
  std::memcpy(pkt->data, frame.data(), frame.size());
  if (!secondary()) ++counters_.created;
  return pkt;
}

void CpuPath::PacketOut(Packet* pkt, PortId port, uint8_t queue) {
  if (secondary()) return sw_.pool().Free(pkt);  // the primary sends it
  ++counters_.packet_out;
  const TimeNs now = sw_.clock().NowNs();
  pkt->ResetState(sw_.user_words_);
  sw_.parser_.Parse(*pkt);  // egress reads the headers (ECN marking); a bad frame goes as it is
  pkt->meta = Metadata();
  pkt->meta.ingress_port = port;
  pkt->meta.ingress_ts = now;
  pkt->meta.egress_spec = port;
  pkt->meta.queue_id = queue;
  if (port >= sw_.num_ports()) {
    pkt->meta.MarkDrop(DropReason::kBadEgressPort);
    sw_.Drop(pkt);
    return;
  }
  if (sw_.router_ != nullptr && sw_.RouteAway(pkt)) return;  // another lcore's port
  sw_.tm().Enqueue(pkt, now);
}

void CpuPath::ToIngress(Packet* pkt, PortId port) {
  if (secondary()) return sw_.pool().Free(pkt);
  ++counters_.to_ingress;
  sw_.StartPass(*pkt, port, sw_.clock().NowNs());
  sw_.Ingress(&pkt, 1);
}

void CpuPath::Free(Packet* pkt) {
  if (!secondary()) ++counters_.freed;
  sw_.pool().Free(pkt);
}

void CpuPath::Drop(Packet* pkt, DropReason reason) {
  if (secondary()) return sw_.pool().Free(pkt);  // counted once, by the primary
  ++counters_.dropped;
  pkt->meta.drop_reason = DropReason::kNone;
  pkt->meta.MarkDrop(reason);
  sw_.Drop(pkt);
}

TimeNs CpuPath::Now() const { return shared_ ? shared_now_ : sw_.clock().NowNs(); }

}  // namespace swemu
