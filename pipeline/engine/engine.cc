#include "pipeline/engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "pipeline/engine/host_slot.h"
#include "pipeline/engine/pcap_host.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {
namespace {

std::string FormatSeconds(TimeNs ns) {
  char text[48];
  std::snprintf(text, sizeof text, "%.6f s", static_cast<double>(ns) / 1e9);
  return text;
}

[[gnu::always_inline]] inline bool CarriesPacket(EventKind kind) {
  return kind == EventKind::kSwitchArrival || kind == EventKind::kHostArrival;
}

// With thousands of frames queued across a fabric, a frame's Packet and bytes have left the
// caches by the time its arrival comes up: the switch's parser (or the host) waited on them,
// a fifth of the cycles at 192 hosts. So, DPDK-style, while one event runs, the frames of the
// events due next come in: the top's and those of the root's children (one of which comes out
// after the top). The frame's address is the pool's hint, not the Packet's field, so that the
// two come in at once rather than one after the other.
[[gnu::always_inline]] inline void PrefetchFrame(const HeapPacketPool& pool, const Packet* pkt) {
  const auto* packet = reinterpret_cast<const char*>(pkt);
  for (std::size_t at = 0; at < sizeof(Packet) + 63; at += 64) __builtin_prefetch(packet + at);
  const uint8_t* frame = pool.FrameHint(pkt);
  __builtin_prefetch(frame);
  __builtin_prefetch(frame + 64);
}

// Inlined: GCC takes a function of loads and prefetches for pure and drops its calls.
[[gnu::always_inline]] inline void PrefetchNextFrames(const EventQueue& events,
                                                      const HeapPacketPool& pool) {
  if (events.empty()) return;
  if (CarriesPacket(events.top().kind)) PrefetchFrame(pool, events.top().pkt);
  for (const Event& later : events.after_top()) {
    if (CarriesPacket(later.kind)) PrefetchFrame(pool, later.pkt);
  }
}

}  // namespace

uint64_t EngineCounters::TotalDrops() const {
  uint64_t total = 0;
  for (uint64_t count : drops) total += count;
  return total;
}

Engine::Engine(uint64_t seed, std::size_t pool_packets) : seed_(seed), pool_(pool_packets) {}

Engine::~Engine() = default;

Switch* Engine::FindSwitch(std::string_view name) {
  for (SwitchSlot& slot : switches_) {
    if (slot.sw->name() == name) return slot.sw.get();
  }
  return nullptr;
}

const Switch* Engine::FindSwitch(std::string_view name) const {
  return const_cast<Engine*>(this)->FindSwitch(name);
}

Status Engine::AddSwitch(SwitchConfig config, const std::string& startup_script) {
  const std::string name = config.name;
  if (FindSwitch(name) != nullptr) return Status::Error("duplicate switch name " + name);
  if (started_) {
    return Status::Error("switch " + name + ": cannot add a switch to a running engine");
  }
  Result<std::unique_ptr<Switch>> created = Switch::Create(std::move(config), pool_, clock_);
  if (!created.ok()) return Status::Error("switch " + name + ": " + created.message());
  Switch& sw = **created;
  if (!startup_script.empty()) {
    Status ran = sw.commands().RunScript(startup_script);
    if (!ran.ok()) return Status::Error("switch " + name + ": " + ran.message());
  }
  SwitchSlot slot;
  slot.ports.resize(sw.num_ports());
  slot.service_at.assign(sw.num_ports(), kNever);
  slot.service_gen.assign(sw.num_ports(), 0);
  const uint64_t index = switches_.size();
  for (PortId p = 0; p < sw.num_ports(); ++p) {
    slot.ports[p].rng = SplitMix64(HashPair(seed_, (index << 16) | p));
  }
  slot.sw = std::move(*created);
  switches_.push_back(std::move(slot));
  // What the script left to send (a control plane's ARP requests) and its timers.
  ScheduleAllServices(static_cast<uint32_t>(index));
  return Status::Ok();
}

