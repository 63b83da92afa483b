#pragma once
// A DIR-16-8-8 multibit trie over 32-bit keys (shorter keys are left-aligned by LpmTable):
// a 65536-entry first level indexed by the top 16 bits, then 256-entry chunks for bits 15..8
// and 7..0, allocated from a pool when a prefix longer than /16 (or /24) first needs them.
// Prefixes are stored by controlled prefix expansion, so a lookup reads at most three words.
//
// A word is either a leaf value (0 = no prefix covers this range) or, with kChunkBit set, the
// index of the next-level chunk. The trie does not know prefix lengths: the caller repaints the
// leaves a prefix covers with a function (see LpmTable), which keeps add/delete logic in one
// place. Memory: 256 KiB plus 1 KiB per chunk, i.e. one chunk per /16 holding a prefix longer
// than /16 and one per /24 holding a prefix longer than /24.
#include <cstdint>
#include <vector>

#include "pipeline/core/huge_page_allocator.h"

namespace swemu {

class LpmTrie {
 public:
  static constexpr uint32_t kChunkBit = 1u << 31;
  static constexpr uint32_t kChunkSize = 256;

  LpmTrie() : level1_(1u << 16, 0) {}

  uint32_t Lookup(uint32_t key) const noexcept {
    uint32_t e = level1_[key >> 16];
    if (e & kChunkBit) {
      e = pool_[(e & ~kChunkBit) * kChunkSize + ((key >> 8) & 0xFF)];
      if (e & kChunkBit) e = pool_[(e & ~kChunkBit) * kChunkSize + (key & 0xFF)];
    }
    return e;
  }
  // The same walk one level at a time, for batched lookups that prefetch between levels.
  static bool IsChunk(uint32_t word) noexcept { return (word & kChunkBit) != 0; }
  uint32_t Level1(uint32_t key) const noexcept { return level1_[key >> 16]; }
  // The word for key byte `byte` (bits 15..8 at level 2, bits 7..0 at level 3) under a chunk word.
  const uint32_t* Child(uint32_t chunk_word, uint32_t byte) const noexcept {
    return &pool_[(chunk_word & ~kChunkBit) * kChunkSize + (byte & 0xFF)];
  }

  // Sets every leaf under prefix/len (host bits of prefix are zero) to paint(leaf), splitting
  // first- and second-level words into chunks where len needs the finer granularity.
  template <typename Paint>
  void Repaint(uint32_t prefix, unsigned len, Paint&& paint) {
    uint32_t* words;
    uint32_t count;
    if (len <= 16) {
      words = &level1_[prefix >> 16];
      count = 1u << (16 - len);
    } else {
      uint32_t c2 = Split(&level1_[prefix >> 16]);
      if (len <= 24) {
        words = Chunk(c2) + ((prefix >> 8) & 0xFF);
        count = 1u << (24 - len);
      } else {
        uint32_t c3 = SplitInChunk(c2, (prefix >> 8) & 0xFF);
        words = Chunk(c3) + (prefix & 0xFF);
        count = 1u << (32 - len);
      }
    }
    for (uint32_t i = 0; i < count; ++i) Visit(&words[i], paint);
  }

  // After a repaint that removed a prefix longer than /16: folds chunks on its path whose words
  // are all the same leaf back into their parent word, returning them to the pool.
  void Collapse(uint32_t prefix, unsigned len);
  void Clear();
  uint32_t chunks_in_use() const { return chunks_ - static_cast<uint32_t>(free_.size()); }
  // Host memory: the first level and the chunk pool as allocated (the pool grows by doubling
  // and keeps freed chunks for reuse), and the free list.
  uint64_t HostBytes() const;

 private:
  template <typename Paint>
  void Visit(uint32_t* word, Paint& paint) {
    if (*word & kChunkBit) {
      uint32_t* child = Chunk(*word & ~kChunkBit);
      for (uint32_t i = 0; i < kChunkSize; ++i) Visit(&child[i], paint);
    } else {
      *word = paint(*word);
    }
  }
  uint32_t* Chunk(uint32_t id) { return &pool_[id * kChunkSize]; }
  // The chunk below *word, creating one filled with the word's leaf if it is a leaf.
  uint32_t Split(uint32_t* word);
  uint32_t SplitInChunk(uint32_t chunk, uint32_t slot);
  uint32_t NewChunk(uint32_t fill);
  bool Uniform(uint32_t chunk);

  std::vector<uint32_t> level1_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>>
      pool_;                    // chunk i is pool_[i * 256, i * 256 + 256)
  std::vector<uint32_t> free_;  // released chunk ids
  uint32_t chunks_ = 0;         // chunks ever carved from pool_
};

}  // namespace swemu
