// goat ingress: validation, goat_node / goat_route and the slot stages (docs/wire.md, "GOAT").
// As in atp_ingress.cc, each stage runs over the whole burst before the next one and every
// array is touched only by its own stage, in packet order.
#include <algorithm>
#include <bit>

#include "pipeline/programs/agg_kernel.h"
#include "pipeline/programs/agg_meta.h"
#include "pipeline/programs/goat.h"
#include "pipeline/wire/ipv4.h"

namespace swemu {
namespace {

enum Op : uint8_t {
  kOpNone,
  kOpGradient,   // to aggregate: the id stage decides
  kOpRelease,    // share: the PS's result frees its slot
  kOpClaim,      // (re)claim the slot with this packet
  kOpMerge,      // slot holds this fragment's round: bitmap stage decides add or duplicate
  kOpResend,     // retransmission: flush the slot if it holds the round unfinished
  kOpAdd,        // add into the slot
  kOpFlushAdd,   // add, write the partial sum into the packet, mark the slot done
  kOpFlushRead,  // the packet's workers are in the slot already: write the partial sum out
  kOpToPs,       // no aggregation here: on to the PS (late, stale, or a retransmission)
};

// The packet's slot, result bitmap, op, fan-in and flags (agg_meta.h).
AggMeta<Op>& Meta(Packet& pkt) noexcept { return AggMetaOf<Op>(pkt); }
uint32_t Index(const Packet& pkt) noexcept { return AggMetaOf<Op>(pkt).slot; }
GoatHeader* Goat(Packet& pkt) noexcept { return HeaderAt<GoatHeader>(pkt.data + pkt.hdr.app); }

// What goat's bitmap, count, value and overflow stages do (agg_kernel.h): a retransmission
// flushes the slot (adding its workers if none is in yet); goat_count's flag is the done bit (a
// finished or flushed slot takes nothing more in its round); a flush that adds nothing reads the
// slot, every other op that reaches the lanes adds; the overflow bit is sticky per slot and
// round (a claim starts it again).
using GoatOp = Op;
struct GoatAgg {
  using Op = GoatOp;
  static constexpr Op kClaim = kOpClaim;
  static constexpr Op kMerge = kOpMerge;
  static constexpr Op kAdd = kOpAdd;
  static uint64_t Workers(Packet& pkt) noexcept { return Goat(pkt)->Bitmap(); }
  static DropReason Duplicate() noexcept { return GoatDrop::kDuplicate; }
  // Only kOpResend reaches here: a flush, unless its workers are partly in the slot already.
  static Op OtherBitmap(uint64_t& cell, uint64_t bits, AggMeta<Op>&, uint64_t* result) noexcept {
    if ((cell & bits) == 0) {
      *result = cell |= bits;
      return kOpFlushAdd;
    }
    if ((cell & bits) == bits) {
      *result = cell;
      return kOpFlushRead;
    }
    return kOpToPs;  // overlaps partly: the slot cannot take it or stand for it
  }
  static uint64_t FanIn(Packet& pkt) noexcept { return AggMetaOf<Op>(pkt).fan_in; }
  static bool TakesAdd(AggCountWord before) noexcept { return !before.flag; }
  static bool CountedFlag(Packet&, AggMeta<Op>&, bool, AggCountWord, bool complete) noexcept {
    return complete;
  }
  // A flush marks the slot done; a done slot's round is over here: the PS decides.
  static Op OtherCount(Packet&, AggMeta<Op>& meta, AggCountWord before,
                       AggCountWord* after) noexcept {
    if (before.flag) return kOpToPs;
    after->flag = true;
    return meta.op;
  }
  static LaneOp Lanes(Op op) noexcept {
    if (op == kOpClaim) return LaneOp::kClaim;
    return op == kOpFlushRead ? LaneOp::kRead : LaneOp::kAdd;
  }
  static bool KeepsOverflow(Op) noexcept { return true; }
  static uint8_t* Elements(Packet& pkt) noexcept { return Goat(pkt)->Elements(); }
  static bool CarriesOverflow(Packet& pkt) noexcept { return Goat(pkt)->Has(kGoatFlagOverflow); }
  static void MarkOverflow(Packet& pkt) noexcept { Goat(pkt)->Set(kGoatFlagOverflow); }
};

}  // namespace

void GoatProgram::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  Packet* agg[kMaxBurst];
  uint32_t n_agg = 0;
  Classify(pkts, n, agg, &n_agg);
  if (n_agg != 0) RunSlots(agg, n_agg);
  Packet* fwd[kMaxBurst];
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (pkt.meta.dropped() || pkt.meta.consumed) continue;
    if (pkt.hdr.app_id == kAppId && Meta(pkt).routed) continue;
    fwd[m++] = &pkt;
  }
  if (m != 0) l2l3_.IngressBurst(fwd, m);
}

