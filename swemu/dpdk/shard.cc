#include "swemu/dpdk/shard.h"

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <string>

namespace swemu {

Result<std::unique_ptr<ShardRings>> ShardRings::Create(uint32_t lcores, int socket,
                                                       PacketPool& pool) {
  std::unique_ptr<ShardRings> rings(new ShardRings(lcores, pool));
  for (uint32_t kind = 0; kind < kKinds; ++kind) {
    for (uint32_t from = 0; from < lcores; ++from) {
      for (uint32_t to = 0; to < lcores; ++to) {
        if (from == to) continue;
        const std::string name = "swemu_shard_" + std::to_string(kind) + "_" +
                                 std::to_string(from) + "_" + std::to_string(to);
        // From the malloc heap, not rte_ring_create: that takes a memzone per ring, and the
        // 3 N (N - 1) rings of N lcores ran out of DPDK's 2560 memzones above 29 lcores.
        const ssize_t bytes = rte_ring_get_memsize(kRingSize);
        auto* ring = bytes < 0 ? nullptr
                               : static_cast<rte_ring*>(rte_zmalloc_socket(
                                     name.c_str(), static_cast<size_t>(bytes), RTE_CACHE_LINE_SIZE,
                                     socket));
        if (ring == nullptr) {
          return Status::Error("shard rings: no memory for " +
                               std::to_string(kKinds * lcores * (lcores - 1)) + " rings of " +
                               std::to_string(kRingSize) + " slots (EAL -m?)");
        }
        rings->rings_[(kind * lcores + from) * lcores + to] = ring;
        if (rte_ring_init(ring, name.c_str(), kRingSize, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
          return Status::Error(std::string("shard rings: ") + rte_strerror(rte_errno));
        }
      }
    }
  }
  return rings;
}

ShardRings::~ShardRings() {
  Discard();
  for (rte_ring* ring : rings_) rte_free(ring);  // accepts nullptr
}

uint32_t ShardRings::PendingFor(uint32_t to) const noexcept {
  uint32_t pending = 0;
  for (uint32_t from = 0; from < lcores_; ++from) {
    if (from == to) continue;
    pending += rte_ring_count(ingress(from, to)) + rte_ring_count(egress(from, to)) +
               rte_ring_count(recirculate(from, to));
  }
  return pending;
}

uint32_t ShardRouter::Flush(uint32_t to) noexcept {
  Stage& stage = staged_[to];
  const uint32_t sent =
      rte_ring_sp_enqueue_burst(rings_.egress(index_, to), stage.pkts, stage.n, nullptr);
  for (uint32_t i = sent; i < stage.n; ++i) pool_.Free(static_cast<Packet*>(stage.pkts[i]));
  const uint32_t dropped = stage.n - sent;
  stage.n = 0;
  return dropped;
}

uint64_t ShardRings::Discard() {
  uint64_t discarded = 0;
  for (rte_ring* ring : rings_) {
    if (ring == nullptr) continue;
    void* obj = nullptr;
    while (rte_ring_sc_dequeue(ring, &obj) == 0) {
      pool_.Free(static_cast<Packet*>(obj));
      ++discarded;
    }
  }
  return discarded;
}

}  // namespace swemu
