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
  EcnTcpOptions options = options_;
  if (plan.rate_bps != 0 && (options.link_bps == 0 || plan.rate_bps < options.link_bps)) {
    options.link_bps = plan.rate_bps;
  }
  flow.sender = std::make_unique<EcnTcpSender>(transport_, TcpEnd{mac_, ip_, plan.local_port},
                                               plan.remote, options);
  if (nic_ != nullptr) flow.sender->ShareNic(nic_.get());
  live_.push_back(&flow);
  by_peer_[PeerKey(plan.remote.ip, plan.remote.port, plan.local_port)].push_back(&flow);
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
        flow->sender->OnAck(now, seg);
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

void TcpHost::PruneLive() {
  live_.erase(std::remove_if(live_.begin(), live_.end(), [](const Flow* f) { return f->Retired(); }),
              live_.end());
}

void TcpHost::OnTimer(TimeNs now) noexcept {
  for (Flow* fp : live_) {
    Flow& flow = *fp;
    if (!flow.started && now >= flow.plan.start_ns) {
      flow.started = true;
      flow.sender->Start(now, flow.plan.bytes);
    }
    if (flow.started && !flow.stopped && now >= flow.plan.stop_ns) {
      flow.stopped = true;
      flow.sender->Stop();
    }
    if (flow.started) flow.sender->OnTimer(now);
  }
  PruneLive();
}

TimeNs TcpHost::NextTimer() const noexcept {
  TimeNs next = kNever;
  for (const Flow* fp : live_) {
    const Flow& flow = *fp;
    if (!flow.started) {
      next = std::min(next, flow.plan.start_ns);
      continue;
    }
    if (!flow.stopped) next = std::min(next, flow.plan.stop_ns);
    next = std::min(next, flow.sender->NextTimer());
  }
  return next;
}

// Without a shared NIC every flow is visited in order from the first; with one, from the flow
// after the one that sent last, so the NIC goes round the flows that have something to send.
void TcpHost::Pump(TimeNs now) noexcept {
  const std::size_t n = live_.size();
  const std::size_t first = nic_ != nullptr && n != 0 ? nic_next_ % n : 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (first + k) % n;
    Flow& flow = *live_[i];
    const uint64_t sent = flow.sender->stats().segments_sent;
    if (!flow.started && now >= flow.plan.start_ns) {
      flow.started = true;
      flow.sender->Start(now, flow.plan.bytes);
    }
    if (flow.started) flow.sender->Pump(now);
    if (flow.sender->stats().segments_sent != sent) nic_next_ = i + 1;
  }
  PruneLive();
}

}  // namespace swemu