Result<std::pair<uint32_t, PortId>> Engine::ResolvePort(std::string_view sw, PortId port,
                                                        std::string_view what) const {
  const std::string where = std::string(what) + " " + std::string(sw) + ":" + std::to_string(port);
  for (uint32_t i = 0; i < switches_.size(); ++i) {
    const SwitchSlot& slot = switches_[i];
    if (slot.sw->name() != sw) continue;
    if (port >= slot.sw->num_ports()) {
      return Status::Error(where + ": port out of range (switch " + std::string(sw) + " has " +
                           std::to_string(slot.sw->num_ports()) + " ports)");
    }
    if (slot.ports[port].kind != AttachKind::kNone) {
      return Status::Error(where + ": port already used by " + Describe(slot.ports[port]));
    }
    return std::make_pair(i, port);
  }
  return Status::Error(where + ": unknown switch " + std::string(sw));
}

void ApplyLinkRates(const std::vector<LinkSpec>& links, SwitchConfig& config) {
  for (const LinkSpec& link : links) {
    if (link.rate_bps == 0 || !ValidatePortRate(link.rate_bps).ok()) continue;
    if (link.a == config.name && link.a_port < config.num_ports) {
      config.tm.port_rates.push_back({link.a_port, link.rate_bps});
    }
    if (link.b == config.name && link.b_port < config.num_ports) {
      config.tm.port_rates.push_back({link.b_port, link.rate_bps});
    }
  }
}

Status Engine::AddLink(const LinkSpec& spec) {
  const std::string name = "link " + spec.a + ":" + std::to_string(spec.a_port) + " " + spec.b +
                           ":" + std::to_string(spec.b_port);
  if (started_) return Status::Error(name + ": cannot add a link to a running engine");
  if (spec.a == spec.b && spec.a_port == spec.b_port) {
    return Status::Error(name + ": a link needs two different ports");
  }
  if (spec.rate_bps == 0) return Status::Error(name + ": rate must be > 0");
  Status rate_ok = ValidatePortRate(spec.rate_bps);
  if (!rate_ok.ok()) return Status::Error(name + ": " + rate_ok.message());
  if (!(spec.loss >= 0 && spec.loss <= 1)) return Status::Error(name + ": loss must be in [0, 1]");
  Result<std::pair<uint32_t, PortId>> a = ResolvePort(spec.a, spec.a_port, "link");
  if (!a.ok()) return a.status();
  Result<std::pair<uint32_t, PortId>> b = ResolvePort(spec.b, spec.b_port, "link");
  if (!b.ok()) return b.status();
  for (const auto& [index, port] : {*a, *b}) {
    const Switch& sw = *switches_[index].sw;
    const uint64_t bps = sw.tm().PortRate(port);
    if (bps != spec.rate_bps) {
      return Status::Error(name + ": " + sw.name() + ":" + std::to_string(port) + " is shaped to " +
                           std::to_string(bps) + " bit/s, not the link's " +
                           std::to_string(spec.rate_bps) +
                           ": a linked port's rate is the link's (ApplyLinkRates), not a script's");
    }
  }
  auto connect = [&](std::pair<uint32_t, PortId> from, std::pair<uint32_t, PortId> to) {
    Attachment& end = switches_[from.first].ports[from.second];
    end.kind = AttachKind::kLink;
    end.peer = to.first;
    end.peer_port = to.second;
    end.delay_ns = spec.delay_ns;
    end.loss = spec.loss;
  };
  connect(*a, *b);
  connect(*b, *a);
  return Status::Ok();
}

