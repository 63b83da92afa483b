#pragma once
// A std::allocator replacement for large lookup structures (table slots and records, register
// cells): blocks of 2 MiB or more are mapped 2 MiB-aligned and marked MADV_HUGEPAGE, so random
// lookups over tens of MiB do not pay a page walk per access (THP is often "madvise" only).
// Smaller blocks come from operator new. Used on the slow path only (construction, Add).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace swemu {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

inline void* AllocateHugePages(std::size_t bytes) {
  const std::size_t rounded = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  // Over-map by one huge page, then unmap the slack so the block starts on a 2 MiB boundary.
  const std::size_t mapped = rounded + kHugePageBytes;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + mapped;
  if (end > aligned + rounded)
    munmap(reinterpret_cast<void*>(aligned + rounded), end - aligned - rounded);
  madvise(reinterpret_cast<void*>(aligned), rounded, MADV_HUGEPAGE);  // a hint: failure is fine
  return reinterpret_cast<void*>(aligned);
}

inline void FreeHugePages(void* p, std::size_t bytes) {
  munmap(p, (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
}

template <typename T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes) return static_cast<T*>(AllocateHugePages(bytes));
    return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBytes) {
      FreeHugePages(p, bytes);
    } else {
      ::operator delete(p, std::align_val_t(alignof(T)));
    }
  }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) noexcept {
    return true;
  }
};

}  // namespace swemu