bool GoatProgram::Validate(Packet& pkt) const noexcept {
  const GoatHeader* h = Goat(pkt);
  const uint32_t end = pkt.hdr.app + kGoatHeaderLen + 4u * elements_;
  const uint32_t udp_end = pkt.hdr.udp + LoadBe16(pkt.data + pkt.hdr.udp + 4);
  DropReason reason = DropReason::kNone;
  if (h->Version() != kGoatVersion ||
      (h->Type() != GoatType::kGradient && h->Type() != GoatType::kResult)) {
    reason = GoatDrop::kBadVersion;
  } else if (h->NumElements() != elements_) {
    reason = GoatDrop::kBadElements;
  } else if (end > pkt.len || end > udp_end) {
    reason = DropReason::kTruncatedAppHeader;
  } else if (end > parse_depth_) {
    reason = DropReason::kParseDepthExceeded;
  } else if (h->JobId() == 0 || (h->Type() == GoatType::kGradient &&
                                 (h->Bitmap() == 0 || h->Count() != std::popcount(h->Bitmap())))) {
    reason = GoatDrop::kInconsistent;
  } else {
    return true;
  }
  pkt.meta.MarkDrop(reason);
  return false;
}

void GoatProgram::Classify(Packet** pkts, uint32_t n, Packet** agg, uint32_t* n_agg) noexcept {
  Packet* goat[kMaxBurst];
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (pkt.hdr.app_id != kAppId) continue;
    // The first piece of a fragmented datagram: its elements may sit in later pieces, and its
    // UDP checksum covers them all (the deparser leaves fragments' L4 checksums alone), so it is
    // not aggregated or rewritten; l2l3 forwards it as it is.
    if ((LoadBe16(pkt.data + pkt.hdr.ipv4 + 6) & kIpv4FlagMf) != 0) {
      ++counters_.fragments_forwarded;
      continue;
    }
    if (!Validate(pkt)) continue;
    const GoatHeader* h = Goat(pkt);
    goat[m] = &pkt;
    keys[m++] =
        KeyPacker().Push(h->JobId(), 16).Push(h->NodeId(), 16).Push(h->Submodel(), 16).key();
  }
  if (m == 0) return;
  nodes_->LookupBatch(keys, res, m);
  Packet* elsewhere[kMaxBurst];
  uint32_t n_elsewhere = 0;
  for (uint32_t i = 0; i < m; ++i) {
    Packet& pkt = *goat[i];
    GoatHeader* h = Goat(pkt);
    const ActionCall& action = *res[i].action;
    const bool here = res[i].hit && action.action != kNotHere;
    const bool result = h->Type() == GoatType::kResult;
    if (!here) {
      // Not this switch's: results and the PS's fragments go by l2l3, others by node id.
      if (!result && h->NodeId() != kGoatNodePs && h->NodeId() != kGoatNodeAny) {
        elsewhere[n_elsewhere++] = &pkt;
      }
      continue;
    }
    const bool share = action.action == kShare;
    const uint64_t base = action.params[0];
    const uint64_t size = action.params[1];
    const uint32_t fan_in = static_cast<uint32_t>(action.params[2]);
    if (result) {
      // GOAT slots are reclaimed by the next round; only shared ones wait for the result.
      if (!share || size == 0 || size > slots_ || base >= slots_) continue;
      Meta(pkt).slot = static_cast<uint32_t>((base + h->Fragment() % size) % slots_);
      Meta(pkt).op = kOpRelease;
      agg[(*n_agg)++] = &pkt;
      continue;
    }
    // Nothing to aggregate here (fan-in 0: every worker of this sub-model here is a straggler
    // this epoch), more workers than a bitmap holds, a fragment past the sub-model's slots, or
    // an entry whose slots run past the array (a shared entry's base + fragment mod size wraps
    // around the array, so only its size must fit): the PS aggregates the fragment.
    const bool fits = share ? size <= slots_ && base < slots_ : base + size <= slots_;
    if (size == 0 || fan_in == 0 || fan_in > kGoatMaxWorkers || !fits ||
        (!share && h->Fragment() >= size)) {
      ++counters_.out_of_range;
      if (!share) {
        h->SetNodeId(kGoatNodePs);
        pkt.hdr.dirty |= kDirtyL4;
      }
      continue;
    }
    AggMeta<Op>& meta = Meta(pkt);
    // The slot is GOAT's own (the plan's base + fragment); ATP hashes <job, seq> instead.
    meta.slot = static_cast<uint32_t>(share ? (base + h->Fragment() % size) % slots_
                                            : base + h->Fragment());
    meta.fan_in = static_cast<uint8_t>(fan_in);
    meta.share = share;
    meta.op = h->Has(kGoatFlagResend) ? kOpResend : kOpGradient;
    agg[(*n_agg)++] = &pkt;
  }
  if (n_elsewhere != 0) Route(elsewhere, n_elsewhere);
}

// goat_route: towards the fragment's aggregation node, wherever it is (Figure 2(c)).
void GoatProgram::Route(Packet** pkts, uint32_t n) noexcept {
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  for (uint32_t i = 0; i < n; ++i) keys[i] = KeyPacker().Push(Goat(*pkts[i])->NodeId(), 16).key();
  routes_->LookupBatch(keys, res, n);
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (!res[i].hit || res[i].action->action != kRouteForward) {
      ++counters_.route_miss;
      continue;
    }
    ++counters_.routed;
    pkt.meta.egress_spec = static_cast<PortId>(res[i].action->params[0]);
    Meta(pkt).routed = true;
  }
}

