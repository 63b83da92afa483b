#pragma once
// The value lanes of an in-network aggregator, shared by every program that sums gradients in
// a register array (atp, goat): one int32 lane per element, the packet's elements big-endian.
// A claim stores the packet's values; an add sums them in with int32 wrap-around and reports
// whether any sum left int32, which the programs keep as a sticky overflow bit per aggregator.
#include <cstddef>
#include <cstdint>
#include <span>

#include "pipeline/wire/byte_order.h"

namespace swemu {

// A claim stores the packet's elements (big-endian int32) as the aggregator's lanes.
inline void ClaimLanes(std::span<uint32_t> cell, const uint8_t* el) noexcept {
  for (std::size_t l = 0; l < cell.size(); ++l) cell[l] = LoadBe32(el + 4 * l);
}

// Adds the packet's elements into the lanes with int32 wrap-around; kWrite also stores each sum
// into the packet, kClear leaves the lanes 0 (the aggregator is freed by this pass). Returns
// nonzero if a sum left int32: its operands' signs agree and differ from the sum's.
template <bool kWrite, bool kClear>
uint32_t AddLanes(std::span<uint32_t> cell, uint8_t* el) noexcept {
  uint32_t overflow = 0;
  for (std::size_t l = 0; l < cell.size(); ++l) {
    const uint32_t a = cell[l];
    const uint32_t b = LoadBe32(el + 4 * l);
    const uint32_t sum = a + b;
    overflow |= (a ^ sum) & (b ^ sum);
    cell[l] = kClear ? 0 : sum;
    if constexpr (kWrite) StoreBe32(el + 4 * l, sum);
  }
  return overflow >> 31;
}

// Writes the lanes into the packet's elements (a flush that adds nothing).
inline void ReadLanes(std::span<const uint32_t> cell, uint8_t* el) noexcept {
  for (std::size_t l = 0; l < cell.size(); ++l) StoreBe32(el + 4 * l, cell[l]);
}

}  // namespace swemu
