#pragma once
// Fast, deterministic hashes for table lookups, flow hashing (ECMP) and shard keys.
// Not cryptographic; stable across runs and machines so offline runs are reproducible.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace swemu {

// A strong 64-bit finaliser (the splitmix64 / Stafford "mix13" constants).
constexpr uint64_t Mix64(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr uint64_t HashPair(uint64_t a, uint64_t b, uint64_t seed = 0) noexcept {
  return Mix64(a ^ Mix64(b ^ (seed + 0x9e3779b97f4a7c15ULL)));
}

inline uint64_t HashBytes(const void* data, std::size_t len, uint64_t seed = 0) noexcept {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = Mix64(seed ^ (len * 0x9e3779b97f4a7c15ULL));
  while (len >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = HashPair(h, w);
    p += 8;
    len -= 8;
  }
  if (len > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, len);
    h = HashPair(h, w ^ (uint64_t{len} << 56));
  }
  return h;
}

}  // namespace swemu
