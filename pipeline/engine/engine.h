#pragma once
// The virtual-time engine: several switches joined by links (rate, delay, loss), hosts on switch
// ports (pcap sources/sinks, later hostlib endpoints), all driven by one VirtualClock through a
// discrete-event agenda. No threads, no wall clock: the same inputs and seed give the same
// output bytes.
//
// Timing model. A frame a host sends arrives at the switch after the host link's delay. A frame
// a switch port transmits (when its TM shaper lets it start) reaches the far end after its
// serialization time, (len + wire_overhead) * 8 / port rate (0 on an unshaped port), plus the
// link's or host link's delay. Loss is drawn per direction from the seed.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/drop_reason.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"
#include "pipeline/engine/engine_host.h"
#include "pipeline/engine/event_queue.h"
#include "pipeline/engine/rng.h"
#include "pipeline/switch/switch.h"

namespace swemu {

struct LinkSpec {
  std::string a;
  PortId a_port = 0;
  std::string b;
  PortId b_port = 0;
  uint64_t rate_bps = 0;  // > 0; both ends' port shaping rate (ApplyLinkRates)
  TimeNs delay_ns = 0;
  double loss = 0;  // per frame, each direction
};

// A link's rate is both its ends' port shaping rate from the switches' creation: appends to
// config.tm.port_rates an entry for each end of `links` on switch config.name (after the
// switch's own, so it overrides a [port.N] rate). An end whose port the switch lacks, or a rate
// AddLink refuses, is left out for AddLink to name. Call it on every config before AddSwitch.
void ApplyLinkRates(const std::vector<LinkSpec>& links, SwitchConfig& config);

struct HostPortSpec {
  std::string sw;
  PortId port = 0;
  std::string in_pcap;   // empty: sends nothing
  std::string out_pcap;  // empty: received frames are counted and discarded
  TimeNs delay_ns = 0;
  double loss = 0;
};

struct EngineCounters {
  uint64_t injected = 0;     // frames hosts offered (including those the engine dropped)
  uint64_t delivered = 0;    // frames that reached a host
  uint64_t link_frames = 0;  // frames switches sent over switch-to-switch links
  uint64_t in_flight = 0;    // frames on a wire right now
  std::array<uint64_t, kDropReasonCount> drops = {};  // loss_injected, link_down, ...

  uint64_t TotalDrops() const;
};

// Bounds on one run, so that a run that cannot end (a forwarding loop between switches, a host
// that retransmits for ever) ends with an error naming the bound instead.
struct EngineLimits {
  TimeNs max_virtual_ns = kNever;  // virtual time past the first event
  uint64_t max_events = ~uint64_t{0};
};

class Engine {
 public:
  explicit Engine(uint64_t seed, std::size_t pool_packets = 65536);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Creates the switch (per-port rates come in config.tm.port_rates), then runs the startup
  // script (may be empty).
  Status AddSwitch(SwitchConfig config, const std::string& startup_script);
  // Joins two switches' ports. The link leaves the switches' traffic managers as they are: each
  // end's port must already be shaped to the link's rate (ApplyLinkRates), else an error.
  Status AddLink(const LinkSpec& spec);
  // A PcapHost on the port; the input file is opened (and its link type checked) now.
  Status AddHostPort(const HostPortSpec& spec);
  // The extension point for live hosts (hostlib endpoints).
  Status AttachHost(std::string_view sw, PortId port, TimeNs delay_ns, double loss,
                    std::unique_ptr<EngineHost> host);

  // Processes events up to and including time `until`, then moves the clock to `until` (when it
  // is not kNever), so a caller stepping in slices sees time pass even when the next event is
  // further away than a slice. When no event remains, hosts are finished (output files
  // closed). May be called again to continue. Fails once a limit is passed.
  Status Run(TimeNs until = kNever);
  // The same, but returns as soon as stop() holds after an event (checked after each one), the
  // clock left at that event's time: a caller timing what it waits for gets the exact time.
  Status Run(TimeNs until, const std::function<bool()>& stop);
  void SetLimits(const EngineLimits& limits) { limits_ = limits; }
  // Calls sample(t) at every multiple t of period_ns from the first event's time on, with the
  // switches as they are at t (before the events due at t), and once after the last event: an
  // exact record in virtual time that adds no event of its own (--telemetry).
  void SetSampler(TimeNs period_ns, std::function<void(TimeNs)> sample) {
    sample_period_ns_ = period_ns;
    sampler_ = std::move(sample);
  }
  // Tests: at every look at a switch's ports, checks that each port the TM did not mark (and
  // the engine therefore skips) has its service pending in time; the run fails naming the first
  // port that has not (ScheduleAllServices' invariant).
  void SetCheckSkippedServices(bool on) { check_skipped_services_ = on; }
  uint64_t events_processed() const { return events_processed_; }
  // Of those, port and CPU services an earlier one superseded (popped and skipped).
  uint64_t stale_services() const { return stale_services_; }
  bool limit_reached() const { return limit_reached_; }