void GoatProgram::RunSlots(Packet** pkts, uint32_t n) noexcept {
  Packet* live[kMaxBurst];
  std::copy(pkts, pkts + n, live);
  PrefetchSlots<GoatAgg>(id_, live, n);
  n = IdStage(live, n);
  // A retransmission the slot cannot take goes on to the PS from the bitmap stage.
  n = AggBitmapStage<GoatAgg>(bitmap_, live, n, &counters_.duplicates, [&](Packet& pkt) {
    if (Meta(pkt).op != kOpToPs) return true;
    ++counters_.resend_direct;
    Finish(pkt);
    return false;
  });
  AggCountStage<GoatAgg>(count_, live, n, counters_, [&](Packet& pkt, AggCountWord before, bool) {
    AggMeta<Op>& meta = Meta(pkt);
    const Op op = meta.op;
    // A newer round reclaimed an unfinished older one.
    if (op == kOpClaim && meta.reclaim && before.count != 0 && !before.flag) ++counters_.evicted;
    if (op == kOpToPs) {
      ++(Goat(pkt)->Has(kGoatFlagResend) ? counters_.resend_direct : counters_.late);
    } else if (op == kOpFlushAdd || op == kOpFlushRead) {
      ++counters_.flushed;
      meta.write_out = true;
    }
  });
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Op op = Meta(*live[i]).op;
    if (op == kOpClaim || op == kOpAdd || op == kOpFlushAdd || op == kOpFlushRead) {
      live[m++] = live[i];
    } else {
      Finish(*live[i]);
    }
  }
  AggValueStage<GoatAgg>(values_, live, m);
  counters_.overflow += AggOverflowStage<GoatAgg>(overflow_, live, m);
  for (uint32_t i = 0; i < m; ++i) Finish(*live[i]);
}

// goat_id: claim, merge, flush, collision, late, or release. Keeps packets with work left. Not
// agg_kernel.h's: a GOAT slot is keyed by <job, sub-model, fragment> and round and reclaimed by a
// newer round, where an ATP aggregator is keyed by <job, seq> and freed by the parameter packet.
uint32_t GoatProgram::IdStage(Packet** pkts, uint32_t n) noexcept {
  uint32_t live = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const GoatHeader* h = Goat(pkt);
    const uint64_t key = GoatSlotKey(h->JobId(), h->Submodel(), h->Fragment());
    const uint64_t round = uint64_t{h->Round()} + 1;  // 0: empty
    AggMeta<Op>& meta = Meta(pkt);
    const Op in = meta.op;
    const bool share = meta.share;
    Op op = kOpNone;
    if (!id_->Rmw(pkt, Index(pkt), [&](std::span<uint64_t> cell) {
          const bool same = cell[0] == key && cell[1] == round;
          if (in == kOpRelease) {
            if (same) cell[0] = cell[1] = 0;
            op = same ? kOpRelease : kOpNone;
          } else if (in == kOpResend) {
            op = same ? kOpResend : kOpToPs;
          } else if (same) {
            op = kOpMerge;
          } else if (cell[0] == key && cell[1] > round) {
            op = kOpToPs;  // a straggler's fragment of an older round
          } else if (share && cell[0] != 0 && cell[0] != key) {
            op = kOpNone;  // held by another fragment until its result passes
            meta.collision = true;
          } else {
            if (cell[0] != 0) meta.reclaim = true;
            cell[0] = key;
            cell[1] = round;
            op = kOpClaim;
          }
        })) {
      continue;
    }
    if (op == kOpRelease) {
      ++counters_.released;
      continue;
    }
    if (meta.collision) {
      ++counters_.collisions;
      continue;
    }
    if (in == kOpRelease) continue;
    if (op == kOpToPs) ++(in == kOpResend ? counters_.resend_direct : counters_.late);
    meta.op = op;
    if (op == kOpToPs) {
      Finish(pkt);
      continue;
    }
    pkts[live++] = &pkt;
  }
  return live;
}

// Header rewrites: an aggregate carries the slot's bitmap and goes to the PS (GOAT) or on
// unchanged (share); a fragment this switch does not aggregate after all goes to the PS.
void GoatProgram::Finish(Packet& pkt) noexcept {
  const AggMeta<Op>& meta = Meta(pkt);
  GoatHeader* h = Goat(pkt);
  const bool share = meta.share;
  if (meta.write_out) {
    const uint64_t bits = meta.bitmap();
    h->SetBitmap(bits);
    h->SetCount(static_cast<uint16_t>(std::popcount(bits)));
    h->Set(kGoatFlagAggregate);
    if (!share) h->SetNodeId(kGoatNodePs);
    pkt.hdr.dirty |= kDirtyL4;
  } else if (meta.op == kOpToPs && !share) {
    h->SetNodeId(kGoatNodePs);
    pkt.hdr.dirty |= kDirtyL4;
  }
}

}  // namespace swemu
