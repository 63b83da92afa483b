#include "swemu/dpdk/mbuf_pool.h"

#include <rte_errno.h>

#include <cstring>
#include <new>
#include <string>

namespace swemu {
namespace {

constexpr uint16_t kPrivSize = RTE_ALIGN(sizeof(Packet), RTE_MBUF_PRIV_ALIGN);
static_assert(alignof(Packet) <= RTE_MBUF_PRIV_ALIGN, "the private area must align a Packet");

// Constructs the Packet in each mbuf's private area once, when the pool is made.
void ConstructPacket(rte_mempool*, void*, void* obj, unsigned) {
  new (rte_mbuf_to_priv(static_cast<rte_mbuf*>(obj))) Packet();
}

}  // namespace

Result<std::unique_ptr<MbufPacketPool>> MbufPacketPool::Create(uint32_t mbufs, uint32_t cache_size,
                                                               int socket) {
  rte_mempool* mempool = rte_pktmbuf_pool_create("swemu_mbufs", mbufs, cache_size, kPrivSize,
                                                 RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (mempool == nullptr) {
    std::string what = rte_errno == ENOMEM ? "not enough memory" : rte_strerror(rte_errno);
    return Status::Error("mbuf pool: " + what + " for " + std::to_string(mbufs) + " mbufs of " +
                         std::to_string(RTE_MBUF_DEFAULT_BUF_SIZE + kPrivSize) +
                         " bytes ([dpdk] mbufs, or EAL -m)");
  }
  rte_mempool_obj_iter(mempool, ConstructPacket, nullptr);
  return std::unique_ptr<MbufPacketPool>(new MbufPacketPool(mempool));
}

MbufPacketPool::~MbufPacketPool() { rte_mempool_free(mempool_); }

Packet* MbufPacketPool::Alloc() noexcept {
  rte_mbuf* m = rte_pktmbuf_alloc(mempool_);
  if (m == nullptr) return nullptr;
  Packet* pkt = FromMbuf(m);
  pkt->ResetState();  // a new packet starts with no parse state and zero metadata
  return pkt;
}

Packet* MbufPacketPool::Clone(const Packet& packet) noexcept {
  Packet* copy = Alloc();
  if (copy == nullptr) return nullptr;
  if (packet.len > copy->tailroom) {
    Free(copy);
    return nullptr;
  }
  std::memcpy(copy->data, packet.data, packet.len);
  copy->len = packet.len;
  copy->tailroom -= packet.len;
  copy->hdr = packet.hdr;
  copy->meta = packet.meta;
  return copy;
}

}  // namespace swemu
