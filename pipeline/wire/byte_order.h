#pragma once
// Big-endian (network order) loads and stores at any byte address. memcpy keeps them free of
// alignment and aliasing assumptions; compilers turn each into one load/store plus a bswap.
#include <bit>
#include <cstdint>
#include <cstring>

namespace swemu {

constexpr uint16_t ByteSwap16(uint16_t v) noexcept {
  return std::endian::native == std::endian::big ? v : __builtin_bswap16(v);
}
constexpr uint32_t ByteSwap32(uint32_t v) noexcept {
  return std::endian::native == std::endian::big ? v : __builtin_bswap32(v);
}
constexpr uint64_t ByteSwap64(uint64_t v) noexcept {
  return std::endian::native == std::endian::big ? v : __builtin_bswap64(v);
}

inline uint16_t LoadBe16(const uint8_t* p) noexcept {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return ByteSwap16(v);
}
inline uint32_t LoadBe32(const uint8_t* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return ByteSwap32(v);
}
inline uint64_t LoadBe64(const uint8_t* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return ByteSwap64(v);
}

inline void StoreBe16(uint8_t* p, uint16_t v) noexcept {
  v = ByteSwap16(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void StoreBe32(uint8_t* p, uint32_t v) noexcept {
  v = ByteSwap32(v);
  std::memcpy(p, &v, sizeof(v));
}
inline void StoreBe64(uint8_t* p, uint64_t v) noexcept {
  v = ByteSwap64(v);
  std::memcpy(p, &v, sizeof(v));
}
// A MAC address: 48 bits, the first byte sent in bits 47..40.
inline uint64_t LoadBe48(const uint8_t* p) noexcept {
  return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2);
}
inline void StoreBe48(uint8_t* p, uint64_t v) noexcept {
  StoreBe16(p, static_cast<uint16_t>(v >> 32));
  StoreBe32(p + 2, static_cast<uint32_t>(v));
}

// Views a header at a byte address. Every wire header struct is made of uint8_t fields only
// (alignment 1, character type), so this is safe at any offset in a frame buffer.
template <typename Header>
Header* HeaderAt(uint8_t* p) noexcept {
  static_assert(alignof(Header) == 1);
  return reinterpret_cast<Header*>(p);
}
template <typename Header>
const Header* HeaderAt(const uint8_t* p) noexcept {
  static_assert(alignof(Header) == 1);
  return reinterpret_cast<const Header*>(p);
}

}  // namespace swemu
