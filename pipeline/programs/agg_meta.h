#pragma once
// The per-packet metadata of an in-network aggregator (atp, goat), carried from stage to stage in
// the Packet's program scratch (Metadata::user) as a Tofino program carries bridged metadata.
// One typed struct instead of hand-packed words: the slot, the bitmap a result will carry, the op
// the next arrays apply (each program's own enum) and the flags the stages pass on.
#include <cstdint>
#include <type_traits>

#include "pipeline/core/packet.h"

namespace swemu {

template <typename OpT>
struct AggMeta {
  static_assert(std::is_enum_v<OpT> && sizeof(OpT) == 1, "an op is a one-byte enum");

  uint32_t slot = 0;       // aggregator (atp) or slot (goat) index
  uint32_t bitmap_lo = 0;  // the aggregator's bitmap after this packet (written out)
  uint32_t bitmap_hi = 0;
  OpT op{};              // what the next arrays do
  uint8_t fan_in = 0;    // goat: workers that complete the slot (from goat_node)
  bool share : 1 = false;          // goat: the slot is shared ATP-style (kShare)
  bool write_out : 1 = false;      // the aggregator's result goes into the packet
  bool lane_overflow : 1 = false;  // a value lane left int32 in this pass
  bool ecn : 1 = false;            // atp: the aggregator (or this packet) saw ECN
  bool flip_edge : 1 = false;      // atp: the packet goes on past this aggregation level
  bool routed : 1 = false;         // goat: goat_route set the egress port
  bool collision : 1 = false;      // goat share: slot held by another fragment
  bool reclaim : 1 = false;        // goat: the claim replaced an older round

  uint64_t bitmap() const noexcept { return (uint64_t{bitmap_hi} << 32) | bitmap_lo; }
  void set_bitmap(uint64_t bits) noexcept {
    bitmap_hi = static_cast<uint32_t>(bits >> 32);
    bitmap_lo = static_cast<uint32_t>(bits);
  }
};

// How many scratch words an AggMeta takes, whatever its op (Program::UserMetadataWords: the
// switch zeroes them per packet, which is the struct's default state).
inline constexpr uint32_t kAggMetaWords = 4;

// The one accessor: the packet's scratch words seen as its AggMeta. The switch only zeroes these
// words (Packet::ResetState) and nothing else reads them, so the program owns them whole.
template <typename OpT>
AggMeta<OpT>& AggMetaOf(Packet& pkt) noexcept {
  using M = AggMeta<OpT>;
  static_assert(std::is_trivially_copyable_v<M> && sizeof(M) == kAggMetaWords * sizeof(uint32_t));
  static_assert(sizeof(M) <= sizeof(pkt.meta.user) && alignof(M) <= alignof(uint32_t));
  return *reinterpret_cast<M*>(pkt.meta.user);
}
template <typename OpT>
const AggMeta<OpT>& AggMetaOf(const Packet& pkt) noexcept {
  return *reinterpret_cast<const AggMeta<OpT>*>(pkt.meta.user);
}

}  // namespace swemu
