#include "pipeline/tables/lpm_trie.h"

#include <algorithm>

namespace swemu {

uint32_t LpmTrie::NewChunk(uint32_t fill) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = chunks_++;
    pool_.resize(pool_.size() + kChunkSize);
  }
  std::fill_n(Chunk(id), kChunkSize, fill);
  return id;
}

uint32_t LpmTrie::Split(uint32_t* word) {
  if (*word & kChunkBit) return *word & ~kChunkBit;
  uint32_t id = NewChunk(*word);
  *word = id | kChunkBit;
  return id;
}

uint32_t LpmTrie::SplitInChunk(uint32_t chunk, uint32_t slot) {
  uint32_t word = pool_[chunk * kChunkSize + slot];
  if (word & kChunkBit) return word & ~kChunkBit;
  uint32_t id = NewChunk(word);  // may move pool_: index again below
  pool_[chunk * kChunkSize + slot] = id | kChunkBit;
  return id;
}

bool LpmTrie::Uniform(uint32_t chunk) {
  const uint32_t* c = Chunk(chunk);
  return (c[0] & kChunkBit) == 0 &&
         std::all_of(c + 1, c + kChunkSize, [&](uint32_t w) { return w == c[0]; });
}

void LpmTrie::Collapse(uint32_t prefix, unsigned len) {
  uint32_t& top = level1_[prefix >> 16];
  if (len <= 16 || (top & kChunkBit) == 0) return;
  uint32_t c2 = top & ~kChunkBit;
  uint32_t& mid = Chunk(c2)[(prefix >> 8) & 0xFF];
  if (len > 24 && (mid & kChunkBit) != 0) {
    uint32_t c3 = mid & ~kChunkBit;
    if (Uniform(c3)) {
      mid = Chunk(c3)[0];
      free_.push_back(c3);
    }
  }
  if (Uniform(c2)) {
    top = Chunk(c2)[0];
    free_.push_back(c2);
  }
}

uint64_t LpmTrie::HostBytes() const {
  return (level1_.capacity() + pool_.capacity() + free_.capacity()) * sizeof(uint32_t);
}

void LpmTrie::Clear() {
  std::fill(level1_.begin(), level1_.end(), 0);
  pool_.clear();
  free_.clear();
  chunks_ = 0;
}

}  // namespace swemu