  Switch* FindSwitch(std::string_view name);
  const Switch* FindSwitch(std::string_view name) const;
  std::size_t num_switches() const { return switches_.size(); }
  Switch& switch_at(std::size_t index) { return *switches_[index].sw; }
  TimeNs Now() const { return clock_.NowNs(); }
  const VirtualClock& clock() const { return clock_; }
  HeapPacketPool& pool() { return pool_; }
  const EngineCounters& counters() const { return counters_; }
  bool idle() const { return events_.empty(); }

  // {"switches": {name: Switch::CountersJson()}, "engine": {...}}
  std::string CountersJson() const;
  // Per switch and port: rx/tx packets and bytes, what the port is attached to, then drops.
  std::string PortSummary() const;
  // Every frame is accounted for: injected + multicast copies == delivered + consumed + drops
  // (pipeline, TM, engine) + queued + in flight; and the pool holds exactly the queued and in
  // flight frames. The error names the two sides.
  Status CheckConservation() const;

 private:
  class HostSlot;
  enum class AttachKind : uint8_t { kNone, kLink, kHost };
  struct Attachment {
    AttachKind kind = AttachKind::kNone;
    uint32_t peer = 0;  // switch index (link) or host index (host)
    PortId peer_port = 0;
    TimeNs delay_ns = 0;
    double loss = 0;
    SplitMix64 rng;
    uint64_t sent = 0;
    uint64_t lost = 0;
  };
  struct SwitchSlot {
    std::unique_ptr<Switch> sw;
    std::vector<Attachment> ports;
    std::vector<TimeNs> service_at;     // pending service event per port, kNever if none
    std::vector<uint64_t> service_gen;  // an event with an older generation is stale
    TimeNs cpu_at = kNever;              // pending CPU-port event (packet-in, agent timer)
    uint64_t cpu_gen = 0;                // as service_gen
    TimeNs control_at = kNever;         // pending control-plane event (digests), kNever if none
  };

  Result<std::pair<uint32_t, PortId>> ResolvePort(std::string_view sw, PortId port,
                                                  std::string_view what) const;
  void Dispatch(const Event& event);
  void Service(uint32_t sw, PortId port);
  void ScheduleService(uint32_t sw, PortId port, TimeNs earliest);
  // The service of every port that may be ready sooner than its pending one (the ports the TM
  // marked, and just_served), and the CPU port's (ScheduleCpu).
  void ScheduleAllServices(uint32_t sw, PortId just_served = kPortUnset);
  // SetCheckSkippedServices: sets failure_ if a port the TM did not mark needs a service.
  void CheckSkippedServices(uint32_t sw);
  // An event when the switch's CPU port next has work (a program without an agent never has).
  void ScheduleCpu(uint32_t sw);
  // An event when the switch's next digest is due (a program that sends none never has one).
  void ScheduleControlPlane(uint32_t sw);
  void Deliver(uint32_t sw, PortId port, Packet* pkt);
  void SendFromHost(HostSlot& host, Packet* pkt);
  void Push(Event event);
  TimeNs SerializationNs(const Switch& sw, PortId port, uint32_t len) const;
  std::string Describe(const Attachment& attachment) const;

  uint64_t seed_;
  VirtualClock clock_;
  HeapPacketPool pool_;  // declared before the switches: they free into it when destroyed
  std::vector<SwitchSlot> switches_;
  std::vector<std::unique_ptr<HostSlot>> hosts_;
  EventQueue events_;
  EngineCounters counters_;
  Status failure_;
  EngineLimits limits_;
  uint64_t events_processed_ = 0;
  uint64_t stale_services_ = 0;
  TimeNs sample_period_ns_ = 0;
  TimeNs next_sample_ns_ = kNever;
  std::function<void(TimeNs)> sampler_;
  bool limit_reached_ = false;
  bool check_skipped_services_ = false;
  TimeNs first_event_ns_ = kNever;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace swemu