Status Engine::AttachHost(std::string_view sw, PortId port, TimeNs delay_ns, double loss,
                          std::unique_ptr<EngineHost> host) {
  if (started_) return Status::Error("host: cannot add a host to a running engine");
  if (!(loss >= 0 && loss <= 1)) {
    return Status::Error("host " + std::string(sw) + ":" + std::to_string(port) +
                         ": loss must be in [0, 1]");
  }
  Result<std::pair<uint32_t, PortId>> where = ResolvePort(sw, port, "host");
  if (!where.ok()) return where.status();
  const auto index = static_cast<uint32_t>(hosts_.size());
  hosts_.push_back(std::make_unique<HostSlot>(*this, index, where->first, port, delay_ns, loss,
                                              std::move(host)));
  Attachment& end = switches_[where->first].ports[port];
  end.kind = AttachKind::kHost;
  end.peer = index;
  end.delay_ns = delay_ns;
  end.loss = loss;
  return Status::Ok();
}

Status Engine::AddHostPort(const HostPortSpec& spec) {
  // Check the port before opening files so the error names the real problem.
  Result<std::pair<uint32_t, PortId>> where = ResolvePort(spec.sw, spec.port, "host");
  if (!where.ok()) return where.status();
  std::unique_ptr<PcapReader> input;
  if (!spec.in_pcap.empty()) {
    Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(spec.in_pcap);
    if (!reader.ok()) return reader.status();
    input = std::move(*reader);
  }
  return AttachHost(spec.sw, spec.port, spec.delay_ns, spec.loss,
                    std::make_unique<PcapHost>(std::move(input), spec.out_pcap));
}

void Engine::Push(Event event) {
  event.time = std::max(event.time, clock_.NowNs());
  events_.Push(event);
}

Status Engine::Run(TimeNs until) { return Run(until, nullptr); }

Status Engine::Run(TimeNs until, const std::function<bool()>& stop) {
  if (!started_) {
    started_ = true;
    for (auto& host : hosts_) {
      Status started = host->host_->Start(*host);
      if (!started.ok()) return started;
    }
  }
  while (failure_.ok() && !events_.empty() && events_.top().time <= until) {
    Event event = events_.Pop();
    PrefetchNextFrames(events_, pool_);
    if (first_event_ns_ == kNever) first_event_ns_ = event.time;
    if (event.time - first_event_ns_ > limits_.max_virtual_ns) {
      failure_ = Status::Error("stopped at " + FormatSeconds(event.time - first_event_ns_) +
                               " of virtual time, the run's limit, with " +
                               std::to_string(events_.size() + 1) +
                               " events still due (a forwarding loop, or a host that never "
                               "stops sending?)");
      // The event goes back so that conservation still holds for its packet.
      events_.Push(event);
      limit_reached_ = true;
      break;
    }
    if (events_processed_ >= limits_.max_events) {
      failure_ = Status::Error("stopped after " + std::to_string(events_processed_) +
                               " events, the run's limit, at " +
                               FormatSeconds(event.time - first_event_ns_) +
                               " of virtual time (a forwarding loop, or a host that never "
                               "stops sending?)");
      events_.Push(event);
      limit_reached_ = true;
      break;
    }
    ++events_processed_;
    if (sampler_) {
      if (next_sample_ns_ == kNever) next_sample_ns_ = event.time / sample_period_ns_ * sample_period_ns_;
      for (; next_sample_ns_ <= event.time; next_sample_ns_ += sample_period_ns_) {
        clock_.Set(next_sample_ns_);
        sampler_(next_sample_ns_);
      }
    }
    clock_.Set(event.time);
    Dispatch(event);
    if (stop && stop()) return failure_;  // the clock stays at the event that did it
  }
  if (!failure_.ok()) return failure_;
  if (until != kNever && until > clock_.NowNs()) clock_.Set(until);
  if (events_.empty() && !finished_) {
    finished_ = true;
    if (sampler_ && next_sample_ns_ != kNever) sampler_(next_sample_ns_);  // the state at the end
    for (auto& host : hosts_) SWEMU_RETURN_IF_ERROR(host->host_->Finish());
  }
  return Status::Ok();
}

