#include "pipeline/core/packet_pool.h"

#include <cstring>

namespace swemu {

HeapPacketPool::HeapPacketPool(std::size_t count, uint32_t buffer_size, uint32_t headroom)
    : buffer_size_(buffer_size),
      headroom_(headroom),
      memory_(new uint8_t[count * buffer_size]),
      slots_(count) {
  free_.reserve(count);
  for (std::size_t i = count; i-- > 0;) {
    slots_[i].index = i;
    slots_[i].packet.handle = &slots_[i];
    free_.push_back(&slots_[i]);
  }
}

Packet* HeapPacketPool::Alloc() noexcept {
  if (free_.empty()) return nullptr;
  Slot* slot = free_.back();
  free_.pop_back();
  Packet& p = slot->packet;
  p.data = memory_.get() + slot->index * buffer_size_ + headroom_;
  p.len = 0;
  p.headroom = headroom_;
  p.tailroom = buffer_size_ - headroom_;
  p.ResetState();
  return &p;
}

Packet* HeapPacketPool::Clone(const Packet& packet) noexcept {
  if (packet.len > MaxFrame()) return nullptr;
  Packet* copy = Alloc();
  if (copy == nullptr) return nullptr;
  std::memcpy(copy->data, packet.data, packet.len);
  copy->len = packet.len;
  copy->tailroom -= packet.len;
  copy->hdr = packet.hdr;
  copy->meta = packet.meta;
  return copy;
}

void HeapPacketPool::Free(Packet* packet) noexcept {
  if (packet == nullptr) return;
  free_.push_back(static_cast<Slot*>(packet->handle));
}

Packet* HeapPacketPool::FromBytes(const uint8_t* frame, uint32_t len) noexcept {
  if (len > MaxFrame()) return nullptr;
  Packet* p = Alloc();
  if (p == nullptr) return nullptr;
  if (len != 0) std::memcpy(p->data, frame, len);
  p->len = len;
  p->tailroom -= len;
  return p;
}

}  // namespace swemu
