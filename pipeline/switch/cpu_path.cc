#include "pipeline/switch/cpu_path.h"

#include <algorithm>
#include <cstring>

#include "pipeline/switch/switch.h"

namespace swemu {

CpuPath::CpuPath(Switch& sw, const CpuPortConfig& config)
    : sw_(sw), config_(config), ring_(std::max<uint32_t>(config.queue_packets, 1)) {}

TimeNs CpuPath::NextTime() const noexcept {
  TimeNs next = agent_ != nullptr ? agent_->NextTimer() : kNever;
  if (count_ != 0) next = std::min(next, ring_[head_]->meta.ingress_ts + config_.latency_ns);
  return next;
}

void CpuPath::Service(TimeNs now) {
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

Packet* CpuPath::NewPacket(std::span<const uint8_t> frame) {
  Packet* pkt = sw_.pool().Alloc();
  if (pkt == nullptr) return nullptr;
  if (!pkt->Append(static_cast<uint32_t>(frame.size()))) {
    sw_.pool().Free(pkt);
    return nullptr;
  }
  std::memcpy(pkt->data, frame.data(), frame.size());
  ++counters_.created;
  return pkt;
}

void CpuPath::PacketOut(Packet* pkt, PortId port, uint8_t queue) {
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
  sw_.tm().Enqueue(pkt, now);
}

void CpuPath::ToIngress(Packet* pkt, PortId port) {
  ++counters_.to_ingress;
  sw_.StartPass(*pkt, port, sw_.clock().NowNs());
  sw_.Ingress(&pkt, 1);
}

void CpuPath::Free(Packet* pkt) {
  ++counters_.freed;
  sw_.pool().Free(pkt);
}

void CpuPath::Drop(Packet* pkt, DropReason reason) {
  ++counters_.dropped;
  pkt->meta.drop_reason = DropReason::kNone;
  pkt->meta.MarkDrop(reason);
  sw_.Drop(pkt);
}

TimeNs CpuPath::Now() const { return sw_.clock().NowNs(); }

}  // namespace swemu
