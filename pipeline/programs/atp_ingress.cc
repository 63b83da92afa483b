// atp ingress: validation, the job table and the aggregator stages (docs/wire.md, "ATP").
//
// Each stage runs over the whole burst before the next one, as packets follow one another
// through a PISA pipeline. Every array is touched only by its own stage, in packet order, so the
// result is the same as running the packets one by one; what changes is that the cache misses
// on the aggregator cells of up to 32 packets overlap (each stage prefetches the next array's
// cells while it works).
#include <algorithm>
#include <bit>

#include "pipeline/programs/agg_kernel.h"
#include "pipeline/programs/agg_meta.h"
#include "pipeline/programs/atp.h"
#include "pipeline/wire/byte_order.h"

namespace swemu {
namespace {

enum Op : uint8_t {
  kOpNone,         // no (further) aggregator access
  kOpParam,        // parameter packet: free the aggregator if it holds this <job, seq>
  kOpGradient,     // gradient to aggregate: the id stage decides what it does
  kOpClaim,        // empty aggregator: store the packet
  kOpMerge,        // hit: bitmap stage decides between add and duplicate
  kOpResendFirst,  // retransmission hit at the first level: partial result or as-is
  kOpAdd,          // add the packet into the aggregator
  kOpPartial,      // add, write the sum into the packet and clear the aggregator
  kOpClear,        // deallocate (all fields 0)
};
// The packet's aggregator index, result bitmap, op and flags (agg_meta.h).
AggMeta<Op>& Meta(Packet& pkt) noexcept { return AggMetaOf<Op>(pkt); }
uint32_t Index(const Packet& pkt) noexcept { return AggMetaOf<Op>(pkt).slot; }
AtpHeader* Atp(Packet& pkt) noexcept { return HeaderAt<AtpHeader>(pkt.data + pkt.hdr.app); }

// Congestion the packet already carries: IP CE or the ATP ecn flag.
bool PacketEcn(Packet& pkt) noexcept {
  return (pkt.data[pkt.hdr.ipv4 + 1] & 0x3) == 0x3 || Atp(pkt)->Has(kAtpFlagEcn);
}

// What atp's bitmap, count, value and overflow stages do (agg_kernel.h): a first-level
// retransmission takes the bitmap for a partial result or frees it; atp_count's flag is the ECN
// the aggregator saw (the result carries it); a partial result reads and clears the aggregator,
// a deallocation zeroes it, and the overflow bit is freed with the aggregator.
using AtpOp = Op;
struct AtpAgg {
  using Op = AtpOp;
  static constexpr Op kClaim = kOpClaim;
  static constexpr Op kMerge = kOpMerge;
  static constexpr Op kAdd = kOpAdd;
  static uint64_t Workers(Packet& pkt) noexcept { return Atp(pkt)->Bitmap(); }
  static DropReason Duplicate() noexcept { return AtpDrop::kDuplicate; }
  static Op OtherBitmap(uint64_t& cell, uint64_t bits, AggMeta<Op>& meta,
                        uint64_t* result) noexcept {
    if (meta.op != kOpResendFirst) {  // a deallocation
      cell = 0;
      return meta.op;
    }
    // Fig. 4 (9) partial result if its bit is missing, else (8) forwards the packet as-is; (9)
    // sends the result on past this level.
    *result = cell | bits;
    const Op op = (cell & bits) == 0 ? kOpPartial : kOpClear;
    cell = 0;
    if (op == kOpPartial) meta.flip_edge = true;
    return op;
  }
  static uint64_t FanIn(Packet& pkt) noexcept { return Atp(pkt)->FanIn(Atp(pkt)->EdgeId()); }
  static bool TakesAdd(AggCountWord) noexcept { return true; }
  static bool CountedFlag(Packet& pkt, AggMeta<Op>& meta, bool claim, AggCountWord before,
                          bool) noexcept {
    const bool seen = (!claim && before.flag) || PacketEcn(pkt);
    if (seen) meta.ecn = true;
    return seen;
  }
  // A partial result or a deallocation frees the word; the ECN it saw goes with the packet.
  static Op OtherCount(Packet& pkt, AggMeta<Op>& meta, AggCountWord before,
                       AggCountWord* after) noexcept {
    if (before.flag || PacketEcn(pkt)) meta.ecn = true;
    *after = AggCountWord{};
    return meta.op;
  }
  static LaneOp Lanes(Op op) noexcept {
    switch (op) {
      case kOpClaim:
        return LaneOp::kClaim;
      case kOpAdd:
        return LaneOp::kAdd;
      case kOpPartial:
        return LaneOp::kAddClear;
      default:
        return LaneOp::kZero;
    }
  }
  static bool KeepsOverflow(Op op) noexcept { return op == kOpClaim || op == kOpAdd; }
  static uint8_t* Elements(Packet& pkt) noexcept { return Atp(pkt)->Elements(); }
  static bool CarriesOverflow(Packet& pkt) noexcept { return Atp(pkt)->Has(kAtpFlagOverflow); }
  static void MarkOverflow(Packet& pkt) noexcept { Atp(pkt)->Set(kAtpFlagOverflow); }
};

}  // namespace

void AtpProgram::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  Packet* agg[kMaxBurst];
  uint32_t n_agg = 0;
  Classify(pkts, n, agg, &n_agg);
  if (n_agg != 0) RunAggregators(agg, n_agg);
  // Everything not consumed, dropped or multicast by the job table is l2l3's to forward.
  Packet* fwd[kMaxBurst];
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Metadata& meta = pkts[i]->meta;
    if (!meta.dropped() && !meta.consumed && meta.mcast_grp == 0) fwd[m++] = pkts[i];
  }
  if (m != 0) l2l3_.IngressBurst(fwd, m);
}

