#include "hostlib/common/tcp_host.h"

#include <algorithm>

namespace swemu {

EcnTcpSender& TcpHost::AddFlow(const TcpFlowPlan& plan) {
  Flow& flow = flows_.emplace_back();
  flow.plan = plan;
  EcnTcpOptions options = options_;
  if (plan.rate_bps != 0 && (options.link_bps == 0 || plan.rate_bps < options.link_bps)) {
    options.link_bps = plan.rate_bps;
  }
  flow.sender = std::make_unique<EcnTcpSender>(transport_, TcpEnd{mac_, ip_, plan.local_port},
                                               plan.remote, options);
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

void TcpHost::Pump(TimeNs now) noexcept {
  for (Flow* fp : live_) {
    Flow& flow = *fp;
    if (!flow.started && now >= flow.plan.start_ns) {
      flow.started = true;
      flow.sender->Start(now, flow.plan.bytes);
    }
    if (flow.started) flow.sender->Pump(now);
  }
  PruneLive();
}

}  // namespace swemu
