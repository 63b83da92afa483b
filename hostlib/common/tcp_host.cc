#include "hostlib/common/tcp_host.h"

#include <algorithm>

namespace swemu {

TcpHost::TcpHost(Transport& transport, const MacAddr& mac, Ipv4Addr ip,
                 const EcnTcpOptions& options)
    : transport_(transport), mac_(mac), ip_(ip), options_(options) {
  if (options.shared_nic && options.link_bps != 0) {
    nic_ = std::make_unique<SharedNic>(static_cast<double>(options.link_bps));
  }
}

EcnTcpSender& TcpHost::AddFlow(const TcpFlowPlan& plan) {
  Flow& flow = flows_.emplace_back();
  flow.plan = plan;
  flow.ordinal = flows_.size() - 1;
  EcnTcpOptions options = options_;
  if (plan.rate_bps != 0 && (options.link_bps == 0 || plan.rate_bps < options.link_bps)) {
    options.link_bps = plan.rate_bps;
  }
  flow.sender = std::make_unique<EcnTcpSender>(transport_, TcpEnd{mac_, ip_, plan.local_port},
                                               plan.remote, options);
  if (nic_ != nullptr) flow.sender->ShareNic(nic_.get());
  live_.push_back(&flow);
  by_peer_[PeerKey(plan.remote.ip, plan.remote.port, plan.local_port)].push_back(&flow);
  Place(flow);
  return *flow.sender;
}

EcnTcpSink& TcpHost::Listen(uint16_t port) {
  return sinks_.emplace_back(transport_, TcpEnd{mac_, ip_, port});
}

const EcnTcpSink* TcpHost::sink(uint16_t port) const {
  for (const EcnTcpSink& s : sinks_) {
    if (s.port() == port) return &s;
  }
  return nullptr;
}

void TcpHost::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  TcpSegmentView seg;
  if (!ParseTcpSegment(frame, &seg)) {
    ++ignored_;
    return;
  }
  auto peer = by_peer_.find(PeerKey(seg.src_ip, seg.src_port, seg.dst_port));
  if (peer != by_peer_.end()) {
    for (Flow* flow : peer->second) {
      if (flow->started && flow->sender->Accepts(seg)) {
        const TimeNs nic_was = NicNext();
        flow->sender->OnAck(now, seg);  // may retransmit at once (fast retransmit)
        Place(*flow);
        if (NicNext() != nic_was) OnNicMoved();
        return;
      }
    }
  }
  for (EcnTcpSink& sink : sinks_) {
    if (sink.Accepts(seg)) {
      sink.OnSegment(now, frame, seg);
      return;
    }
  }
  ++ignored_;
}

void TcpHost::Unfile(Flow& flow) {
  for (auto [heap, at] : {std::pair{&timed_, &flow.timed_at}, std::pair{&rto_, &flow.rto_at},
                          std::pair{&own_, &flow.own_at}}) {
    if (*at == kOut) continue;
    heap->Remove(*at);
    *at = kOut;
  }
  if (flow.in_group) nic_group_.erase(flow.ordinal);
  flow.in_group = false;
}

// The parts of NextTimer this flow adds, each where the passes look for it.
void TcpHost::Place(Flow& flow) {
  Unfile(flow);
  if (flow.Retired()) {
    retired_since_prune_ = true;
    return;
  }
  const TimeNs timed = !flow.started ? flow.plan.start_ns : !flow.stopped ? flow.plan.stop_ns : kNever;
  if (timed != kNever) timed_.Push(timed, flow.ordinal, &flow.timed_at);
  const EcnTcpSender& sender = *flow.sender;
  if (!flow.started || !sender.live()) return;
  if (sender.rto_deadline() != kNever) rto_.Push(sender.rto_deadline(), flow.ordinal, &flow.rto_at);
  if (!sender.WantsSlot()) return;
  if (nic_ != nullptr && sender.pacer_next() <= nic_->next_ns()) {
    nic_group_.insert(flow.ordinal);
    flow.in_group = true;
  } else {
    own_.Push(sender.pacer_next(), flow.ordinal, &flow.own_at);
  }
}

// Own-pacer flows whose pacer the NIC's next free time passed now wait for the NIC alone.
void TcpHost::OnNicMoved() {
  while (!own_.empty() && own_.top().time <= NicNext()) {
    Flow& flow = flows_[own_.top().key];
    own_.Remove(flow.own_at);
    flow.own_at = kOut;
    nic_group_.insert(flow.ordinal);
    flow.in_group = true;
  }
}