bool AtpProgram::Validate(Packet& pkt) const noexcept {
  const AtpHeader* h = Atp(pkt);
  DropReason reason = DropReason::kNone;
  const uint32_t end = pkt.hdr.app + kAtpHeaderLen + 4u * elements_;
  const uint32_t udp_end = pkt.hdr.udp + LoadBe16(pkt.data + pkt.hdr.udp + 4);
  if (h->Version() != kAtpVersion) {
    reason = AtpDrop::kBadVersion;
  } else if (h->NumElements() != elements_) {
    reason = AtpDrop::kBadElements;
  } else if (end > pkt.len || end > udp_end) {
    reason = DropReason::kTruncatedAppHeader;
  } else if (end > parse_depth_) {
    reason = DropReason::kParseDepthExceeded;
  } else if (h->worker_id >= kAtpMaxWorkers) {
    reason = AtpDrop::kWorkerIdRange;
  } else {
    return true;
  }
  pkt.meta.MarkDrop(reason);
  return false;
}

void AtpProgram::Classify(Packet** pkts, uint32_t n, Packet** agg, uint32_t* n_agg) noexcept {
  Packet* atp[kMaxBurst];
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (pkt.hdr.app_id != kAppId || !Validate(pkt)) continue;
    atp[m] = &pkt;
    keys[m++] = KeyPacker().Push(Atp(pkt)->JobId(), 16).key();
  }
  if (m == 0) return;
  jobs_->LookupBatch(keys, res, m);
  for (uint32_t i = 0; i < m; ++i) {
    Packet& pkt = *atp[i];
    const AtpHeader* h = Atp(pkt);
    const ActionCall& action = *res[i].action;
    if (!res[i].hit || action.action == kJobDrop) {
      pkt.meta.MarkDrop(res[i].hit ? DropReason::kProgramDrop : AtpDrop::kUnknownJob);
      continue;
    }
    const bool aggregate = action.action == kAggregate;
    // The index is ATP's own (a hash of <job, seq>); GOAT's comes from its plan (goat_node).
    Meta(pkt).slot = AtpAggregatorIndex(h->JobId(), h->Seq(), aggregators_);
    if (h->Has(kAtpFlagParam)) {
      // Replicate only one sent to a group (dst MAC I/G bit): the PS's unicast resend to the
      // one worker that asked is L2-forwarded, else a non-ATP switch on the way would bounce a
      // copy back and the two would loop it forever.
      if ((pkt.data[pkt.hdr.eth] & 1) != 0) {
        pkt.meta.mcast_grp = static_cast<uint16_t>(action.params[0]);  // 0: L2 forwarding
      }
      if (aggregate) {
        Meta(pkt).op = kOpParam;
        agg[(*n_agg)++] = &pkt;
      }
      continue;
    }
    AdmitGradient(pkt, aggregate, agg, n_agg);
  }
}

void AtpProgram::AdmitGradient(Packet& pkt, bool aggregate, Packet** agg,
                               uint32_t* n_agg) noexcept {
  const AtpHeader* h = Atp(pkt);
  const uint8_t fan_in = h->FanIn(h->EdgeId());
  const uint32_t bitmap = h->Bitmap();
  if (bitmap == 0 || fan_in > kAtpMaxWorkers ||
      (fan_in != 0 && static_cast<uint32_t>(std::popcount(bitmap)) > fan_in)) {
    pkt.meta.MarkDrop(AtpDrop::kInconsistent);
    return;
  }
  // No aggregation level at this edge, a float (overflow path) packet, or aggregation off.
  if (fan_in == 0 || h->Has(kAtpFlagFloat) || !aggregate) {
    ++counters_.forwarded_plain;
    return;
  }
  Meta(pkt).op = kOpGradient;
  agg[(*n_agg)++] = &pkt;
}

