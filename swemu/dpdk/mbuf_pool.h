#pragma once
// Packets in mbufs: each mbuf's private area (priv_size) holds the swemu::Packet that describes
// it, so RX and TX convert with no allocation and no copy. Data room: 2048 bytes after the
// default 128-byte headroom (RTE_MBUF_DEFAULT_BUF_SIZE), enough for a 1518-byte frame plus
// tunnels a program may prepend; larger frames arrive as multi-segment mbufs and are dropped.
#include <rte_mbuf.h>

#include <cstdint>
#include <memory>

#include "pipeline/core/packet_pool.h"
#include "pipeline/core/status.h"

namespace swemu {

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
  }
  std::size_t InUse() const noexcept override { return rte_mempool_in_use_count(mempool_); }
  rte_mempool* mempool() const noexcept { return mempool_; }

  // RX: the packet of a received single-segment mbuf, its frame bounds taken from the mbuf.
  static Packet* FromMbuf(rte_mbuf* m) noexcept {
    auto* pkt = static_cast<Packet*>(rte_mbuf_to_priv(m));
    pkt->data = rte_pktmbuf_mtod(m, uint8_t*);
    pkt->len = m->data_len;
    pkt->headroom = rte_pktmbuf_headroom(m);
    pkt->tailroom = rte_pktmbuf_tailroom(m);
    pkt->handle = m;  // parse state and metadata are reset by Switch::ReceiveBurst
    return pkt;
  }
  // TX: writes the frame bounds back (programs may have prepended or trimmed).
  static rte_mbuf* ToMbuf(Packet* pkt) noexcept {
    auto* m = static_cast<rte_mbuf*>(pkt->handle);
    m->data_off = static_cast<uint16_t>(pkt->data - static_cast<uint8_t*>(m->buf_addr));
    m->data_len = static_cast<uint16_t>(pkt->len);
    m->pkt_len = pkt->len;
    return m;
  }

 private:
  explicit MbufPacketPool(rte_mempool* mempool) : mempool_(mempool) {}
  rte_mempool* mempool_;
};

}  // namespace swemu
