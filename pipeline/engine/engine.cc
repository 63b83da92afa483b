#include "pipeline/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>


#include "pipeline/core/independent_runs.h"
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

void EngineCounters::Add(const EngineCounters& other) {
  injected += other.injected;
  delivered += other.delivered;
  link_frames += other.link_frames;
  in_flight += other.in_flight;
  for (std::size_t i = 0; i < drops.size(); ++i) drops[i] += other.drops[i];
}

uint64_t EngineCounters::TotalDrops() const {
  uint64_t total = 0;
  for (uint64_t count : drops) total += count;
  return total;
}

Engine::Engine(uint64_t seed, std::size_t pool_packets, uint32_t partitions, RankExchange* ranks)
    : seed_(seed), node_order_(partitions > 0), ranks_(ranks) {
  const uint32_t count = std::max(partitions, 1u);
  for (uint32_t k = 0; k < count; ++k) {
    const bool local = ranks_ == nullptr || k % ranks_->ranks() == ranks_->rank();
    // Another rank's partition never runs here: its pool only serves its switches' set-up.
    parts_.push_back(std::make_unique<Partition>(local ? pool_packets : 64, count, local));
    if (local) local_parts_.push_back(k);
  }
}

bool Engine::RunsSwitch(std::string_view name) const {
  for (const SwitchSlot& slot : switches_) {
    if (slot.sw->name() == name) return Runs(slot);
  }
  return false;
}

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

