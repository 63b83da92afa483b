#include "hostlib/common/engine_transport.h"

#include <utility>

namespace swemu {

Result<EngineTransport*> EngineTransport::Attach(Engine& engine, std::string_view sw, PortId port,
                                                 TimeNs delay_ns, double loss) {
  auto transport = std::make_unique<EngineTransport>();
  EngineTransport* raw = transport.get();
  SWEMU_RETURN_IF_ERROR(engine.AttachHost(sw, port, delay_ns, loss, std::move(transport)));
  return raw;
}

void EngineTransport::Wake() {
  if (ctx_ != nullptr) ctx_->ScheduleTimer(ctx_->Now(), kWakeCookie);
}

bool EngineTransport::Send(std::span<const uint8_t> frame) noexcept {
  if (ctx_ == nullptr || !ctx_->SendFrame(frame.data(), static_cast<uint32_t>(frame.size()))) {
    ++counters_.send_failures;
    return false;
  }
  ++counters_.frames_sent;
  return true;
}

Status EngineTransport::Start(HostContext& ctx) {
  if (endpoint_ == nullptr) return Status::Error("engine transport: no endpoint set");
  ctx_ = &ctx;
  AfterEvent(ctx.Now());
  return Status::Ok();
}

void EngineTransport::OnFrame(TimeNs now, Packet* pkt) {
  ++counters_.frames_received;
  if (endpoint_ == nullptr) {
    ++counters_.frames_discarded;
    ctx_->pool().Free(pkt);
    return;
  }
  endpoint_->OnFrame(now, std::span<const uint8_t>(pkt->data, pkt->len));
  ctx_->pool().Free(pkt);
  AfterEvent(now);
}

void EngineTransport::OnTimer(TimeNs now, uint64_t cookie) {
  if (endpoint_ == nullptr) return;
  if (cookie != kWakeCookie) {
    if (cookie != timer_gen_) return;  // replaced by an earlier timer
    timer_at_ = kNever;
  }
  if (endpoint_->NextTimer() <= now) {
    ++counters_.timers_fired;
    endpoint_->OnTimer(now);
  }
  AfterEvent(now);
}

void EngineTransport::AfterEvent(TimeNs now) {
  endpoint_->Pump(now);
  const TimeNs next = endpoint_->NextTimer();
  if (next == kNever || next >= timer_at_) return;
  timer_at_ = next < now ? now : next;
  ctx_->ScheduleTimer(timer_at_, ++timer_gen_);
}

}  // namespace swemu