void AtpProgram::RunAggregators(Packet** pkts, uint32_t n) noexcept {
  Packet* live[kMaxBurst];
  std::copy(pkts, pkts + n, live);
  // While one stage runs, the cells of the array two stages on are prefetched for the burst.
  auto ahead = [&](std::size_t stage) {
    if (stage < arrays_.size()) PrefetchSlots<AtpAgg>(arrays_[stage], live, n);
  };
  ahead(0);
  ahead(1);
  ahead(2);
  // Each stage is timed as one call per burst when a StageProfile is on (TimeBurst).
  {
    auto timed = id_->TimeBurst(n);
    n = IdStage(live, n);
  }
  ahead(3);
  {
    auto timed = bitmap_->TimeBurst(n);
    n = AggBitmapStage<AtpAgg>(bitmap_, live, n, &counters_.duplicates,
                               [](Packet&) { return true; });
  }
  ahead(4);
  {
    auto timed = count_->TimeBurst(n);
    // A complete result goes on past this level; a partial one carries its sum out.
    AggCountStage<AtpAgg>(count_, live, n, counters_, [](Packet& pkt, AggCountWord, bool done) {
      AggMeta<Op>& meta = Meta(pkt);
      if (meta.op == kOpPartial) meta.write_out = true;
      if (done) meta.flip_edge = true;
    });
  }
  {
    auto timed = values_->TimeBurst(n);
    AggValueStage<AtpAgg>(values_, live, n);
  }
  {
    auto timed = overflow_->TimeBurst(n);
    counters_.overflow += AggOverflowStage<AtpAgg>(overflow_, live, n);
  }
  for (uint32_t i = 0; i < n; ++i) Finish(*live[i]);
}

// atp_id: claim, hit, collision or deallocation; compacts pkts to those with work left. Not
// agg_kernel.h's: an ATP aggregator is keyed by <job, seq>, freed by the parameter packet, and a
// collision goes on upstream, where a GOAT slot is keyed by fragment and round and reclaimed.
uint32_t AtpProgram::IdStage(Packet** pkts, uint32_t n) noexcept {
  uint32_t live = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    AtpHeader* h = Atp(pkt);
    const uint64_t id = AtpAggregatorId(h->JobId(), h->Seq());
    const bool param = Meta(pkt).op == kOpParam;
    const bool resend = h->Has(kAtpFlagResend);
    const bool first_level = h->EdgeId() == 0;
    Op op = kOpNone;
    bool collision = false;
    if (!id_->Rmw(pkt, Index(pkt), [&](std::span<uint64_t> cell) {
          if (param || (resend && cell[0] == id)) {  // deallocate
            if (cell[0] != id) return;
            cell[0] = 0;
            op = !param && first_level ? kOpResendFirst : kOpClear;
          } else if (cell[0] == 0) {
            if (!resend) {
              cell[0] = id;
              op = kOpClaim;
            }
          } else if (cell[0] != id) {
            collision = true;
          } else {
            op = kOpMerge;
          }
        })) {
      continue;
    }
    if (param) {
      counters_.param_dealloc += op == kOpClear;
    } else if (collision) {  // Fig. 4 (1): on upstream, past this switch, as a resend
      ++counters_.collisions;
      h->Set(kAtpFlagResend);
      h->FlipEdge();
      pkt.hdr.dirty |= kDirtyL4;
    } else if (resend) {
      ++(op == kOpNone ? counters_.resend_forwarded : counters_.resend_dealloc);
      // A retransmission that finds no aggregator here goes on as a collision does (Fig. 4
      // (1)): marked past this level, so the next switch applies rule 7 and forwards it.
      if (op == kOpNone && first_level) {
        h->FlipEdge();
        pkt.hdr.dirty |= kDirtyL4;
      }
    }
    Meta(pkt).op = op;
    if (op != kOpNone) pkts[live++] = &pkt;
  }
  return live;
}

// Header rewrites of a result (complete or partial) and of a first-level retransmission.
void AtpProgram::Finish(Packet& pkt) noexcept {
  const AggMeta<Op>& meta = Meta(pkt);
  if (!meta.write_out && !meta.flip_edge) return;
  AtpHeader* h = Atp(pkt);
  if (meta.write_out) {
    h->SetBitmap(meta.bitmap_lo);
    if (meta.ecn) h->Set(kAtpFlagEcn);
  }
  if (meta.flip_edge) h->FlipEdge();
  pkt.hdr.dirty |= kDirtyL4;
}

}  // namespace swemu
