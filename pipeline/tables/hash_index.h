#pragma once
// The hash index behind exact and ternary tables: open addressing over a fixed power-of-two
// array of buckets, each one cache line of 8 slots (an 8-bit hash tag and a 32-bit entry index
// per slot); a key's home bucket comes from the low hash bits, a full bucket overflows to the
// next. Capacity is at least twice the table size, so buckets rarely overflow. A probe compares
// the 8 tags at once (SWAR on one 64-bit word) and reads an entry only when its tag matches
// (a false match costs one entry read in 255); a bucket with a free slot ends an unsuccessful
// search, so a lookup has one predictable branch in the common case. Deletion moves later
// overflowed entries back (Knuth's algorithm R by buckets): no tombstones, no slowdown with churn.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "pipeline/core/hash.h"
#include "pipeline/core/huge_page_allocator.h"
#include "pipeline/tables/table_spec.h"

namespace swemu {

// The hash of a key (and a seed: the ternary mask group). One multiply folds the high word in
// before one Mix64, about half the latency of HashPair; collisions only cost a probe.
inline uint64_t HashMatchKey(const MatchKey& key, uint64_t seed = 0) noexcept {
  return Mix64(key.w[0] + (key.w[1] ^ seed) * 0x9e3779b97f4a7c15ULL);
}

class HashIndex {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static constexpr uint32_t kSlots = 8;

  explicit HashIndex(uint32_t max_entries)
      : buckets_(std::bit_ceil(
            std::max<uint64_t>(2, (uint64_t{max_entries} * 2 + kSlots - 1) / kSlots))),
        mask_(buckets_.size() - 1) {}

  std::size_t capacity() const { return buckets_.size() * kSlots; }
  uint64_t bytes() const { return buckets_.size() * sizeof(Bucket); }

  // The entry index whose tag matches and for which eq(index) holds, or kNone.
  template <typename Eq>
  uint32_t Find(uint64_t hash, Eq&& eq) const noexcept {
    const uint8_t tag = Tag(hash);
    for (uint64_t b = hash & mask_;; b = (b + 1) & mask_) {
      const Bucket& bucket = buckets_[b];
      for (uint64_t m = bucket.Slots(tag); m != 0; m &= m - 1) {
        const uint32_t index = bucket.index[std::countr_zero(m) / 8];
        if (index != kNone && eq(index)) return index;
      }
      if (bucket.Slots(kFreeTag) != 0) return kNone;
    }
  }
  // The first entry index whose tag matches, or kNone: the likely match, to prefetch and then
  // confirm (a tag can match a different key; Find settles it).
  uint32_t FindTag(uint64_t hash) const noexcept {
    return Find(hash, [](uint32_t) { return true; });
  }
  const void* SlotAddress(uint64_t hash) const noexcept { return &buckets_[hash & mask_]; }

  // The caller keeps the entry count at most half the capacity and never inserts an index twice.
  void Insert(uint64_t hash, uint32_t index) {
    for (uint64_t b = hash & mask_;; b = (b + 1) & mask_) {
      Bucket& bucket = buckets_[b];
      if (uint64_t free = bucket.Slots(kFreeTag); free != 0) {
        bucket.Set(static_cast<uint32_t>(std::countr_zero(free) / 8), Tag(hash), index);
        return;
      }
    }
  }

  // Removes `index` (inserted with `hash`); hash_of(i) recomputes the hash of another entry i,
  // to find the overflowed entries that may move back into the freed slot.
  template <typename HashOf>
  void Erase(uint64_t hash, uint32_t index, HashOf&& hash_of) {
    uint64_t hole = hash & mask_;
    uint32_t hole_slot = 0;
    while (true) {
      auto* it = std::find(buckets_[hole].index, buckets_[hole].index + kSlots, index);
      if (it != buckets_[hole].index + kSlots) {
        hole_slot = static_cast<uint32_t>(it - buckets_[hole].index);
        break;
      }
      hole = (hole + 1) & mask_;
    }
    const bool had_free = buckets_[hole].Slots(kFreeTag) != 0;
    buckets_[hole].Set(hole_slot, kFreeTag, kNone);
    if (had_free) return;  // nothing overflowed past this bucket
    for (uint64_t k = (hole + 1) & mask_;; k = (k + 1) & mask_) {
      Bucket& bucket = buckets_[k];
      const bool last = bucket.Slots(kFreeTag) != 0;  // nothing overflowed past k either
      for (uint32_t s = 0; s < kSlots; ++s) {
        if (bucket.index[s] == kNone) continue;
        const uint64_t home = hash_of(bucket.index[s]) & mask_;
        // The entry may fill the hole unless its home lies cyclically in (hole, k].
        if (hole <= k ? (home > hole && home <= k) : (home > hole || home <= k)) continue;
        buckets_[hole].Set(hole_slot, bucket.TagAt(s), bucket.index[s]);
        bucket.Set(s, kFreeTag, kNone);
        hole = k;
        hole_slot = s;
        break;
      }
      if (last) return;
    }
  }

  void Clear() { std::fill(buckets_.begin(), buckets_.end(), Bucket{}); }

 private:
  static constexpr uint8_t kFreeTag = 0;  // real tags are 1..255
  struct alignas(64) Bucket {
    uint64_t tags = 0;  // byte s is slot s's tag
    uint32_t index[kSlots] = {kNone, kNone, kNone, kNone, kNone, kNone, kNone, kNone};

    // The top bit of byte s is set where slot s's tag is t. The borrow of the subtraction can
    // also set it in a byte above a true match, so callers confirm; the lowest set byte, and
    // whether any is set, are exact.
    uint64_t Slots(uint8_t t) const noexcept {
      constexpr uint64_t kLow = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
      const uint64_t x = tags ^ (kLow * t);
      return (x - kLow) & ~x & kHigh;
    }
    uint8_t TagAt(uint32_t s) const noexcept { return static_cast<uint8_t>(tags >> (8 * s)); }
    void Set(uint32_t s, uint8_t t, uint32_t i) noexcept {
      tags = (tags & ~(uint64_t{0xFF} << (8 * s))) | (uint64_t{t} << (8 * s));
      index[s] = i;
    }
  };
  static uint8_t Tag(uint64_t hash) noexcept {
    const auto t = static_cast<uint8_t>(hash >> 56);
    return t == kFreeTag ? 1 : t;
  }

  std::vector<Bucket, HugePageAllocator<Bucket>> buckets_;
  uint64_t mask_;
};

}  // namespace swemu