void Engine::Dispatch(const Event& event) {
  switch (event.kind) {
    case EventKind::kSwitchArrival: {
      --counters_.in_flight;
      SwitchSlot& slot = switches_[event.node];
      // The control plane first: what it installed before this instant applies to the packet.
      slot.sw->ServiceControlPlane(clock_.NowNs());
      slot.sw->Receive(event.pkt, event.port);
      ScheduleAllServices(event.node);
      ScheduleControlPlane(event.node);
      break;
    }
    case EventKind::kControlPlane: {
      SwitchSlot& slot = switches_[event.node];
      slot.control_at = kNever;
      slot.sw->ServiceControlPlane(clock_.NowNs());
      ScheduleControlPlane(event.node);
      break;
    }
    case EventKind::kPortService: {
      SwitchSlot& slot = switches_[event.node];
      if (event.cookie != slot.service_gen[event.port]) {  // superseded by an earlier one
        ++stale_services_;
        break;
      }
      slot.service_at[event.port] = kNever;
      Service(event.node, event.port);
      break;
    }
    case EventKind::kHostArrival: {
      --counters_.in_flight;
      ++counters_.delivered;
      HostSlot& host = *hosts_[event.node];
      ++host.received_;
      host.host_->OnFrame(clock_.NowNs(), event.pkt);
      break;
    }
    case EventKind::kHostTimer:
      hosts_[event.node]->host_->OnTimer(clock_.NowNs(), event.cookie);
      break;
    case EventKind::kCpuService: {
      SwitchSlot& slot = switches_[event.node];
      if (event.cookie != slot.cpu_gen) {  // superseded by an earlier one
        ++stale_services_;
        break;
      }
      slot.cpu_at = kNever;
      slot.sw->ServiceCpu();
      ScheduleAllServices(event.node);  // what it sent out, and its next packet-in or timer
      break;
    }
  }
}

void Engine::Service(uint32_t sw, PortId port) {
  Switch& the_switch = *switches_[sw].sw;
  while (Packet* pkt = the_switch.Transmit(port)) Deliver(sw, port, pkt);
  // Transmit() returned nothing now, so the port's next chance is later; forcing it keeps a
  // misbehaving NextTransmitTime from spinning at one instant. Recirculation may have queued
  // packets on other ports, so every port is looked at.
  ScheduleAllServices(sw, port);
}

void Engine::ScheduleService(uint32_t sw, PortId port, TimeNs earliest) {
  SwitchSlot& slot = switches_[sw];
  TimeNs at = slot.sw->NextTransmitTime(port);
  if (at == kNever) return;
  if (at < earliest) {
    // A later look at this instant would find the port ready before the service set here: it
    // looks again (ScheduleAllServices' invariant).
    slot.sw->tm().MarkPort(port);
    at = earliest;
  }
  if (slot.service_at[port] <= at) return;  // an earlier pending service will look again
  slot.service_at[port] = at;
  Event event;
  event.time = at;
  event.kind = EventKind::kPortService;
  event.node = sw;
  event.port = port;
  event.cookie = ++slot.service_gen[port];
  Push(event);
}

void Engine::ScheduleControlPlane(uint32_t sw) {
  SwitchSlot& slot = switches_[sw];
  const TimeNs at = slot.sw->NextDigestDue();
  if (at == kNever || slot.control_at <= at) return;
  slot.control_at = at;
  Event event;
  event.time = std::max(at, clock_.NowNs());
  event.kind = EventKind::kControlPlane;
  event.node = sw;
  Push(event);
}

// Only the ports the TM marked are looked at, in ascending order, so the events pushed (and
// their sequence numbers) are those a look at every port would push. The invariant: after a
// look at port p, a service of p is pending at or before NextTransmitTime(p) whenever p holds
// packets, and it stays so until p is marked. ScheduleService makes it hold for the ports it
// looks at (or marks the port again where `earliest` put the service later); between looks,
// NextTransmitTime(p) = max(now, X) with X moving earlier only when packets are queued on p or
// a rate of p changes, and both mark p (TrafficManager::NextDequeueTime); the pending service
// itself goes only when it fires, and then p is the port just served, marked here.
void Engine::ScheduleAllServices(uint32_t sw, PortId just_served) {
  const TimeNs now = clock_.NowNs();
  TrafficManager& tm = switches_[sw].sw->tm();
  if (just_served != kPortUnset) tm.MarkPort(just_served);
  if (check_skipped_services_) [[unlikely]] {
    CheckSkippedServices(sw);
  }
  tm.TakeMarkedPorts([&](PortId p) { ScheduleService(sw, p, p == just_served ? now + 1 : now); });
  ScheduleCpu(sw);
}

