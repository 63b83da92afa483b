#pragma once
// Real time on several lcores ([dpdk] workers = N): lcore i runs replica i of the switch. It
// receives the ports p with p % N == i and sends each packet to the lcore its program's shard
// key names (key % N), which runs ingress; a packet for another lcore's egress port then goes to
// that lcore's TM. Every hand-over is a single-producer single-consumer rte_ring per
// (from, to, kind), carrying Packet pointers; a full ring drops (shard_ring_full).
#include <rte_ring.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/switch/switch.h"

namespace swemu {

class ShardRings {
 public:
  static constexpr uint32_t kRingSize = 4096;  // power of two; holds kRingSize - 1 packets

  // Error: "shard rings: <rte_strerror>".
  static Result<std::unique_ptr<ShardRings>> Create(uint32_t lcores, int socket);
  ~ShardRings();
  ShardRings(const ShardRings&) = delete;
  ShardRings& operator=(const ShardRings&) = delete;

  uint32_t lcores() const noexcept { return lcores_; }
  // Received packets for `to`'s ingress (the ingress port in the mbuf's port field).
  rte_ring* ingress(uint32_t from, uint32_t to) const noexcept { return ring(0, from, to); }
  // Packets after `from`'s ingress for `to`'s TM.
  rte_ring* egress(uint32_t from, uint32_t to) const noexcept { return ring(1, from, to); }
  // Packets waiting for lcore `to`.
  uint32_t PendingFor(uint32_t to) const noexcept;
  // After every lcore stopped: frees what the rings still hold; how many.
  uint64_t Discard();

 private:
  explicit ShardRings(uint32_t lcores) : lcores_(lcores), rings_(2 * lcores * lcores) {}
  rte_ring* ring(uint32_t kind, uint32_t from, uint32_t to) const noexcept {
    return rings_[(kind * lcores_ + from) * lcores_ + to];
  }

  uint32_t lcores_;
  std::vector<rte_ring*> rings_;  // nullptr where from == to
};

// Lcore `index`'s view: which egress ports are local, and the rings to their owners.
class ShardRouter final : public EgressRouter {
 public:
  ShardRouter(const ShardRings& rings, uint32_t index) : rings_(rings), index_(index) {}
  uint32_t index() const noexcept { return index_; }
  uint32_t lcores() const noexcept { return rings_.lcores(); }
  const ShardRings& rings() const noexcept { return rings_; }
  bool IsLocal(PortId port) const noexcept override { return port % lcores() == index_; }
  bool Forward(Packet* pkt) noexcept override {
    return rte_ring_sp_enqueue(rings_.egress(index_, pkt->meta.egress_spec % lcores()), pkt) == 0;
  }

 private:
  const ShardRings& rings_;
  uint32_t index_;
};

}  // namespace swemu
