#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "tools/replay/output.h"

namespace swemu::replay {
namespace {

TimeNs WallNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<TimeNs>(now.tv_sec) * 1'000'000'000 + static_cast<TimeNs>(now.tv_nsec);
}

}  // namespace

DpdkOutput::~DpdkOutput() { Drop(count_); }

uint32_t DpdkOutput::MaxFrameLen() { return RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM; }

bool DpdkOutput::Stage(const uint8_t* data, uint32_t len) {
  if (count_ == kMaxBurst || len > MaxFrameLen()) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  if (m == nullptr) return false;
  std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), data, len);
  staged_[count_++] = m;
  return true;
}

SendResult DpdkOutput::Send(std::size_t n) {
  n = std::min(n, count_);
  const uint16_t sent = rte_eth_tx_burst(port_, 0, staged_, static_cast<uint16_t>(n));
  std::copy(staged_ + sent, staged_ + count_, staged_);
  count_ -= sent;
  return {sent, 0};
}

void DpdkOutput::Drop(std::size_t n) {
  n = std::min(n, count_);
  for (std::size_t i = 0; i < n; ++i) rte_pktmbuf_free(staged_[i]);
  std::copy(staged_ + n, staged_ + count_, staged_);
  count_ -= n;
}

uint32_t DpdkOutput::Receive() {
  rte_mbuf* mbufs[kMaxBurst];
  const uint16_t n = rte_eth_rx_burst(port_, 0, mbufs, kMaxBurst);
  if (n == 0) return 0;
  const TimeNs now = WallNs();
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = mbufs[i];
    if (capture_ != nullptr) {
      const uint32_t len = std::min<uint32_t>(m->pkt_len, static_cast<uint32_t>(scratch_.size()));
      const auto* data = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, scratch_.data()));
      capture_->Write(now, data, len);
    }
    rte_pktmbuf_free(m);
  }
  return n;
}

}  // namespace swemu::replay