void Engine::CheckSkippedServices(uint32_t sw) {
  SwitchSlot& slot = switches_[sw];
  std::vector<bool> marked(slot.sw->num_ports(), false);
  TrafficManager& tm = slot.sw->tm();
  tm.TakeMarkedPorts([&](PortId p) { marked[p] = true; });
  const TimeNs now = clock_.NowNs();
  for (PortId p = 0; p < slot.sw->num_ports(); ++p) {
    if (marked[p]) {
      tm.MarkPort(p);
      continue;
    }
    const TimeNs at = slot.sw->NextTransmitTime(p);
    if (at != kNever && slot.service_at[p] > std::max(at, now) && failure_.ok()) {
      failure_ = Status::Error("switch " + slot.sw->name() + " port " + std::to_string(p) +
                               ": ready at " + std::to_string(at) + " ns but not marked, its " +
                               "service at " + std::to_string(slot.service_at[p]) + " ns");
    }
  }
}

void Engine::ScheduleCpu(uint32_t sw) {
  SwitchSlot& slot = switches_[sw];
  const TimeNs at = slot.sw->NextCpuTime();
  if (at == kNever || slot.cpu_at <= at) return;
  slot.cpu_at = at;
  Event event;
  event.time = at;
  event.kind = EventKind::kCpuService;
  event.node = sw;
  event.cookie = ++slot.cpu_gen;
  Push(event);
}

TimeNs Engine::SerializationNs(const Switch& sw, PortId port, uint32_t len) const {
  const uint64_t rate = sw.tm().PortRate(port);
  if (rate == 0) return 0;
  const uint64_t bits = (uint64_t{len} + sw.config().tm.wire_overhead_bytes) * 8;
  // bits * 1e9 stays far below 2^64 for any frame the pool can hold.
  return (bits * 1'000'000'000ull + rate - 1) / rate;
}

void Engine::Deliver(uint32_t sw, PortId port, Packet* pkt) {
  Attachment& end = switches_[sw].ports[port];
  if (end.kind == AttachKind::kNone) {
    ++counters_.drops[static_cast<std::size_t>(DropReason::kLinkDown)];
    pool_.Free(pkt);
    return;
  }
  ++end.sent;
  if (end.kind == AttachKind::kLink) ++counters_.link_frames;
  if (end.rng.Bernoulli(end.loss)) {
    ++end.lost;
    ++counters_.drops[static_cast<std::size_t>(DropReason::kLossInjected)];
    pool_.Free(pkt);
    return;
  }
  Event event;
  event.time = clock_.NowNs() + SerializationNs(*switches_[sw].sw, port, pkt->len) + end.delay_ns;
  event.pkt = pkt;
  event.node = end.peer;
  event.port = end.peer_port;
  event.kind = end.kind == AttachKind::kLink ? EventKind::kSwitchArrival : EventKind::kHostArrival;
  ++counters_.in_flight;
  Push(event);
}

void Engine::SendFromHost(HostSlot& host, Packet* pkt) {
  ++counters_.injected;
  ++host.sent_;
  if (host.rng_.Bernoulli(host.loss_)) {
    ++host.lost_;
    ++counters_.drops[static_cast<std::size_t>(DropReason::kLossInjected)];
    pool_.Free(pkt);
    return;
  }
  Event event;
  event.time = clock_.NowNs() + host.delay_ns_;
  event.pkt = pkt;
  event.node = host.sw_;
  event.port = host.port_;
  event.kind = EventKind::kSwitchArrival;
  ++counters_.in_flight;
  Push(event);
}

}  // namespace swemu
