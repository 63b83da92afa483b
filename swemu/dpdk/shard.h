#pragma once
// Real time on several lcores ([dpdk] workers = N): lcore i runs replica i of the switch. It
// receives the ports p with p % N == i and sends each packet to the lcore its program's shard
// key names (key % N), which runs ingress (the headers parsed for the key travel with the
// packet); a packet for another lcore's egress port, or a multicast copy, then goes to that
// lcore's TM, and a packet its egress recirculates goes back to its shard key's lcore. Every
// hand-over is a single-producer single-consumer rte_ring per (from, to, kind), carrying Packet
// pointers; a full ring drops (shard_ring_full).
#include <rte_ring.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"
#include "pipeline/switch/switch.h"

namespace swemu {

inline constexpr uint32_t kMaxShardLcores = 64;  // dpdk.workers' maximum

class ShardRings {
 public:
  static constexpr uint32_t kRingSize = 4096;  // power of two; holds kRingSize - 1 packets

  // Error: "shard rings: <rte_strerror>".
  // `pool` frees what the rings still hold when they are discarded; it must outlive them.
  static Result<std::unique_ptr<ShardRings>> Create(uint32_t lcores, int socket, PacketPool& pool);
  ~ShardRings();
  ShardRings(const ShardRings&) = delete;
  ShardRings& operator=(const ShardRings&) = delete;

  uint32_t lcores() const noexcept { return lcores_; }
  // Received and parsed packets for `to`'s ingress (Switch::ReceiveParsedBurst).
  rte_ring* ingress(uint32_t from, uint32_t to) const noexcept { return ring(0, from, to); }
  // Packets after `from`'s ingress for `to`'s TM.
  rte_ring* egress(uint32_t from, uint32_t to) const noexcept { return ring(1, from, to); }
  // Packets `from`'s egress recirculated, for `to`'s ingress (Switch::ReceiveRecirculated).
  rte_ring* recirculate(uint32_t from, uint32_t to) const noexcept { return ring(2, from, to); }
  // Packets waiting for lcore `to`.
  uint32_t PendingFor(uint32_t to) const noexcept;
  // After every lcore stopped: frees what the rings still hold; how many.
  uint64_t Discard();

 private:
  static constexpr uint32_t kKinds = 3;
  ShardRings(uint32_t lcores, PacketPool& pool)
      : lcores_(lcores), pool_(pool), rings_(kKinds * lcores * lcores) {}
  rte_ring* ring(uint32_t kind, uint32_t from, uint32_t to) const noexcept {
    return rings_[(kind * lcores_ + from) * lcores_ + to];
  }

  uint32_t lcores_;
  PacketPool& pool_;
  std::vector<rte_ring*> rings_;  // nullptr where from == to
};

// Lcore `index`'s view: which egress ports are local, and the rings to their owners. Packets
// for a peer's TM are staged and enqueued a burst at a time (Flush), so the ring's indices
// cross between the cores once per burst, not once per packet.
class ShardRouter final : public EgressRouter {
 public:
  static constexpr uint32_t kStage = 64;

  // `pool` frees what a full ring refuses.
  ShardRouter(const ShardRings& rings, uint32_t index, PacketPool& pool)
      : rings_(rings), index_(index), pool_(pool), staged_(rings.lcores()) {}
  uint32_t index() const noexcept { return index_; }
  uint32_t lcores() const noexcept { return rings_.lcores(); }
  const ShardRings& rings() const noexcept { return rings_; }
  bool IsLocal(PortId port) const noexcept override { return port % lcores() == index_; }
  // Stages the packet for its port's owner; a full stage is flushed first.
  bool Forward(Packet* pkt) noexcept override {
    const uint32_t to = pkt->meta.egress_spec % lcores();
    if (staged_[to].n == kStage) dropped_ += Flush(to);
    staged_[to].pkts[staged_[to].n++] = pkt;
    return true;
  }
  // Enqueues what is staged for the peers' TMs; frees what a full ring refused. Returns (and
  // forgets) how many packets were freed since the last call: shard_ring_full drops.
  uint64_t Flush() noexcept {
    for (uint32_t to = 0; to < lcores(); ++to) {
      if (staged_[to].n != 0) dropped_ += Flush(to);
    }
    const uint64_t dropped = dropped_;
    dropped_ = 0;
    return dropped;
  }
  // True when every ring from this lcore to a peer's TM has room for n more packets.
  bool EgressRoom(uint32_t n) const noexcept {
    for (uint32_t to = 0; to < lcores(); ++to) {
      if (to != index_ && rte_ring_free_count(rings_.egress(index_, to)) < n) return false;
    }
    return true;
  }
  // True when every ring from this lcore to a peer's ingress or TM has room for n more packets.
  bool Room(uint32_t n) const noexcept {
    for (uint32_t to = 0; to < lcores(); ++to) {
      if (to != index_ && rte_ring_free_count(rings_.ingress(index_, to)) < n) return false;
    }
    return EgressRoom(n);
  }
  bool IsLocalShard(uint32_t key) const noexcept override { return key % lcores() == index_; }
  bool Recirculate(Packet* pkt, uint32_t key) noexcept override {
    return rte_ring_sp_enqueue(rings_.recirculate(index_, key % lcores()), pkt) == 0;
  }

 private:
  struct Stage {
    uint32_t n = 0;
    void* pkts[kStage];
  };
  uint32_t Flush(uint32_t to) noexcept;

  const ShardRings& rings_;
  uint32_t index_;
  PacketPool& pool_;
  std::vector<Stage> staged_;  // by peer
  uint64_t dropped_ = 0;
};

}  // namespace swemu
