#pragma once
// Internal to the engine (engine*.cc): the engine's side of one host.
#include <memory>

#include "pipeline/engine/engine.h"

namespace swemu {

// The engine's side of one host: its port, its wire towards the switch, its counters.
class Engine::HostSlot final : public HostContext {
 public:
  HostSlot(Engine& engine, uint32_t index, uint32_t sw, PortId port, TimeNs delay, double loss,
           std::unique_ptr<EngineHost> host)
      : engine_(engine),
        index_(index),
        sw_(sw),
        partition_(engine.switches_[sw].partition),
        port_(port),
        delay_ns_(delay),
        loss_(loss),
        rng_(HashPair(engine.seed_, (uint64_t{1} << 40) | index)),
        host_(std::move(host)) {}

  TimeNs Now() const override { return part().clock.NowNs(); }
  HeapPacketPool& pool() override { return part().pool; }
  void Send(Packet* pkt) override { engine_.SendFromHost(*this, pkt); }
  bool SendFrame(const uint8_t* data, uint32_t len) override {
    Packet* pkt = part().pool.FromBytes(data, len);
    if (pkt == nullptr) {
      ++part().counters.injected;
      ++sent_;
      DropReason reason =
          len > part().pool.MaxFrame() ? DropReason::kFrameTooLong : DropReason::kPoolExhausted;
      ++part().counters.drops[static_cast<std::size_t>(reason)];
      return false;
    }
    Send(pkt);
    return true;
  }
  void ScheduleTimer(TimeNs at, uint64_t cookie) override {
    Event event;
    event.time = at;
    event.kind = EventKind::kHostTimer;
    event.node = index_;
    event.cookie = cookie;
    engine_.Push(part(), event, kHostNode | index_, pushes_);
  }
  void Fail(Status status) override {
    if (part().failure.ok()) part().failure = std::move(status);
  }
  Partition& part() const { return *engine_.parts_[partition_]; }

  Engine& engine_;
  uint32_t index_;
  uint32_t sw_;
  uint32_t partition_;
  uint64_t pushes_ = 0;  // events this host scheduled (the partitioned key)
  PortId port_;
  TimeNs delay_ns_;
  double loss_;
  SplitMix64 rng_;
  std::unique_ptr<EngineHost> host_;
  uint64_t sent_ = 0;      // frames the host offered
  uint64_t received_ = 0;  // frames delivered to the host
  uint64_t lost_ = 0;      // frames lost on the way to the switch
};

}  // namespace swemu