std::vector<TcpHost::Flow*> TcpHost::Due(TimeNs now,
                                         std::initializer_list<const TimedKeyHeap*> heaps,
                                         uint64_t first) {
  std::vector<uint64_t> keys;
  for (const TimedKeyHeap* heap : heaps) heap->CollectUpTo(now, &keys);
  std::sort(keys.begin(), keys.end(), [first](uint64_t a, uint64_t b) { return a - first < b - first; });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<Flow*> due;
  due.reserve(keys.size());
  for (uint64_t key : keys) due.push_back(&flows_[key]);
  return due;
}

std::size_t TcpHost::LiveIndex(const Flow& flow) const {
  auto it = std::lower_bound(live_.begin(), live_.end(), flow.ordinal,
                             [](const Flow* f, uint64_t ordinal) { return f->ordinal < ordinal; });
  return static_cast<std::size_t>(it - live_.begin());
}

void TcpHost::PruneLive() {
  if (!retired_since_prune_) return;
  retired_since_prune_ = false;
  live_.erase(std::remove_if(live_.begin(), live_.end(), [](const Flow* f) { return f->Retired(); }),
              live_.end());
}

// In live_ order, the flows due to start, stop or time out.
void TcpHost::OnTimer(TimeNs now) noexcept {
  for (Flow* fp : Due(now, {&timed_, &rto_}, 0)) {
    Flow& flow = *fp;
    const TimeNs nic_was = NicNext();
    if (!flow.started && now >= flow.plan.start_ns) {
      flow.started = true;
      flow.sender->Start(now, flow.plan.bytes);
    }
    if (flow.started && !flow.stopped && now >= flow.plan.stop_ns) {
      flow.stopped = true;
      flow.sender->Stop();
    }
    if (flow.started) flow.sender->OnTimer(now);
    Place(flow);
    if (NicNext() != nic_was) OnNicMoved();
  }
  PruneLive();
}

TimeNs TcpHost::NextTimer() const noexcept {
  TimeNs next = kNever;
  for (const TimedKeyHeap* heap : {&timed_, &rto_, &own_}) {
    if (!heap->empty()) next = std::min(next, heap->top().time);
  }
  if (!nic_group_.empty()) next = std::min(next, NicNext());
  return next;
}

void TcpHost::VisitForPump(TimeNs now, Flow& flow) {
  const uint64_t sent = flow.sender->stats().segments_sent;
  const TimeNs nic_was = NicNext();
  if (!flow.started && now >= flow.plan.start_ns) {
    flow.started = true;
    flow.sender->Start(now, flow.plan.bytes);
  }
  if (flow.started) flow.sender->Pump(now);
  if (flow.sender->stats().segments_sent != sent) nic_next_ = LiveIndex(flow) + 1;
  Place(flow);
  if (NicNext() != nic_was) OnNicMoved();
}

// The flows to visit, in the order of a pass over every live flow: without a shared NIC from the
// first, with one from the flow after the one that sent last, so the NIC goes round the flows
// that have something to send. Only these can act: those due to start or whose own pacer has
// passed, and, while the NIC is free, those waiting for it alone (the first of them in that
// order takes it). The others would neither start nor send.
void TcpHost::Pump(TimeNs now) noexcept {
  const std::size_t n = live_.size();
  if (n != 0) {
    const uint64_t first = live_[nic_ != nullptr ? nic_next_ % n : 0]->ordinal;
    const std::vector<Flow*> due = Due(now, {&timed_, &own_}, first);
    uint64_t from = 0;  // the next position (ordinal - first) not yet passed
    bool passed_all = false;
    auto visit = [&](Flow& flow) {
      VisitForPump(now, flow);
      from = flow.ordinal - first + 1;
      passed_all = from == 0;
    };
    for (std::size_t i = 0; i <= due.size() && !passed_all; ++i) {
      const uint64_t to = i < due.size() ? due[i]->ordinal - first : ~uint64_t{0};
      const bool to_end = i == due.size();
      while (nic_ != nullptr && nic_->Ready(now) && !nic_group_.empty() && !passed_all) {
        auto it = nic_group_.lower_bound(from + first);
        if (it == nic_group_.end()) it = nic_group_.begin();
        const uint64_t pos = *it - first;
        if (pos < from || (!to_end && pos >= to)) break;
        visit(flows_[*it]);
      }
      if (!to_end) visit(*due[i]);
    }
  }
  PruneLive();
}

}  // namespace swemu
