#pragma once
// Runs any Endpoint inside the virtual-time engine (co-simulation): the engine is the endpoint's
// driver and its wire. Transport::Send becomes HostContext::SendFrame, received frames go to
// Endpoint::OnFrame, and one engine timer tracks Endpoint::NextTimer(). Pump runs after every
// event. Nothing here reads a wall clock, so a run is as deterministic as the engine.
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "hostlib/common/endpoint.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/engine_host.h"

namespace swemu {

struct EngineTransportCounters {
  uint64_t frames_sent = 0;
  uint64_t send_failures = 0;  // refused by the engine (pool exhausted, too long, not started)
  uint64_t frames_received = 0;
  uint64_t timers_fired = 0;      // engine timer events that reached the endpoint
  uint64_t frames_discarded = 0;  // received while no endpoint was set (the host is down)
};

class EngineTransport final : public EngineHost, public Transport {
 public:
  EngineTransport() = default;

  // Creates a transport, attaches it to `sw` port `port` (host link delay and loss as in
  // Engine::AttachHost) and returns it; the engine owns it. Call SetEndpoint before Run().
  static Result<EngineTransport*> Attach(Engine& engine, std::string_view sw, PortId port,
                                         TimeNs delay_ns = 0, double loss = 0);

  // The endpoint this transport drives (not owned; must outlive the run). nullptr once the
  // run has started takes the host down (a crashed host): frames for it are discarded and
  // counted, no timer reaches it, it sends nothing more.
  void SetEndpoint(Endpoint* endpoint) { endpoint_ = endpoint; }
  // Asks for a Pump at the engine's current time, e.g. after new work was submitted between
  // two Engine::Run calls. No-op before the run starts (Start pumps anyway).
  void Wake();

  // Transport
  bool Send(std::span<const uint8_t> frame) noexcept override;

  // EngineHost
  Status Start(HostContext& ctx) override;
  void OnFrame(TimeNs now, Packet* pkt) override;
  void OnTimer(TimeNs now, uint64_t cookie) override;

  const EngineTransportCounters& counters() const { return counters_; }

 private:
  static constexpr uint64_t kWakeCookie = ~uint64_t{0};
  // Pumps the endpoint, then makes sure an engine timer is pending at or before NextTimer().
  void AfterEvent(TimeNs now);

  Endpoint* endpoint_ = nullptr;
  HostContext* ctx_ = nullptr;
  // The timer that counts: its generation (cookie) and time. An earlier NextTimer() replaces it
  // (the engine cannot cancel events, so the replaced one fires later and is ignored); a later
  // one leaves it in place, and when it fires early it is simply re-armed.
  uint64_t timer_gen_ = 0;
  TimeNs timer_at_ = kNever;
  EngineTransportCounters counters_;
};

}  // namespace swemu
