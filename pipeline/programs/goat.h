#pragma once
// goat: GOAT's collaborative in-network aggregation (Fang et al., TNET 2024, section III-D) on top
// of l2l3. The header is pipeline/wire/goat.h; docs/wire.md ("GOAT") has the rules.
//
// Stage 0 validates the header and looks up goat_node by <job, node id, sub-model>:
//   - `aggregate base fragments fan_in`: this switch is the fragment's aggregation node; the
//     fragment's slot is base + fragment id (GOAT's memory: each sub-model holds b(g) slots of
//     this switch for the whole job, placed by the plan, so slots never collide); a fragment id
//     at or past `fragments` is sent on to the PS, not aggregated. A slot completes at `fan_in`
//     workers (sum of y after rounding, or K in the asynchronous mode), and its aggregate is
//     re-addressed to the PS (node id 0) so that later switches pass it on.
//   - `share base slots fan_in`: ATP-style memory sharing, the paper's baseline (section III-A,
//     VII-A): slot base + fragment mod slots, first come first served, a fragment finding the
//     slot held by another is forwarded unchanged, the slot is held until the PS's result passes
//     back through the switch, and a finished aggregate keeps node id "any" so a later switch
//     may aggregate it further.
//   - a miss: not this switch's fragment. goat_route (node id -> port) forwards it towards its
//     aggregation node, also off the worker-to-PS path (Figure 2(c)); a node id goat_route does
//     not know, and the PS's id, go by l2l3 (to the PS's address).
// Then one read-modify-write per register array, in pipeline order: goat_id (2 lanes: the slot
// key <job, sub-model, fragment> and round + 1) -> goat_bitmap (64) -> goat_count (count and
// done bit) -> goat_value (lanes) -> goat_overflow (1 bit); the bitmap, value and overflow
// stages, and the prefetch, are agg_kernel.h's, shared with atp.
//
// Rounds: a slot keeps the round it aggregates. A fragment of a newer round reclaims a GOAT slot
// (an unfinished older round is evicted and counted: its workers' retransmissions reach the PS);
// a fragment of an older round, or of a round the slot has finished, goes on to the PS, which
// counts it or discards it as late. Loss recovery: a retransmitted fragment (kGoatFlagResend)
// never waits in a slot. If its slot holds its round unfinished, the slot is flushed: the
// partial sum (with the fragment's values if its bit was not yet in) goes to the PS and the slot
// is marked done; otherwise the fragment goes to the PS on its own. The PS merges by bitmap.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/programs/agg_meta.h"
#include "pipeline/programs/l2l3.h"
#include "pipeline/wire/goat.h"

namespace swemu {

// goat's own drop reasons, named in show drops and counters.json (pipeline/core/drop_reason.h).
struct GoatDrop {
  static inline const DropReason kBadVersion = RegisterDropReason("goat_bad_version");
  static inline const DropReason kBadElements = RegisterDropReason("goat_bad_elements");
  static inline const DropReason kInconsistent = RegisterDropReason("goat_inconsistent");
  static inline const DropReason kDuplicate = RegisterDropReason("goat_duplicate");
};

struct GoatCounters {
  uint64_t claimed = 0;        // empty (or reclaimed) slot taken by a fragment
  uint64_t aggregated = 0;     // fragment added into a held slot
  uint64_t completed = 0;      // slot reached its fan-in: aggregate sent to the PS
  uint64_t flushed = 0;        // a retransmission sent a slot's partial sum to the PS
  uint64_t duplicates = 0;     // worker already in the slot: dropped (goat_duplicate)
  uint64_t collisions = 0;     // share: slot held by another fragment, forwarded unchanged
  uint64_t late = 0;           // fragment of a finished or older round: sent on to the PS
  uint64_t evicted = 0;        // an unfinished older round's slot reclaimed by a newer round
  uint64_t released = 0;       // share: the PS's result freed the slot
  uint64_t out_of_range = 0;   // not aggregated by its entry (fragment past the sub-model's
                               // slots, slots past the array, fan-in 0 or above 64): to the PS
  uint64_t routed = 0;         // forwarded by node id (goat_route)
  uint64_t route_miss = 0;     // not this switch's, node id unknown to goat_route: l2l3
  uint64_t resend_direct = 0;  // retransmission with no slot of its round here: to the PS
  uint64_t overflow = 0;       // aggregates written with kGoatFlagOverflow
  uint64_t fragments_forwarded = 0;  // first pieces of fragmented IPv4: forwarded as they are
};

class GoatProgram final : public Program {
 public:
  static constexpr uint16_t kAppId = 3;          // Parser app id of the GOAT header
  static constexpr uint32_t kLanesPerStage = 4;  // stateful ALUs per stage
  enum NodeAction : uint16_t { kAggregate, kShare, kNotHere };
  enum RouteAction : uint16_t { kRouteForward, kRouteMiss };

  std::string_view name() const noexcept override { return "goat"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override { l2l3_.Egress(pkt); }
  void EgressBurst(Packet** pkts, uint32_t n) noexcept override { l2l3_.EgressBurst(pkts, n); }
  uint32_t ShardKey(const Packet& pkt) const noexcept override;
  static constexpr uint32_t kUserWords = kAggMetaWords;  // an AggMeta (agg_meta.h)
  uint32_t UserMetadataWords() const noexcept override { return kUserWords; }
  SWEMU_L2L3_DIGESTS(l2l3_)

  const GoatCounters& counters() const noexcept { return counters_; }
  void ResetCounters() noexcept { counters_ = GoatCounters(); }
  uint32_t SlotsInUse() const;  // slow path: slots whose key is not 0
  uint32_t slots() const noexcept { return slots_; }
  uint16_t elements() const noexcept { return elements_; }

 private:
  Status DeclareResources(ProgramContext& ctx, uint64_t entries);
  Status AddCommands(CommandTable& commands);
  std::string StatsJson() const;
  // Stage 0: header checks, goat_node and goat_route. Packets with work in the slot arrays are
  // appended to agg; packets goat_route forwards are marked in fwd_by_route.
  void Classify(Packet** pkts, uint32_t n, Packet** agg, uint32_t* n_agg) noexcept;
  bool Validate(Packet& pkt) const noexcept;
  void Route(Packet** pkts, uint32_t n) noexcept;
  // The slot stages in pipeline order; the bitmap, value and overflow stages and the prefetch
  // are agg_kernel.h's, shared with atp.
  void RunSlots(Packet** pkts, uint32_t n) noexcept;
  uint32_t IdStage(Packet** pkts, uint32_t n) noexcept;
  void Finish(Packet& pkt) noexcept;

  L2l3Program l2l3_;
  MatchTable* nodes_ = nullptr;
  MatchTable* routes_ = nullptr;
  RegisterArray* id_ = nullptr;
  RegisterArray* bitmap_ = nullptr;
  RegisterArray* count_ = nullptr;
  RegisterArray* values_ = nullptr;
  RegisterArray* overflow_ = nullptr;
  uint32_t slots_ = kGoatDefaultSlots;
  uint32_t parse_depth_ = 0;
  uint16_t elements_ = kGoatDefaultElements;
  GoatCounters counters_;
};

}  // namespace swemu