Status Engine::AddSwitch(SwitchConfig config, const std::string& startup_script,
                         uint32_t partition) {
  const std::string name = config.name;
  if (FindSwitch(name) != nullptr) return Status::Error("duplicate switch name " + name);
  if (started_) {
    return Status::Error("switch " + name + ": cannot add a switch to a running engine");
  }
  if (partition >= parts_.size()) {
    return Status::Error("switch " + name + ": partition " + std::to_string(partition) +
                         " of " + std::to_string(parts_.size()));
  }
  Partition& part = *parts_[partition];
  Result<std::unique_ptr<Switch>> created =
      Switch::Create(std::move(config), part.pool, part.clock);
  if (!created.ok()) return Status::Error("switch " + name + ": " + created.message());
  Switch& sw = **created;
  if (!startup_script.empty()) {
    Status ran = sw.commands().RunScript(startup_script);
    if (!ran.ok()) return Status::Error("switch " + name + ": " + ran.message());
  }
  SwitchSlot slot;
  slot.partition = partition;
  slot.ports.resize(sw.num_ports());
  slot.service_at.assign(sw.num_ports(), kNever);
  slot.service_gen.assign(sw.num_ports(), 0);
  const uint64_t index = switches_.size();
  for (PortId p = 0; p < sw.num_ports(); ++p) {
    slot.ports[p].rng = SplitMix64(HashPair(seed_, (index << 16) | p));
  }
  slot.sw = std::move(*created);
  switches_.push_back(std::move(slot));
  if (ranks_ != nullptr) remote_.emplace_back();
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
  const bool crosses = switches_[a->first].partition != switches_[b->first].partition;
  if (crosses && spec.delay_ns == 0) {
    return Status::Error(name + ": 0 ns of delay between partitions " +
                         std::to_string(switches_[a->first].partition) + " and " +
                         std::to_string(switches_[b->first].partition) +
                         " leaves no lookahead: give the link a delay, or both switches one "
                         "partition");
  }
  if (crosses) lookahead_ns_ = std::min(lookahead_ns_, spec.delay_ns);
  auto connect = [&](std::pair<uint32_t, PortId> from, std::pair<uint32_t, PortId> to) {
    Attachment& end = switches_[from.first].ports[from.second];
    end.kind = AttachKind::kLink;
    end.crosses = crosses;
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
  if (host == nullptr && Runs(switches_[where->first])) {
    return Status::Error("host " + std::string(sw) + ":" + std::to_string(port) + ": no host");
  }
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
  if (!Runs(switches_[where->first])) {
    return AttachHost(spec.sw, spec.port, spec.delay_ns, spec.loss, nullptr);
  }
  std::unique_ptr<PcapReader> input;
  if (!spec.in_pcap.empty()) {
    Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(spec.in_pcap);
    if (!reader.ok()) return reader.status();
    input = std::move(*reader);
  }
  return AttachHost(spec.sw, spec.port, spec.delay_ns, spec.loss,
                    std::make_unique<PcapHost>(std::move(input), spec.out_pcap));
}

void Engine::Push(Partition& part, Event event, uint64_t node, uint64_t& pushes) {
  event.time = std::max(event.time, part.clock.NowNs());
  if (!node_order_) return part.events.Push(event);
  event.seq = NodeKey(node, pushes);
  part.events.PushKeyed(event);
}

Status Engine::FinishIfIdle() {
  if (!idle() || finished_) return Status::Ok();
  finished_ = true;
  if (sampler_ && next_sample_ns_ != kNever) sampler_(next_sample_ns_);  // the state at the end
  for (auto& host : hosts_) {
    if (Runs(switches_[host->sw_])) SWEMU_RETURN_IF_ERROR(host->host_->Finish());
  }
  return Status::Ok();
}

uint64_t Engine::events_processed() const {
  uint64_t n = remote_events_;
  for (const auto& part : parts_) n += part->events_processed;
  return n;
}

uint64_t Engine::stale_services() const {
  uint64_t n = remote_stale_;
  for (const auto& part : parts_) n += part->stale_services;
  return n;
}

EngineCounters Engine::counters() const {
  EngineCounters sum = remote_counters_;
  for (const auto& part : parts_) {
    if (part->local) sum.Add(part->counters);
  }
  return sum;
}

bool Engine::LocalIdle() const {
  for (const auto& part : parts_) {
    if (part->local && !part->events.empty()) return false;
  }
  return true;
}

bool Engine::idle() const { return ranks_ != nullptr ? ranks_idle_ : LocalIdle(); }

std::size_t Engine::EventsDue() const {
  std::size_t n = 0;
  for (const auto& part : parts_) n += part->local ? part->events.size() : 0;
  return n;
}

void Engine::SetClocks(TimeNs now) {
  for (auto& part : parts_) part->clock.Set(now);
}

Status Engine::Run(TimeNs until) { return Run(until, nullptr); }

Status Engine::Run(TimeNs until, const std::function<bool()>& stop) {
  if (!started_) {
    started_ = true;
    for (auto& host : hosts_) {
      if (!Runs(switches_[host->sw_])) continue;  // another rank's
      Status started = host->host_->Start(*host);
      if (started.ok()) continue;
      if (ranks_ == nullptr) return started;
      host->Fail(started);  // every rank learns it at the first window's agreement
    }
  }
  if (parts_.size() > 1) {
    if (stop) {
      return Status::Error("a run that stops on a condition needs one partition, not " +
                           std::to_string(parts_.size()));
    }
    return RunWindows(until);
  }
  Partition& part = *parts_[0];
  while (part.failure.ok() && !part.events.empty() && part.events.top().time <= until) {
    Event event = part.events.Pop();
    PrefetchNextFrames(part.events, part.pool);
    if (first_event_ns_ == kNever) first_event_ns_ = event.time;
    if (event.time - first_event_ns_ > limits_.max_virtual_ns) {
      part.failure = Status::Error("stopped at " + FormatSeconds(event.time - first_event_ns_) +
                                   " of virtual time, the run's limit, with " +
                                   std::to_string(part.events.size() + 1) +
                                   " events still due (a forwarding loop, or a host that never "
                                   "stops sending?)");
      // The event goes back so that conservation still holds for its packet.
      part.events.PushKeyed(event);
      limit_reached_ = true;
      break;
    }
    if (part.events_processed >= limits_.max_events) {
      part.failure = Status::Error("stopped after " + std::to_string(part.events_processed) +
                                   " events, the run's limit, at " +
                                   FormatSeconds(event.time - first_event_ns_) +
                                   " of virtual time (a forwarding loop, or a host that never "
                                   "stops sending?)");
      part.events.PushKeyed(event);
      limit_reached_ = true;
      break;
    }
    ++part.events_processed;
    if (sampler_) {
      if (next_sample_ns_ == kNever) next_sample_ns_ = event.time / sample_period_ns_ * sample_period_ns_;
      for (; next_sample_ns_ <= event.time; next_sample_ns_ += sample_period_ns_) {
        part.clock.Set(next_sample_ns_);
        sampler_(next_sample_ns_);
      }
    }
    part.clock.Set(event.time);
    Dispatch(part, event);
    if (stop && stop()) return part.failure;  // the clock stays at the event that did it
  }
  if (!part.failure.ok()) return part.failure;
  if (until != kNever && until > part.clock.NowNs()) part.clock.Set(until);
  return FinishIfIdle();
}

void Engine::RunPartition(Partition& part, TimeNs last) {
  while (part.failure.ok() && !part.events.empty() && part.events.top().time <= last) {
    Event event = part.events.Pop();
    PrefetchNextFrames(part.events, part.pool);
    ++part.events_processed;
    part.clock.Set(event.time);
    Dispatch(part, event);
  }
}

// Windows: from the earliest event due anywhere, `next`, every partition runs the events before
// next + lookahead at once (a frame one sends reaches another no sooner than that), after taking
// in the frames the others sent it in the window before. The sampler's instants and `until` end
// windows too, so it sees every switch as the one-partition loop shows it. The limits are
// checked between windows.
Status Engine::RunWindows(TimeNs until) {
  if (!arena_) arena_ = std::make_unique<ThreadArena>(static_cast<unsigned>(local_parts_.size()));
  Status status = Status::Ok();
  for (;;) {
    WindowTerms terms;
    for (uint32_t k : local_parts_) {
      const Partition& part = *parts_[k];
      if (status.ok() && !part.failure.ok()) status = part.failure;
      if (!part.events.empty()) terms.next = std::min(terms.next, part.events.top().time);
      terms.next = std::min(terms.next, part.outbox_first[parity_ ^ 1]);  // sent, not taken in
      terms.events += part.events_processed;
    }
    terms.failed = status.ok() ? 0 : 1;
    terms.due = EventsDue();
    if (ranks_ != nullptr) {
      terms = AgreeOnWindow(terms);
      ranks_idle_ = terms.next == kNever;
      if (terms.failed != 0) status = AgreedFailure(status);
    }
    if (!status.ok()) break;
    const TimeNs next = terms.next;
    if (next == kNever || next > until) break;
    if (first_event_ns_ == kNever) first_event_ns_ = next;
    if (next - first_event_ns_ > limits_.max_virtual_ns || terms.events >= limits_.max_events) {
      limit_reached_ = true;
      failure_ = Status::Error("stopped at " + FormatSeconds(next - first_event_ns_) +
                               " of virtual time after " + std::to_string(terms.events) +
                               " events, the run's limit, with " + std::to_string(terms.due) +
                               " events still due (a forwarding loop, or a host that never "
                               "stops sending?)");
      status = failure_;
      break;
    }
    TimeNs end = lookahead_ns_ == kNever ? kNever : next + lookahead_ns_;  // excluded
    if (sampler_) {
      if (next_sample_ns_ == kNever) next_sample_ns_ = next / sample_period_ns_ * sample_period_ns_;
      for (; next_sample_ns_ <= next; next_sample_ns_ += sample_period_ns_) {
        FlushCrossings();  // the switches as they are: every frame on its way is in a queue
        SetClocks(next_sample_ns_);
        sampler_(next_sample_ns_);
      }
      end = std::min(end, next_sample_ns_);
    }
    RunWindow(end == kNever ? until : std::min(until, end - 1));
    if (ranks_ != nullptr) SendAcrossRanks();
  }
  FlushCrossings();
  if (ranks_ != nullptr) GatherRanks();  // every rank's clock the latest of all, too
  if (!status.ok()) return status;
  TimeNs now = 0;
  for (const auto& part : parts_) now = std::max(now, part->clock.NowNs());
  if (until != kNever) now = std::max(now, until);
  SetClocks(now);
  return FinishIfIdle();
}

// One window up to and including `last`: each partition, on its own thread, takes in what was
// sent to it in the window before, frees what it sent in the one before that, and runs.
void Engine::RunWindow(TimeNs last) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  const uint32_t sent_before = parity_ ^ 1;
  arena_->ForEach(local_parts_.size(), [&](std::size_t i) {
    const uint32_t k = local_parts_[i];
    Partition& part = *parts_[k];
    const Clock::time_point start = Clock::now();
    TakeCrossings(k, sent_before);
    FreeSent(part, parity_);
    const Clock::time_point taken = Clock::now();
    RunPartition(part, last);
    part.take_s = std::chrono::duration<double>(taken - start).count();
    part.busy_s = std::chrono::duration<double>(Clock::now() - start).count();
  });
  parity_ ^= 1;
  WindowStats& w = window_stats_;
  ++w.windows;
  w.wall_s += std::chrono::duration<double>(Clock::now() - begin).count();
  double busiest = 0, longest_take = 0;
  w.crossings = 0;
  for (const auto& part : parts_) {
    busiest = std::max(busiest, part->busy_s);
    longest_take = std::max(longest_take, part->take_s);
    w.crossings += part->crossings;
  }
  w.busiest_s += busiest;
  w.handover_s += longest_take;
}

