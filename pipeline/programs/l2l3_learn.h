#pragma once
// l2l3's MAC learning (`learning = on` in [program]): the data plane half sends a digest for a
// source MAC the `smac` table does not know, knows on another port, or holds as stale; the
// control plane half (OnDigests, OnControlTime) installs `dmac` and `smac` entries, refreshes
// them, moves them when a host moves, ages them out after `mac_age` seconds and refuses new
// MACs past `mac_limit`. A dmac miss floods within the ingress port's VLAN (one multicast group
// per ingress port: the VLAN's other ports), never back out of the ingress port. Ports are
// access ports: an untagged frame is in its port's VLAN (`port_vlan`), a tagged one must carry
// that VLAN's id (else dropped, vlan_filter). Learning is shared across VLANs (IEEE 802.1Q's
// SVL: one MAC, one port). Hand-written dmac entries are static: never aged nor moved.
// Whoever routes to a MAC (the neighbour agent) hears where learning puts it (OnMacAt).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipeline/program/program.h"

namespace swemu {

struct MacLearningConfig {
  TimeNs age_ns = 300'000'000'000ull;  // 0: never
  uint32_t limit = 4096;               // learned entries at most
  std::vector<uint16_t> port_vlan;     // per port
  uint16_t flood_group_base = 0xFF00;  // ingress port p floods to group base + p
  DigestConfig digest;
};

// The learned table's counters, as `show mac` prints them.
struct MacLearningCounters {
  uint64_t learned = 0;
  uint64_t refreshed = 0;
  uint64_t moved = 0;
  uint64_t aged = 0;
  uint64_t refused_full = 0;  // new MACs refused: the table held mac_limit entries
};

class MacLearning {
 public:
  // Reads learning's [program] keys; null when `learning` is off (none of them is read then).
  static Result<std::unique_ptr<MacLearning>> Load(ProgramContext& ctx, MatchTable* dmac);

  // Data plane, ingress stage 0 over the burst: VLAN ingress filter, then learn digests.
  void Learn(Packet** pkts, uint32_t n) noexcept;
  // Data plane: a bridged packet's dmac result: forward in the VLAN, flood, or drop.
  void Forward(Packet& pkt, const LookupResult& dmac) noexcept;

  DigestChannel* channel() noexcept { return &channel_; }
  // Told, on the control plane, each time learning places a MAC on a port: learned (new, or
  // back after aging) or moved; not on a refresh. An aged-out MAC tells nothing.
  using MacAtHook = std::function<void(uint64_t mac, PortId port)>;
  void OnMacAt(MacAtHook hook) { mac_at_ = std::move(hook); }
  void OnDigests(std::span<const DigestRecord> records, TimeNs now);
  void OnControlTime(TimeNs now);

  // `show mac`: a row per entry (learned and static), then the counters.
  std::string Show(TimeNs now) const;
  // counters.json's "learning" object: the entries, mac_limit and the counters.
  void WriteCounters(JsonWriter& json) const;
  const MacLearningCounters& counters() const { return counters_; }
  std::size_t learned_entries() const { return entries_.size(); }

  static inline const DropReason kVlanFilter = RegisterDropReason("vlan_filter");
  static inline const DropReason kSamePort = RegisterDropReason("same_port");
  enum SmacAction : uint16_t { kLearned, kStale, kPinned, kLearn };

 private:
  struct Entry {
    uint16_t vlan = 0;
    PortId port = 0;
    TimeNs last_seen = 0;
    bool stale = false;
    EntryHandle dmac = kNoEntry;
    EntryHandle smac = kNoEntry;
  };

  MacLearning(MacLearningConfig config, MatchTable* dmac, MatchTable* smac);
  Status AddFloodGroups(TrafficManager& tm, uint16_t num_ports);
  uint16_t VlanOf(const Packet& pkt) const noexcept;
  void Apply(const DigestRecord& record);
  bool IsStatic(uint64_t mac);
  void Install(uint64_t mac, const Entry& at, Entry* entry);
  void Remove(std::map<uint64_t, Entry>::iterator it);
  void Schedule();  // next_check_ from the entries

  MacLearningConfig config_;
  MatchTable* dmac_;
  MatchTable* smac_;
  DigestChannel channel_;
  std::map<uint64_t, Entry> entries_;  // by MAC: the control plane's copy
  TimeNs next_check_ = kNever;
  TimeNs now_ = 0;  // the latest time the control plane was told (show mac's ages)
  MacLearningCounters counters_;
  MacAtHook mac_at_;  // empty unless the switch routes (router interfaces)
};

// "0-3:10,4:20" -> per port VLANs (others 1). Error names the bad part.
Result<std::vector<uint16_t>> ParsePortVlans(std::string_view text, uint16_t num_ports);

}  // namespace swemu
