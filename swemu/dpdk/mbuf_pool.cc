#include "swemu/dpdk/mbuf_pool.h"

#include <rte_errno.h>
#include <rte_lcore.h>

#include <cstring>
#include <new>
#include <string>

namespace swemu {
namespace {

// Constructs each packet descriptor once, when the pool is made.
void ConstructPacket(rte_mempool*, void*, void* obj, unsigned) { new (obj) Packet(); }

std::string NoMemory(const std::string& what, uint32_t count, std::size_t bytes) {
  // Populating a pool beyond EAL's memory fails with ENOMEM or ENOBUFS ("No buffer space
  // available", which reads as if mbufs were meant): both are a lack of memory.
  const bool no_memory = rte_errno == ENOMEM || rte_errno == ENOBUFS;
  std::string why = no_memory ? "not enough memory" : rte_strerror(rte_errno);
  return "mbuf pool: " + why + " for " + std::to_string(count) + " " + what + " of " +
         std::to_string(bytes) + " bytes ([dpdk] mbufs, or EAL -m)";
}

}  // namespace

Result<MbufPool> MbufPool::Create(uint32_t mbufs, uint32_t cache_size, int socket) {
  rte_mempool* mempool = rte_pktmbuf_pool_create("swemu_mbufs", mbufs, cache_size, 0,
                                                 RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (mempool == nullptr) return Status::Error(NoMemory("mbufs", mbufs, RTE_MBUF_DEFAULT_BUF_SIZE));
  return MbufPool(mempool);
}

Result<std::unique_ptr<MbufPacketPool>> MbufPacketPool::Create(uint32_t mbufs, uint32_t cache_size,
                                                               int socket) {
  Result<MbufPool> pool = MbufPool::Create(mbufs, cache_size, socket);
  if (!pool.ok()) return pool.status();
  // One descriptor per mbuf, plus what the per-lcore caches (up to 1.5 x cache_size each) hold,
  // so descriptors never run out before mbufs do.
  const uint32_t packets = mbufs + rte_lcore_count() * (cache_size + cache_size / 2 + 1);
  rte_mempool* descriptors =
      rte_mempool_create("swemu_pkts", packets, sizeof(Packet), cache_size, 0, nullptr, nullptr,
                         ConstructPacket, nullptr, socket, 0);
  if (descriptors == nullptr) {
    return Status::Error(NoMemory("packet descriptors", packets, sizeof(Packet)));
  }
  return std::unique_ptr<MbufPacketPool>(new MbufPacketPool(std::move(*pool), descriptors));
}

MbufPacketPool::~MbufPacketPool() { rte_mempool_free(packets_); }

Packet* MbufPacketPool::Alloc() noexcept {
  rte_mbuf* m = rte_pktmbuf_alloc(mempool());
  if (m == nullptr) return nullptr;
  Packet* pkt = nullptr;
  if (!GetDescriptors(&pkt, 1, DescriptorCache())) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  Attach(pkt, m);
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
