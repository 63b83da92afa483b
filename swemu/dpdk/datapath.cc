#include "swemu/dpdk/datapath.h"

#include <rte_ethdev.h>
#include <rte_pause.h>

#include <algorithm>
#include <ctime>

#include "swemu/dpdk/mbuf_pool.h"

namespace swemu {

Datapath::Datapath(Switch& sw, const DpdkPorts& ports, ControlMailbox& mailbox,
                   const TscClock& clock, std::ostream& out)
    : sw_(sw),
      ports_(ports),
      mailbox_(mailbox),
      clock_(clock),
      out_(out),
      wire_(sw.num_ports()),
      stats_last_(sw.num_ports()) {}

uint64_t Datapath::NsToCycles(uint64_t ns) const {
  return ns / 1'000'000'000ull * clock_.hz() +
         ns % 1'000'000'000ull * clock_.hz() / 1'000'000'000ull;
}

void Datapath::Run(const DatapathOptions& options, const std::atomic<bool>& stop) {
  busy_poll_ = options.busy_poll;
  const uint64_t start = rte_rdtsc();
  const uint64_t deadline =
      options.run_for_ns ? start + NsToCycles(options.run_for_ns) : UINT64_MAX;
  const uint64_t period = options.stats_interval_ns ? NsToCycles(options.stats_interval_ns) : 0;
  uint64_t next_stats = period ? start + period : UINT64_MAX;
  stats_last_tsc_ = start;
  while (!stop.load(std::memory_order_relaxed)) {
    const bool moved = Iterate(true);
    mailbox_.Poll(sw_.commands());
    const uint64_t now = rte_rdtsc();
    if (now >= deadline) break;
    if (now >= next_stats) {
      PrintStats(now);
      next_stats += period;
    }
    if (moved) {
      idle_streak_ = 0;
      sleep_ns_ = kMinSleepNs;
    } else if (!busy_poll_) {
      Idle();
    }
  }
  // Shutdown: no more RX; send what the TM still holds, for at most a second.
  const uint64_t drain_end = rte_rdtsc() + clock_.hz();
  while (sw_.tm().TotalQueued() != 0 && rte_rdtsc() < drain_end) {
    if (!Iterate(false)) rte_pause();
    mailbox_.Poll(sw_.commands());
  }
  mailbox_.Close();
}

bool Datapath::Iterate(bool rx) noexcept {
  ++runtime_.loops;
  uint32_t moved = 0;
  if (rx) {
    for (PortId p = 0; p < sw_.num_ports(); ++p) moved += ReceivePort(p);
  }
  for (PortId p = 0; p < sw_.num_ports(); ++p) moved += TransmitPort(p);
  if (moved == 0) ++runtime_.idle_loops;
  return moved != 0;
}

uint32_t Datapath::ReceivePort(PortId p) noexcept {
  const uint16_t id = ports_.dpdk_port(p);
  if (id == kNoDpdkPort) return 0;
  rte_mbuf* mbufs[kBurst];
  const uint64_t t0 = rte_rdtsc();
  const uint16_t n = rte_eth_rx_burst(id, 0, mbufs, kBurst);
  if (n == 0) return 0;
  Packet* pkts[kBurst];
  uint32_t k = 0;
  WirePortCounters& wire = wire_[p];
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = mbufs[i];
    ++wire.rx_packets;
    wire.rx_bytes += m->pkt_len;
    if (m->nb_segs != 1) {  // the pipeline sees one contiguous frame
      rte_pktmbuf_free(m);
      ++drops_[static_cast<std::size_t>(DropReason::kMultiSegmentFrame)];
      continue;
    }
    pkts[k++] = MbufPacketPool::FromMbuf(m);
  }
  const uint64_t t1 = rte_rdtsc();
  runtime_.rx.Add(t1 - t0, n);
  if (k != 0) {
    sw_.ReceiveBurst(pkts, k, p);
    runtime_.ingress.Add(rte_rdtsc() - t1, k);
  }
  return n;
}

uint32_t Datapath::TransmitPort(PortId p) noexcept {
  Packet* pkts[kBurst];
  rte_mbuf* mbufs[kBurst];
  uint32_t lens[kBurst];
  const uint64_t t0 = rte_rdtsc();
  const auto k = static_cast<uint16_t>(sw_.TransmitBurst(p, pkts, kBurst));
  if (k == 0) return 0;
  for (uint16_t i = 0; i < k; ++i) {
    lens[i] = pkts[i]->len;
    mbufs[i] = MbufPacketPool::ToMbuf(pkts[i]);
  }
  const uint64_t t1 = rte_rdtsc();
  runtime_.egress.Add(t1 - t0, k);
  const uint16_t id = ports_.dpdk_port(p);
  if (id == kNoDpdkPort) {  // a switch port without a device is an unplugged cable
    rte_pktmbuf_free_bulk(mbufs, k);
    drops_[static_cast<std::size_t>(DropReason::kLinkDown)] += k;
    return k;
  }
  const uint16_t sent = rte_eth_tx_burst(id, 0, mbufs, k);
  WirePortCounters& wire = wire_[p];
  wire.tx_packets += sent;
  for (uint16_t i = 0; i < sent; ++i) wire.tx_bytes += lens[i];
  if (sent < k) {
    rte_pktmbuf_free_bulk(mbufs + sent, k - sent);
    drops_[static_cast<std::size_t>(DropReason::kTxQueueFull)] += k - sent;
  }
  runtime_.tx.Add(rte_rdtsc() - t1, k);
  return k;
}

void Datapath::Idle() noexcept {
  ++idle_streak_;
  if (idle_streak_ <= kSpinLoops) return;
  // Frames waiting for the shaper must leave on time: only pause, never sleep, while the TM
  // holds any.
  if (idle_streak_ <= kSpinLoops + kPauseLoops || sw_.tm().TotalQueued() != 0) {
    rte_pause();
    return;
  }
  timespec sleep = {0, static_cast<long>(sleep_ns_)};
  nanosleep(&sleep, nullptr);
  ++runtime_.sleeps;
  sleep_ns_ = std::min(sleep_ns_ * 2, kMaxSleepNs);
}

uint64_t Datapath::DiscardRx() {
  uint64_t discarded = 0;
  for (PortId p = 0; p < sw_.num_ports(); ++p) {
    const uint16_t id = ports_.dpdk_port(p);
    if (id == kNoDpdkPort) continue;
    rte_mbuf* mbufs[kBurst];
    // Bounded: a net_null source never runs dry.
    for (int burst = 0; burst < kDiscardBursts; ++burst) {
      const uint16_t n = rte_eth_rx_burst(id, 0, mbufs, kBurst);
      if (n == 0) break;
      rte_pktmbuf_free_bulk(mbufs, n);
      discarded += n;
    }
  }
  return discarded;
}

std::array<uint64_t, kDropReasonCount> Datapath::AllDrops() const {
  std::array<uint64_t, kDropReasonCount> drops = drops_;
  for (std::size_t i = 0; i < kDropReasonCount; ++i)
    drops[i] += sw_.Drops(static_cast<DropReason>(i));
  return drops;
}

}  // namespace swemu