// In the order of the sending partitions and their sends, which no thread's timing changes.
void Engine::TakeCrossings(uint32_t k, uint32_t parity) {
  Partition& to = *parts_[k];
  for (const auto& from : parts_) {
    for (Event event : from->outbox[parity][k]) {
      Packet* copy = to.pool.Clone(*event.pkt);  // a pool is one thread's: a copy, not the frame
      if (copy == nullptr) {
        ++to.counters.drops[static_cast<std::size_t>(DropReason::kPoolExhausted)];
        continue;
      }
      event.pkt = copy;
      ++to.counters.in_flight;
      ++to.crossings;
      to.events.PushKeyed(event);
    }
  }
}

void Engine::FreeSent(Partition& part, uint32_t parity) {
  for (std::vector<Event>& sent : part.outbox[parity]) {
    for (const Event& event : sent) part.pool.Free(event.pkt);
    sent.clear();
  }
  part.outbox_first[parity] = kNever;
}

// Between runs, and before a sample, no frame waits in an outbox: those sent in the last window
// are taken in, and every sent frame is freed.
void Engine::FlushCrossings() {
  for (uint32_t k = 0; k < parts_.size(); ++k) TakeCrossings(k, parity_ ^ 1);
  window_stats_.crossings = 0;
  for (auto& part : parts_) {
    FreeSent(*part, 0);
    FreeSent(*part, 1);
    window_stats_.crossings += part->crossings;
  }
}

