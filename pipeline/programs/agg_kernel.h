#pragma once
// The aggregator stages atp and goat share, run over a whole burst: prefetching a slot array's
// cells, the bitmap (claim, merge, duplicate), the count word's layout and the workers counted
// against the fan-in, the value lanes (claim, add, read or zero every lane of the slot in one
// access) and the sticky overflow bit. What differs between the programs comes from a traits
// class, resolved at compile time (no per-packet virtual call):
//
//   struct Traits {
//     using Op = ...;                              // the program's one-byte op enum (AggMeta)
//     static constexpr Op kClaim, kMerge, kAdd;     // the ops whose bitmap rule is shared
//     static uint64_t Workers(Packet&) noexcept;    // the packet's bitmap of workers
//     static DropReason Duplicate() noexcept;       // the drop of a worker already in the slot
//     // The bitmap cell for every other op (each paper's retransmission and free): the new op,
//     // the bitmap a result will carry in *result.
//     static Op OtherBitmap(uint64_t& cell, uint64_t bits, AggMeta<Op>& meta,
//                           uint64_t* result) noexcept;
//     static uint64_t FanIn(Packet&) noexcept;      // the workers that complete the slot
//     static bool TakesAdd(AggCountWord before) noexcept;  // the count word takes an add
//     // The count word's flag after a claim or an add (the meaning is the program's).
//     static bool CountedFlag(Packet&, AggMeta<Op>&, bool claim, AggCountWord before,
//                             bool complete) noexcept;
//     // The count word for every other op (or an add it does not take): the new op.
//     static Op OtherCount(Packet&, AggMeta<Op>&, AggCountWord before,
//                          AggCountWord* after) noexcept;
//     static LaneOp Lanes(Op op) noexcept;          // what the value lanes do for an op
//     static bool KeepsOverflow(Op op) noexcept;    // the overflow bit survives this pass
//     static uint8_t* Elements(Packet&) noexcept;   // the packet's big-endian int32 elements
//     static bool CarriesOverflow(Packet&) noexcept;  // the header's overflow flag is set
//     static void MarkOverflow(Packet&) noexcept;   // set the header's overflow flag
//   };
//
// The per-packet state is the packet's AggMeta (agg_meta.h); the lane arithmetic is
// agg_lanes.h's.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "pipeline/core/drop_reason.h"
#include "pipeline/programs/agg_lanes.h"
#include "pipeline/programs/agg_meta.h"
#include "pipeline/registers/register_array.h"

namespace swemu {

// What the value stage does to a slot's lanes.
enum class LaneOp : uint8_t {
  kZero,      // free the slot: every lane 0
  kClaim,     // store the packet's elements (and the overflow bit starts again)
  kAdd,       // add them in; the sums go into the packet if AggMeta::write_out
  kAddClear,  // add them in, write the sums into the packet, leave the lanes 0
  kRead,      // write the lanes into the packet (a flush that adds nothing)
};

// Prefetches the cells of reg at each packet's slot.
template <typename Traits>
void PrefetchSlots(const RegisterArray* reg, Packet* const* pkts, uint32_t n) noexcept {
  for (uint32_t i = 0; i < n; ++i) reg->Prefetch(AggMetaOf<typename Traits::Op>(*pkts[i]).slot);
}

// The bitmap array: which workers the slot holds. A claim starts it with the packet's workers; a
// merge drops a worker already in as a duplicate (counted in *duplicates) or adds its bits and
// becomes Traits::kAdd; every other op is Traits::OtherBitmap's. The bitmap after the packet
// goes into its AggMeta. go_on(pkt) then says whether a packet goes on to the next stage (a
// program may finish it here). Compacts pkts to those that go on; returns how many.
template <typename Traits, typename GoOn>
uint32_t AggBitmapStage(RegisterArray* bitmap, Packet** pkts, uint32_t n, uint64_t* duplicates,
                        GoOn&& go_on) noexcept {
  using Op = typename Traits::Op;
  uint32_t live = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const uint64_t bits = Traits::Workers(pkt);
    AggMeta<Op>& meta = AggMetaOf<Op>(pkt);
    Op op = meta.op;
    uint64_t result = 0;
    bool duplicate = false;
    bitmap->Rmw(pkt, meta.slot, [&](std::span<uint64_t> cell) {
      if (op == Traits::kClaim) {
        result = cell[0] = bits;
      } else if (op == Traits::kMerge) {
        duplicate = (cell[0] & bits) != 0;
        if (!duplicate) {
          result = cell[0] |= bits;
          op = Traits::kAdd;
        }
      } else {
        op = Traits::OtherBitmap(cell[0], bits, meta, &result);
      }
    });
    if (pkt.meta.dropped()) continue;
    if (duplicate) {
      ++*duplicates;
      pkt.meta.MarkDrop(Traits::Duplicate());
      continue;
    }
    meta.set_bitmap(result);
    meta.op = op;
    if (go_on(pkt)) pkts[live++] = &pkt;
  }
  return live;
}

