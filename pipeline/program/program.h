#pragma once
// The interface every dataplane program implements (l2l3, wire, atp, dlcp, pcn, goat, ...).
// A program declares its resources once in Load() and then runs per packet: Ingress() before the
// traffic manager, Egress() after it. Each program is one short file in pipeline/programs/.
#include <cstdint>
#include <functional>
#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pipeline/control/command_table.h"
#include "pipeline/core/json_writer.h"
#include "pipeline/core/packet.h"
#include "pipeline/core/status.h"
#include "pipeline/program/digest.h"
#include "pipeline/parser/parser.h"
#include "pipeline/program/cpu_port.h"
#include "pipeline/program/program_builder.h"
#include "pipeline/program/program_options.h"
#include "pipeline/program/router_interface.h"
#include "pipeline/tm/traffic_manager.h"

namespace swemu {

// The largest burst the switch hands a program at once.
inline constexpr uint32_t kMaxBurst = 64;

// Per-burst scratch of kMaxBurst elements (table keys, lookup results), left uninitialised: a
// stage writes each element before it reads it. Plain arrays of MatchKey or LookupResult are
// zeroed element by element on every call (their members have initialisers), 2 KiB per stage
// per burst, which showed in profiles.
template <typename T>
class BurstScratch {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  BurstScratch() noexcept {}  // leaves v_ uninitialised on purpose
  T& operator[](uint32_t i) noexcept { return v_[i]; }
  operator T*() noexcept { return v_; }

 private:
  union {
    T v_[kMaxBurst];
  };
};

// What a program may use while it loads. Pointers stay valid for the program's lifetime.
struct ProgramContext {
  ProgramBuilder& builder;
  const ProgramOptions& options;
  Parser& parser;          // to register the program's own headers (Parser::AddUdpApp)
  TrafficManager& tm;      // thresholds the dataplane may change at run time (PCN)
  CommandTable& commands;  // program-specific control commands
  uint16_t num_ports;
  uint64_t seed;  // for any per-packet randomness: runs stay deterministic
  CpuPort& cpu;   // packet-in/packet-out with the program's control plane (CpuAgent)
  const std::vector<RouterInterface>& interfaces;  // the config's [interface.N]
};

class Program {
 public:
  virtual ~Program() = default;
  virtual std::string_view name() const noexcept = 0;
  virtual Status Load(ProgramContext& ctx) = 0;

  // Set meta.egress_spec (and queue_id), or meta.mcast_grp, or MarkDrop(), or consumed.
  virtual void Ingress(Packet& pkt) noexcept = 0;
  // A burst of parsed packets (n <= kMaxBurst). Programs whose tables are large override this
  // to run each stage over the whole burst with batched, prefetching lookups, as an ASIC's
  // pipeline overlaps packets; the default runs Ingress per packet.
  virtual void IngressBurst(Packet** pkts, uint32_t n) noexcept {
    for (uint32_t i = 0; i < n; ++i) Ingress(*pkts[i]);
  }
  // Runs after the TM with meta.egress_port and queue metadata filled in.
  virtual void Egress(Packet& /*pkt*/) noexcept {}
  // Egress of a burst of packets of one port, in order (n <= kMaxBurst); the default runs
  // Egress per packet.
  virtual void EgressBurst(Packet** pkts, uint32_t n) noexcept {
    for (uint32_t i = 0; i < n; ++i) Egress(*pkts[i]);
  }
  // The key whose register cells this packet touches; decides the owning lcore in real time.
  virtual uint32_t ShardKey(const Packet& pkt) const noexcept { return FlowHash(pkt); }
  // A program that never reads headers (a port patch) may skip the parser.
  virtual bool NeedsParser() const noexcept { return true; }
  // How many of Metadata::user's words the program uses (cleared for each packet); a P4 program
  // declares its metadata struct, and the switch clears no more than that.
  virtual uint32_t UserMetadataWords() const noexcept { return kUserMetadataWords; }

  // The control plane's half (digest.h). A program that sends digests owns a channel and
  // returns it here; the switch then drains it and calls OnDigests with the records, oldest
  // first, between bursts (every replica gets every replica's records, in the same order).
  virtual DigestChannel* digest_channel() noexcept { return nullptr; }
  virtual void OnDigests(std::span<const DigestRecord> /*records*/, TimeNs /*now*/) {}
  // Control plane: the time is `now` (aging). Virtual time calls it before each packet, real
  // time every few milliseconds; it must be cheap when nothing is due.
  virtual void OnControlTime(TimeNs /*now*/) {}
  // counters.json's "control_plane" object (Switch::CountersJson), written for a program with a
  // digest channel: its control plane's counters as members. Every replica applies the same
  // records, so they are alike in every replica (`show counters` keeps one replica's).
  virtual void WriteControlPlaneCounters(JsonWriter& /*json*/) const {}
};

using ProgramFactory = std::function<std::unique_ptr<Program>()>;

// Programs register themselves at static-initialisation time (see SWEMU_REGISTER_PROGRAM).
bool RegisterProgram(std::string name, ProgramFactory factory);
Result<std::unique_ptr<Program>> MakeProgram(std::string_view name);
std::vector<std::string> ProgramNames();

#define SWEMU_REGISTER_PROGRAM(name, type)                             \
  [[maybe_unused]] static const bool swemu_program_registered_##type = \
      ::swemu::RegisterProgram(name, [] { return std::make_unique<type>(); })

}  // namespace swemu