void Engine::Dispatch(Partition& part, const Event& event) {
  switch (event.kind) {
    case EventKind::kSwitchArrival: {
      --part.counters.in_flight;
      SwitchSlot& slot = switches_[event.node];
      // The control plane first: what it installed before this instant applies to the packet.
      slot.sw->ServiceControlPlane(part.clock.NowNs());
      slot.sw->Receive(event.pkt, event.port);
      ScheduleAllServices(event.node);
      ScheduleControlPlane(event.node);
      break;
    }
    case EventKind::kControlPlane: {
      SwitchSlot& slot = switches_[event.node];
      slot.control_at = kNever;
      slot.sw->ServiceControlPlane(part.clock.NowNs());
      ScheduleControlPlane(event.node);
      break;
    }
    case EventKind::kPortService: {
      SwitchSlot& slot = switches_[event.node];
      if (event.cookie != slot.service_gen[event.port]) {  // superseded by an earlier one
        ++part.stale_services;
        break;
      }
      slot.service_at[event.port] = kNever;
      Service(event.node, event.port);
      break;
    }
    case EventKind::kHostArrival: {
      --part.counters.in_flight;
      ++part.counters.delivered;
      HostSlot& host = *hosts_[event.node];
      ++host.received_;
      host.host_->OnFrame(part.clock.NowNs(), event.pkt);
      break;
    }
    case EventKind::kHostTimer:
      hosts_[event.node]->host_->OnTimer(part.clock.NowNs(), event.cookie);
      break;
    case EventKind::kCpuService: {
      SwitchSlot& slot = switches_[event.node];
      if (event.cookie != slot.cpu_gen) {  // superseded by an earlier one
        ++part.stale_services;
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
  Push(PartOf(sw), event, sw, slot.pushes);
}

void Engine::ScheduleControlPlane(uint32_t sw) {
  SwitchSlot& slot = switches_[sw];
  const TimeNs at = slot.sw->NextDigestDue();
  if (at == kNever || slot.control_at <= at) return;
  slot.control_at = at;
  Partition& part = PartOf(sw);
  Event event;
  event.time = std::max(at, part.clock.NowNs());
  event.kind = EventKind::kControlPlane;
  event.node = sw;
  Push(part, event, sw, slot.pushes);
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
  const TimeNs now = PartOf(sw).clock.NowNs();
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
  Partition& part = PartOf(sw);
  const TimeNs now = part.clock.NowNs();
  for (PortId p = 0; p < slot.sw->num_ports(); ++p) {
    if (marked[p]) {
      tm.MarkPort(p);
      continue;
    }
    const TimeNs at = slot.sw->NextTransmitTime(p);
    if (at != kNever && slot.service_at[p] > std::max(at, now) && part.failure.ok()) {
      part.failure = Status::Error("switch " + slot.sw->name() + " port " + std::to_string(p) +
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
  Push(PartOf(sw), event, sw, slot.pushes);
}

TimeNs Engine::SerializationNs(const Switch& sw, PortId port, uint32_t len) const {
  const uint64_t rate = sw.tm().PortRate(port);
  if (rate == 0) return 0;
  const uint64_t bits = (uint64_t{len} + sw.config().tm.wire_overhead_bytes) * 8;
  // bits * 1e9 stays far below 2^64 for any frame the pool can hold.
  return (bits * 1'000'000'000ull + rate - 1) / rate;
}

void Engine::Deliver(uint32_t sw, PortId port, Packet* pkt) {
  SwitchSlot& slot = switches_[sw];
  Partition& part = *parts_[slot.partition];
  Attachment& end = slot.ports[port];
  if (end.kind == AttachKind::kNone) {
    ++part.counters.drops[static_cast<std::size_t>(DropReason::kLinkDown)];
    part.pool.Free(pkt);
    return;
  }
  ++end.sent;
  if (end.kind == AttachKind::kLink) ++part.counters.link_frames;
  if (end.rng.Bernoulli(end.loss)) {
    ++end.lost;
    ++part.counters.drops[static_cast<std::size_t>(DropReason::kLossInjected)];
    part.pool.Free(pkt);
    return;
  }
  Event event;
  event.time = part.clock.NowNs() + SerializationNs(*slot.sw, port, pkt->len) + end.delay_ns;
  event.pkt = pkt;
  event.node = end.peer;
  event.port = end.peer_port;
  event.kind = end.kind == AttachKind::kLink ? EventKind::kSwitchArrival : EventKind::kHostArrival;
  if (end.crosses) [[unlikely]] {  // keyed here, queued there in the next window
    event.seq = NodeKey(sw, slot.pushes);
    part.outbox[parity_][switches_[end.peer].partition].push_back(event);
    part.outbox_first[parity_] = std::min(part.outbox_first[parity_], event.time);
    return;
  }
  ++part.counters.in_flight;
  Push(part, event, sw, slot.pushes);
}

void Engine::SendFromHost(HostSlot& host, Packet* pkt) {
  Partition& part = *parts_[host.partition_];
  ++part.counters.injected;
  ++host.sent_;
  if (host.rng_.Bernoulli(host.loss_)) {
    ++host.lost_;
    ++part.counters.drops[static_cast<std::size_t>(DropReason::kLossInjected)];
    part.pool.Free(pkt);
    return;
  }
  Event event;
  event.time = part.clock.NowNs() + host.delay_ns_;
  event.pkt = pkt;
  event.node = host.sw_;
  event.port = host.port_;
  event.kind = EventKind::kSwitchArrival;
  ++part.counters.in_flight;
  Push(part, event, kHostNode | host.index_, host.pushes_);
}

}  // namespace swemu
