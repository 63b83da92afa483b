#pragma once
// Several endpoints on one host port (e.g. PLink's prober and its aggregation engine, beside a
// background traffic source): every frame goes to each of them (each ignores what is not its
// own), each gets its timers and pumps. Not owning; the endpoints outlive the set.
#include <algorithm>
#include <span>
#include <vector>

#include "hostlib/common/endpoint.h"

namespace swemu {

class EndpointSet final : public Endpoint {
 public:
  void Add(Endpoint* endpoint) { endpoints_.push_back(endpoint); }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override {
    for (Endpoint* e : endpoints_) e->OnFrame(now, frame);
  }
  void OnTimer(TimeNs now) noexcept override {
    for (Endpoint* e : endpoints_) {
      if (e->NextTimer() <= now) e->OnTimer(now);
    }
  }
  TimeNs NextTimer() const noexcept override {
    TimeNs next = kNever;
    for (const Endpoint* e : endpoints_) next = std::min(next, e->NextTimer());
    return next;
  }
  void Pump(TimeNs now) noexcept override {
    for (Endpoint* e : endpoints_) e->Pump(now);
  }

 private:
  std::vector<Endpoint*> endpoints_;
};

}  // namespace swemu