// The count word (atp_count, goat_count: 8 bits): the workers in the slot, saturating at 7 bits,
// and one flag bit whose meaning is each paper's (atp: the aggregator saw ECN; goat: the slot's
// round is done and takes nothing more).
struct AggCountWord {
  static constexpr uint64_t kMaxCount = 0x7F;
  static constexpr uint64_t kFlagBit = 0x80;
  uint64_t count = 0;
  bool flag = false;

  static AggCountWord Of(uint64_t cell) noexcept {
    return {cell & kMaxCount, (cell & kFlagBit) != 0};
  }
  uint64_t Word() const noexcept { return std::min(count, kMaxCount) | (flag ? kFlagBit : 0); }
};

// The count array: a claim starts the count with the packet's workers, an add the word takes
// (Traits::TakesAdd) adds them; the slot is complete at Traits::FanIn workers, and then the
// result is written out, else the packet is consumed (counters.claimed, .aggregated and
// .completed count them). Every other op is Traits::OtherCount's; the op after the stage goes
// into the packet's AggMeta. then(pkt, before, complete) follows for each packet, with the word
// as the packet found it.
template <typename Traits, typename Counters, typename Then>
void AggCountStage(RegisterArray* count, Packet* const* pkts, uint32_t n, Counters& counters,
                   Then&& then) noexcept {
  using Op = typename Traits::Op;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    AggMeta<Op>& meta = AggMetaOf<Op>(pkt);
    Op op = meta.op;
    const uint64_t add = static_cast<uint64_t>(std::popcount(Traits::Workers(pkt)));
    const uint64_t fan_in = Traits::FanIn(pkt);
    AggCountWord before;
    bool complete = false;
    count->Rmw(pkt, meta.slot, [&](std::span<uint64_t> cell) {
      before = AggCountWord::Of(cell[0]);
      AggCountWord after = before;
      const bool claim = op == Traits::kClaim;
      if (claim || (op == Traits::kAdd && Traits::TakesAdd(before))) {
        after.count = std::min(AggCountWord::kMaxCount, claim ? add : before.count + add);
        complete = after.count >= fan_in;
        after.flag = Traits::CountedFlag(pkt, meta, claim, before, complete);
      } else {
        op = Traits::OtherCount(pkt, meta, before, &after);
      }
      cell[0] = after.Word();
    });
    meta.op = op;
    if (op == Traits::kClaim || op == Traits::kAdd) {
      ++(op == Traits::kClaim ? counters.claimed : counters.aggregated);
      if (complete) {
        ++counters.completed;
        meta.write_out = true;
      } else {
        pkt.meta.consumed = true;
      }
    }
    then(pkt, before, complete);
  }
}

// The value array: every lane of the slot in one access (each stage's ALUs update their slice
// of the index in the same pass). A lane is an int32 added with wrap-around; a sum that left
// int32 sets AggMeta::lane_overflow for the overflow stage.
template <typename Traits>
void AggValueStage(RegisterArray* values, Packet* const* pkts, uint32_t n) noexcept {
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    AggMeta<typename Traits::Op>& meta = AggMetaOf<typename Traits::Op>(pkt);
    uint8_t* el = Traits::Elements(pkt);
    const LaneOp op = Traits::Lanes(meta.op);
    const bool write = meta.write_out;
    uint32_t overflow = 0;
    // Every lane written is a 32-bit value or 0: already within the width.
    values->Rmw32<false>(pkt, meta.slot, [&](std::span<uint32_t> cell) {
      if (op == LaneOp::kClaim) {
        ClaimLanes(cell, el);
      } else if (op == LaneOp::kRead) {
        ReadLanes(cell, el);
      } else if (op == LaneOp::kAddClear) {
        overflow = AddLanes<true, true>(cell, el);
      } else if (op == LaneOp::kAdd) {
        overflow = write ? AddLanes<true, false>(cell, el) : AddLanes<false, false>(cell, el);
      } else {
        std::fill(cell.begin(), cell.end(), 0u);
      }
    });
    if (overflow != 0) meta.lane_overflow = true;
  }
}

// The overflow array: sticky per slot, from a lane that left int32 here or from a packet that
// already carries the flag (a result that overflowed below); a claim starts it again, and it
// is cleared where the op frees the slot. A result written from an overflowed slot is flagged
// invalid. Returns how many results were flagged.
template <typename Traits>
uint32_t AggOverflowStage(RegisterArray* overflow, Packet* const* pkts, uint32_t n) noexcept {
  uint32_t flagged = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const AggMeta<typename Traits::Op>& meta = AggMetaOf<typename Traits::Op>(pkt);
    const bool claim = Traits::Lanes(meta.op) == LaneOp::kClaim;
    const bool keep = Traits::KeepsOverflow(meta.op);
    const uint64_t incoming = (meta.lane_overflow || Traits::CarriesOverflow(pkt)) ? 1 : 0;
    uint64_t out = 0;
    overflow->Rmw(pkt, meta.slot, [&](std::span<uint64_t> cell) {
      out = (claim ? 0 : cell[0]) | incoming;
      cell[0] = keep ? out : 0;
    });
    if (meta.write_out && out != 0) {
      Traits::MarkOverflow(pkt);
      ++flagged;
    }
  }
  return flagged;
}

}  // namespace swemu
