#pragma once
// atp: in-network gradient aggregation (ATP, Lao et al., NSDI '21, sections 4-6) on top of l2l3.
// The header is pipeline/wire/atp.h; the protocol rules are in docs/wire.md ("ATP").
//
// Ingress, PISA-style: stage 0 validates the header and looks the job up in `atp_job`; then one
// read-modify-write per register array in pipeline order: atp_id (64 bit) -> atp_bitmap (32) ->
// atp_count (count + ECN bit) -> atp_value (one int32 lane per element, a lane-split array: 4
// lanes per stage over consecutive stages, one access per pass) -> atp_overflow (1 bit).
// The op each later array applies (claim, add, read, clear) is decided by the earlier ones and
// carried in typed metadata (AggMeta in Packet::meta.user, agg_meta.h), as a Tofino program
// would. Lanes that do not fit the ingress stages live in egress stages (ATP's "second
// pipeline") but run in the same pass, before the TM. Everything ATP does not consume is forwarded by the composed l2l3 program.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/programs/agg_meta.h"
#include "pipeline/programs/l2l3.h"
#include "pipeline/wire/atp.h"

namespace swemu {

// atp's own drop reasons, named in show drops and counters.json (pipeline/core/drop_reason.h).
struct AtpDrop {
  static inline const DropReason kBadVersion = RegisterDropReason("atp_bad_version");
  static inline const DropReason kBadElements = RegisterDropReason("atp_bad_elements");
  static inline const DropReason kUnknownJob = RegisterDropReason("atp_unknown_job");
  static inline const DropReason kWorkerIdRange = RegisterDropReason("atp_worker_id_range");
  static inline const DropReason kInconsistent = RegisterDropReason("atp_inconsistent");
  static inline const DropReason kDuplicate = RegisterDropReason("atp_duplicate");
};

struct AtpCounters {
  uint64_t claimed = 0;           // empty aggregator taken by a gradient
  uint64_t aggregated = 0;        // gradient added into a held aggregator
  uint64_t completed = 0;         // aggregator reached the fan-in: result sent upstream
  uint64_t collisions = 0;        // aggregator held by another <job, seq>: sent on with resend
  uint64_t duplicates = 0;        // bitmap overlap: dropped (atp_duplicate)
  uint64_t param_dealloc = 0;     // parameter packet freed its aggregator
  uint64_t resend_dealloc = 0;    // retransmission hit its aggregator and freed it
  uint64_t resend_forwarded = 0;  // retransmission found no aggregator: forwarded unchanged
  uint64_t overflow = 0;          // results written with kAtpFlagOverflow
  uint64_t forwarded_plain = 0;   // gradients not aggregated here (float, forward_only, fan-in 0)
};

class AtpProgram final : public Program {
 public:
  static constexpr uint16_t kAppId = 1;          // Parser app id of the ATP header
  static constexpr uint32_t kLanesPerStage = 4;  // stateful ALUs per stage
  enum JobAction : uint16_t { kAggregate, kForwardOnly, kJobDrop };

  std::string_view name() const noexcept override { return "atp"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override;
  uint32_t ShardKey(const Packet& pkt) const noexcept override;
  // The aggregator index, its bitmap, the op and flags: an AggMeta (agg_meta.h).
  static constexpr uint32_t kUserWords = kAggMetaWords;
  uint32_t UserMetadataWords() const noexcept override { return kUserWords; }
  SWEMU_L2L3_DIGESTS(l2l3_)

  const AtpCounters& counters() const noexcept { return counters_; }
  void ResetCounters() noexcept { counters_ = AtpCounters(); }
  // Slow path: aggregators whose id is not 0 (a scan of atp_id).
  uint32_t AggregatorsInUse() const;
  uint16_t elements() const noexcept { return elements_; }
  uint32_t aggregators() const noexcept { return aggregators_; }

 private:
  Status DeclareResources(ProgramContext& ctx, uint64_t jobs);
  Status AddCommands(CommandTable& commands);
  std::string StatsJson() const;
  // Stage 0: header checks and the job table. Packets that go on to the aggregator stages are
  // appended to agg; every other packet is left to forwarding (or dropped).
  void Classify(Packet** pkts, uint32_t n, Packet** agg, uint32_t* n_agg) noexcept;
  bool Validate(Packet& pkt) const noexcept;
  void AdmitGradient(Packet& pkt, bool aggregate, Packet** agg, uint32_t* n_agg) noexcept;
  // The register stages over the burst, one array at a time, in pipeline order; the bitmap,
  // value and overflow stages and the prefetches are agg_kernel.h's, shared with goat.
  void RunAggregators(Packet** pkts, uint32_t n) noexcept;
  uint32_t IdStage(Packet** pkts, uint32_t n) noexcept;
  void Finish(Packet& pkt) noexcept;

  L2l3Program l2l3_;
  MatchTable* jobs_ = nullptr;
  RegisterArray* id_ = nullptr;
  RegisterArray* bitmap_ = nullptr;
  RegisterArray* count_ = nullptr;
  RegisterArray* values_ = nullptr;  // lane e = element e, 4-byte cells (Rmw32)
  RegisterArray* overflow_ = nullptr;
  std::vector<RegisterArray*> arrays_;  // all of the above in pipeline order (prefetching)
  uint32_t aggregators_ = kAtpDefaultAggregators;
  uint32_t parse_depth_ = 0;
  uint16_t elements_ = kAtpDefaultElements;
  bool ecn_ = true;
  AtpCounters counters_;
};

}  // namespace swemu
