#pragma once
// Packets in mbufs. Each received frame stays in its mbuf (no copy); the swemu::Packet that
// describes it (frame bounds, parse state, metadata) comes from a second mempool of packet
// descriptors, attached at RX and returned at TX. Descriptors used recently are reused first
// (the mempool's per-lcore cache is a stack), so the burst's metadata lives in a few hot pages
// instead of beside each mbuf: with 4 KiB pages (--no-huge) every pass over a burst would
// otherwise take a TLB miss per packet (figures in docs/performance.md).
// Data room: 2048 bytes after the default 128-byte headroom (RTE_MBUF_DEFAULT_BUF_SIZE), enough
// for a 1518-byte frame plus tunnels a program may prepend; larger frames arrive as multi-segment
// mbufs and are dropped.
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <utility>

#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"

namespace swemu {

// The mbufs alone, for processes that move frames without the pipeline (hosts, swemu-replay).
class MbufPool {
 public:
  // Error: "mbuf pool: not enough memory for N mbufs (...)" and the like.
  static Result<MbufPool> Create(uint32_t mbufs, uint32_t cache_size, int socket);
  MbufPool(MbufPool&& other) noexcept : mempool_(std::exchange(other.mempool_, nullptr)) {}
  MbufPool& operator=(MbufPool&&) = delete;
  MbufPool(const MbufPool&) = delete;
  MbufPool& operator=(const MbufPool&) = delete;
  ~MbufPool() { rte_mempool_free(mempool_); }

  // Mbufs in use (a leak check at shutdown).
  std::size_t InUse() const noexcept { return rte_mempool_in_use_count(mempool_); }
  rte_mempool* mempool() const noexcept { return mempool_; }

 private:
  explicit MbufPool(rte_mempool* mempool) : mempool_(mempool) {}
  rte_mempool* mempool_;
};

// The mbufs and the switch's packet descriptors.
class MbufPacketPool final : public PacketPool {
 public:
  // Error: "mbuf pool: not enough memory for N mbufs (...)" and the like.
  static Result<std::unique_ptr<MbufPacketPool>> Create(uint32_t mbufs, uint32_t cache_size,
                                                        int socket);
  ~MbufPacketPool() override;
  MbufPacketPool(const MbufPacketPool&) = delete;
  MbufPacketPool& operator=(const MbufPacketPool&) = delete;

  Packet* Alloc() noexcept override;
  // Single-segment packets only (multi-segment frames never get past RX).
  Packet* Clone(const Packet& packet) noexcept override;
  void Free(Packet* packet) noexcept override {
    rte_pktmbuf_free(static_cast<rte_mbuf*>(packet->handle));
    rte_mempool_put(packets_, packet);
  }
  // Mbufs in use (the shutdown leak check also checks PacketsInUse).
  std::size_t InUse() const noexcept override { return mbufs_.InUse(); }
  std::size_t PacketsInUse() const noexcept { return rte_mempool_in_use_count(packets_); }
  rte_mempool* mempool() const noexcept { return mbufs_.mempool(); }
  // The calling lcore's cache of packet descriptors (nullptr off EAL lcores), read once per run
  // by a datapath rather than looked up per burst.
  rte_mempool_cache* DescriptorCache() const noexcept {
    return rte_mempool_default_cache(packets_, rte_lcore_id());
  }

  // Packet descriptors, `cache` being the calling lcore's (DescriptorCache) or nullptr. Get is
  // all or nothing: false, with nothing taken, when the pool cannot give n.
  bool GetDescriptors(Packet** pkts, uint32_t n, rte_mempool_cache* cache) noexcept {
    return rte_mempool_generic_get(packets_, reinterpret_cast<void**>(pkts), n, cache) == 0;
  }
  void PutDescriptors(Packet* const* pkts, uint32_t n, rte_mempool_cache* cache) noexcept {
    rte_mempool_generic_put(packets_, reinterpret_cast<void* const*>(pkts), n, cache);
  }
  // RX: points a descriptor at a received single-segment mbuf (parse state and metadata are
  // reset by Switch::ReceiveBurst).
  static void Attach(Packet* pkt, rte_mbuf* m) noexcept {
    pkt->data = rte_pktmbuf_mtod(m, uint8_t*);
    pkt->len = m->data_len;
    pkt->headroom = rte_pktmbuf_headroom(m);
    pkt->tailroom = rte_pktmbuf_tailroom(m);
    pkt->handle = m;
  }
  // TX: the packet's mbuf with the frame bounds written back (programs may have prepended or
  // trimmed); the descriptor is then free to go back (PutDescriptors).
  static rte_mbuf* Detach(const Packet* pkt) noexcept {
    auto* m = static_cast<rte_mbuf*>(pkt->handle);
    m->data_off = static_cast<uint16_t>(pkt->data - static_cast<uint8_t*>(m->buf_addr));
    m->data_len = static_cast<uint16_t>(pkt->len);
    m->pkt_len = pkt->len;
    return m;
  }

 private:
  MbufPacketPool(MbufPool mbufs, rte_mempool* packets)
      : mbufs_(std::move(mbufs)), packets_(packets) {}
  MbufPool mbufs_;
  rte_mempool* packets_;  // Packet descriptors
};

}  // namespace swemu
