#pragma once
// A fixed-capacity FIFO of packet pointers (one TM queue). Storage is allocated on the control
// path only; Push/Pop never allocate. Capacity is a power of two so wrapping is a mask.
#include <bit>
#include <cstdint>
#include <memory>
#include <new>

#include "pipeline/core/packet.h"

namespace swemu {

class PacketRing {
 public:
  uint32_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  uint32_t capacity() const noexcept { return mask_ + 1; }
  Packet* front() const noexcept { return slots_[head_]; }
  // Host memory of the slots (none before the first Reserve).
  uint64_t bytes() const noexcept {
    return slots_ == nullptr ? 0 : uint64_t{capacity()} * sizeof(Packet*);
  }

  // Precondition: !empty().
  Packet* Pop() noexcept {
    Packet* pkt = slots_[head_];
    head_ = (head_ + 1) & mask_;
    --count_;
    return pkt;
  }

  // The newest packet, removed (push-out drops a queue's tail). Precondition: !empty().
  Packet* PopBack() noexcept {
    --count_;
    return slots_[(head_ + count_) & mask_];
  }

  // Precondition: size() + n <= capacity() (the TM checks the queue limit, which never exceeds
  // it).
  void PushBurst(Packet* const* pkts, uint32_t n) noexcept {
    for (uint32_t i = 0; i < n; ++i) slots_[(head_ + count_ + i) & mask_] = pkts[i];
    count_ += n;
  }
  // The i-th oldest packet. Precondition: i < size().
  Packet* at(uint32_t i) const noexcept { return slots_[(head_ + i) & mask_]; }
  // Removes the n oldest packets (a caller that read them with at()). Precondition: n <= size().
  void PopFront(uint32_t n) noexcept {
    head_ = (head_ + n) & mask_;
    count_ -= n;
  }

  // Control path: makes room for at least `min_capacity` packets, keeping the queued ones in
  // order. False (ring unchanged) when the memory cannot be allocated.
  bool Reserve(uint32_t min_capacity) noexcept {
    uint32_t capacity = std::bit_ceil(min_capacity < 1 ? 1u : min_capacity);
    if (slots_ != nullptr && capacity <= this->capacity()) return true;
    std::unique_ptr<Packet*[]> slots(new (std::nothrow) Packet*[capacity]);
    if (slots == nullptr) return false;
    for (uint32_t i = 0; i < count_; ++i) slots[i] = slots_[(head_ + i) & mask_];
    slots_ = std::move(slots);
    mask_ = capacity - 1;
    head_ = 0;
    return true;
  }

 private:
  std::unique_ptr<Packet*[]> slots_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace swemu
