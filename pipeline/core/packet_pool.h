#pragma once
// Who owns frame buffers. The TM frees dropped packets and clones multicast copies through this
// interface so the same pipeline code runs over heap buffers (offline) and mbufs (real time).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/core/packet.h"

namespace swemu {

class PacketPool {
 public:
  virtual ~PacketPool() = default;
  // An empty packet with default headroom; nullptr when the pool is exhausted.
  virtual Packet* Alloc() noexcept = 0;
  // A deep copy of frame, parsed headers and metadata; nullptr when the pool is exhausted.
  virtual Packet* Clone(const Packet& packet) noexcept = 0;
  virtual void Free(Packet* packet) noexcept = 0;
  virtual std::size_t InUse() const noexcept = 0;
};

// A fixed-size pool of fixed-size buffers, allocated once; Alloc/Free are O(1), allocation-free.
class HeapPacketPool final : public PacketPool {
 public:
  static constexpr uint32_t kDefaultHeadroom = 128;
  static constexpr uint32_t kDefaultBufferSize = 10240;  // headroom + 9 KB jumbo + slack

  explicit HeapPacketPool(std::size_t count, uint32_t buffer_size = kDefaultBufferSize,
                          uint32_t headroom = kDefaultHeadroom);

  Packet* Alloc() noexcept override;
  Packet* Clone(const Packet& packet) noexcept override;
  void Free(Packet* packet) noexcept override;
  std::size_t InUse() const noexcept override { return slots_.size() - free_.size(); }
  std::size_t Capacity() const noexcept { return slots_.size(); }
  uint32_t MaxFrame() const noexcept { return buffer_size_ - headroom_; }

  // Allocates a packet holding a copy of frame; nullptr when exhausted or frame too long.
  Packet* FromBytes(const uint8_t* frame, uint32_t len) noexcept;

  // Where the frame of `packet` (one of this pool's) starts unless something was prepended or
  // trimmed at its front, found from the Packet's address without reading the Packet: a caller
  // prefetching both needs not wait for the one to learn the other.
  const uint8_t* FrameHint(const Packet* packet) const noexcept {
    const std::size_t index = reinterpret_cast<const Slot*>(packet) - slots_.data();
    return memory_.get() + index * buffer_size_ + headroom_;
  }

 private:
  struct Slot {
    Packet packet;  // first: a Packet's address is its Slot's (FrameHint)
    std::size_t index;
  };
  uint32_t buffer_size_;
  uint32_t headroom_;
  std::unique_ptr<uint8_t[]> memory_;
  std::vector<Slot> slots_;
  std::vector<Slot*> free_;
};

}  // namespace swemu
