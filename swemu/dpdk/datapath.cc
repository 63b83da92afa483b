#include "swemu/dpdk/datapath.h"

#include <rte_ethdev.h>
#include <rte_pause.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "swemu/dpdk/mbuf_pool.h"
#include "swemu/dpdk/pcap_recorder.h"
#include "swemu/dpdk/shard.h"

namespace swemu {

Datapath::Datapath(Switch& sw, MbufPacketPool& pool, const DpdkPorts& ports,
                   ControlMailbox& mailbox, const TscClock& clock, LoopClock& loop_clock,
                   std::ostream& out)
    : sw_(sw),
      pool_(pool),
      ports_(ports),
      mailbox_(mailbox),
      clock_(clock),
      loop_clock_(loop_clock),
      out_(out),
      wire_(sw.num_ports()),
      effects_(sw.num_ports()),
      backlog_(sw.num_ports()) {
  stats_last_.wire.resize(sw.num_ports());
}

uint64_t Datapath::NsToCycles(uint64_t ns) const {
  return ns / 1'000'000'000ull * clock_.hz() +
         ns % 1'000'000'000ull * clock_.hz() / 1'000'000'000ull;
}

void Datapath::InitPortEffects(uint64_t seed, PortId p, uint32_t delay_frames, double loss,
                               uint64_t delay_ns) {
  effects_[p].Init(seed, p, delay_frames);
  effects_[p].SetLoss(loss);
  effects_[p].SetDelay(delay_ns, NsToCycles(delay_ns));
}

void Datapath::SetShard(ShardRouter* shard) {
  shard_ = shard;
  sw_.SetEgressRouter(shard);
}

bool Datapath::Owns(PortId p) const noexcept { return shard_ == nullptr || shard_->IsLocal(p); }

bool Datapath::Holding() const noexcept {
  return sw_.tm().TotalQueued() != 0 || delayed_ != 0 || backlogged_ != 0 ||
         (shard_ != nullptr && shard_->rings().PendingFor(shard_->index()) != 0);
}

void Datapath::Start(const DatapathOptions& options) {
  busy_poll_ = options.busy_poll;
  sw_.SetCutThroughSink(options.cut_through ? this : nullptr);
  descriptors_ = pool_.DescriptorCache();  // Start runs on the datapath's lcore
  const uint64_t start = rte_rdtsc();
  stats_period_ = options.stats_interval_ns ? NsToCycles(options.stats_interval_ns) : 0;
  next_stats_ = stats_period_ ? start + stats_period_ : UINT64_MAX;
  stats_last_tsc_ = start;
  stats_stages_ = options.stats_stages;
  if (options.stats_stages) StartStageSampling();
  stalled_step_cycles_ = NsToCycles(kStalledStepNs);
}

bool Datapath::Step(uint64_t now) {
  if (now >= next_stats_) {
    PrintStats(now);
    next_stats_ += stats_period_;
  }
  const bool moved = Iterate(true, now);
  mailbox_.Poll(sw_.commands());
  // The CPU port's packet-in and agent timers, on this lcore as commands are (Iterate latched
  // the switch's clock).
  if (sw_.NextCpuTime() <= sw_.clock().NowNs()) sw_.ServiceCpu();
  return moved;
}

void Datapath::Run(const DatapathOptions& options, const std::atomic<bool>& stop) {
  RunTogether({this}, {options}, stop);
}

void Datapath::RunTogether(const std::vector<Datapath*>& paths,
                           const std::vector<DatapathOptions>& each,
                           const std::atomic<bool>& stop) {
  for (std::size_t i = 0; i < paths.size(); ++i) paths[i]->Start(each[i]);
  const DatapathOptions& options = each.front();
  const uint64_t deadline =
      options.run_for_ns ? rte_rdtsc() + paths.front()->NsToCycles(options.run_for_ns) : UINT64_MAX;
  Datapath& first = *paths.front();  // its streak and sleep stand for all
  // One TSC read per switch step: a step's end is the next one's start.
  uint64_t now = rte_rdtsc();
  while (!stop.load(std::memory_order_relaxed)) {
    if (now >= deadline) break;
    bool moved = false;
    for (Datapath* path : paths) {
      const bool step_moved = path->Step(now);
      const uint64_t end = rte_rdtsc();
      path->CountStep(end - now, step_moved);
      moved = moved || step_moved;
      now = end;
    }
    if (moved) {
      first.idle_streak_ = 0;
      first.sleep_ns_ = kMinSleepNs;
    } else if (!options.busy_poll) {
      bool holding = false;
      for (Datapath* path : paths) holding = holding || path->Holding();
      first.Idle(holding);
      now = rte_rdtsc();
    }
  }
  Drain(paths);
}

void Datapath::CountStep(uint64_t cycles, bool moved) noexcept {
  if (cycles > stalled_step_cycles_) {
    runtime_.stalled_cycles += cycles;
    ++runtime_.stalled_steps;
  } else {
    (moved ? runtime_.moved_cycles : runtime_.empty_cycles) += cycles;
  }
}

void Datapath::Drain(const std::vector<Datapath*>& paths) {
  // Shutdown: no more RX; send what the TMs and the delay lines still hold, for at most a second.
  const TscClock& clock = paths.front()->clock_;
  const uint64_t drain_end = rte_rdtsc() + clock.hz();
  uint64_t grace_end = 0;
  for (const Datapath* path : paths) {
    if (path->shard_ != nullptr) grace_end = rte_rdtsc() + path->NsToCycles(kShardGraceNs);
  }
  auto holding = [&paths] {
    for (const Datapath* path : paths) {
      if (path->Holding()) return true;
    }
    return false;
  };
  while ((holding() || rte_rdtsc() < grace_end) && rte_rdtsc() < drain_end) {
    bool moved = false;
    for (Datapath* path : paths) {
      moved = path->Iterate(false, rte_rdtsc()) || moved;
      path->mailbox_.Poll(path->sw_.commands());
    }
    if (!moved) rte_pause();
  }
  for (Datapath* path : paths) {
    path->sw_.SetCutThroughSink(nullptr);
    path->mailbox_.Close();
  }
}

bool Datapath::Iterate(bool rx, uint64_t now_tsc) noexcept {
  loop_tsc_ = now_tsc;
  loop_clock_.Latch(now_tsc);
  timing_ = runtime_.loops++ % kTimingEvery == 0;
  if (stage_sampling_ && sw_.stage_profile().enabled() != timing_) {
    sw_.stage_profile().Enable(timing_);
  }
  uint32_t moved = shard_ != nullptr ? DrainPeers() : 0;
  if (rx) {
    for (PortId p = 0; p < sw_.num_ports(); ++p) {
      if (Owns(p)) moved += ReceivePort(p);
    }
  }
  // What ingress staged for peers' TMs leaves before this lcore's TX work.
  if (shard_ != nullptr) Drop(DropReason::kShardRingFull, shard_->Flush());
  // A port that fills a whole burst may send up to kTxBurstsPerLoop bursts per loop: all ports
  // together receive up to num_ports bursts per loop, so an unshaped port that many ports feed
  // (fan-in) is not held to one burst by the loop; a shaped port stops at its rate anyway.
  for (PortId p = 0; p < sw_.num_ports(); ++p) {
    if (!Owns(p)) continue;
    for (uint32_t round = 0; round < kTxBurstsPerLoop; ++round) {
      const uint32_t sent = TransmitPort(p);
      moved += sent;
      if (sent < kBurst) break;
    }
  }
  if (shard_ != nullptr) Drop(DropReason::kShardRingFull, shard_->Flush());
  if (moved == 0) ++runtime_.idle_loops;
  return moved != 0;
}

uint32_t Datapath::ReceivePort(PortId p) noexcept {
  const uint16_t id = ports_.dpdk_port(p);
  if (id == kNoDpdkPort) return 0;
  // Back-pressure: while a ring to a peer cannot take a whole burst, frames wait in the device's
  // queue (which drops them when full, as a NIC does when the switch cannot keep up) instead of
  // being received, parsed and then dropped here: an overloaded peer does not cost this lcore
  // its cycles, and an emulator too slow shows up as device misses, as with one lcore.
  if (shard_ != nullptr && !shard_->Room(kShardRoom)) {
    ++runtime_.rx_held;
    return 0;
  }
  rte_mbuf* mbufs[kBurst];
  const uint64_t t0 = PhaseTsc();
  const uint16_t n = rte_eth_rx_burst(id, 0, mbufs, kBurst);
  if (n == 0) return 0;
  if (recorder_ != nullptr && recorder_->records(p)) {
    const uint16_t filled = FillRecords(p, PcapRecorder::kRx, mbufs, n);
    pcap_ring_->Publish(filled);
    pcap_ring_->CountDropped(n - filled);
  }
  // One pass over the mbufs: counters, the single-segment check and the descriptor.
  Packet* pkts[kBurst];
  if (!pool_.GetDescriptors(pkts, n, descriptors_)) [[unlikely]] {
    rte_pktmbuf_free_bulk(mbufs, n);
    Drop(DropReason::kPoolExhausted, n);
    return n;
  }
  // Byte counts add up in locals: a counter in memory, updated beside the descriptor stores
  // (which may alias it), made each packet wait on the previous one's store (~6 cycles).
  // Unsharded, the same pass starts each packet's pipeline pass (Switch::StartPass).
  const bool local = shard_ == nullptr;
  const TimeNs now = loop_clock_.NowNs();
  uint64_t refused_bytes = 0;
  uint64_t kept_bytes = 0;
  uint32_t k = 0;
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = mbufs[i];
    if (m->nb_segs != 1) [[unlikely]] {  // the pipeline sees one contiguous frame
      refused_bytes += m->pkt_len;
      rte_pktmbuf_free(m);
      Drop(DropReason::kMultiSegmentFrame);
      continue;
    }
    Packet* pkt = pkts[k++];
    MbufPacketPool::Attach(pkt, m);
    kept_bytes += pkt->len;
    if (local) sw_.StartPass(*pkt, p, now);
  }
  WirePortCounters& wire = wire_[p];
  wire.rx_packets += n;
  wire.rx_bytes += kept_bytes + refused_bytes;
  if (k != n) [[unlikely]] {
    pool_.PutDescriptors(pkts + k, n - k, descriptors_);
  }
  const uint64_t t1 = PhaseTsc();
  if (k != 0) {
    if (local) {
      sw_.ReceiveStarted(pkts, k, p, kept_bytes);
    } else {
      Scatter(pkts, k, p);
    }
  }
  if (timing_) {
    runtime_.rx.Add(t1 - t0, n);
    if (k != 0) runtime_.ingress.Add(rte_rdtsc() - t1, k);
  }
  return n;
}

void Datapath::Scatter(Packet** pkts, uint32_t n, PortId p) noexcept {
  const uint32_t lcores = shard_->lcores();
  const uint32_t self = shard_->index();
  // Per lcore, in arrival order (a flow's packets stay in order); one ring enqueue per peer.
  void* to[kMaxShardLcores][kBurst];
  uint32_t count[kMaxShardLcores] = {};
  for (uint32_t i = 0; i < n; ++i) {
    Packet* pkt = pkts[i];
    const uint32_t owner = sw_.ShardKeyOf(*pkt, p) % lcores;
    // A frame the parser refused is dropped here: no lcore needs it.
    const uint32_t dest = pkt->meta.dropped() ? self : owner;
    to[dest][count[dest]++] = pkt;
  }
  for (uint32_t dest = 0; dest < lcores; ++dest) {
    if (dest == self || count[dest] == 0) continue;
    const uint32_t sent = rte_ring_sp_enqueue_burst(shard_->rings().ingress(self, dest), to[dest],
                                                    count[dest], nullptr);
    for (uint32_t i = sent; i < count[dest]; ++i) pool_.Free(static_cast<Packet*>(to[dest][i]));
    Drop(DropReason::kShardRingFull, count[dest] - sent);
  }
  if (count[self] != 0) {  // parsed once, by ShardKeyOf
    Packet* local[kBurst];
    for (uint32_t i = 0; i < count[self]; ++i) local[i] = static_cast<Packet*>(to[self][i]);
    sw_.ReceiveParsedBurst(local, count[self]);
  }
}

namespace {

uint32_t DequeuePeer(rte_ring* ring, Packet** pkts) noexcept {
  void* objs[Datapath::kBurst];
  const uint32_t n = rte_ring_sc_dequeue_burst(ring, objs, Datapath::kBurst, nullptr);
  for (uint32_t i = 0; i < n; ++i) pkts[i] = static_cast<Packet*>(objs[i]);
  return n;
}

}  // namespace

uint32_t Datapath::DrainPeers() noexcept {
  const uint32_t self = shard_->index();
  const ShardRings& rings = shard_->rings();
  const bool egress_room = shard_->EgressRoom(kShardRoom);
  uint32_t moved = 0;
  for (uint32_t from = 0; from < shard_->lcores(); ++from) {
    if (from == self) continue;
    // Each packet carries its ingress port and parsed headers; ring order keeps flows in order.
    // One burst per ring per loop: what the TM cannot take yet stays in the ring, so a busy lcore
    // holds back its peers' RX (Room) rather than dropping in its TM. Ingress, which may hand
    // packets to peers' TMs, waits while those rings are nearly full (they always drain: their
    // owners take TM packets unconditionally, so this cannot deadlock).
    Packet* pkts[kBurst];
    uint32_t n = 0;
    if (egress_room) {
      n = DequeuePeer(rings.ingress(from, self), pkts);
      if (n != 0) sw_.ReceiveParsedBurst(pkts, n);
      moved += n;
    }
    n = DequeuePeer(rings.recirculate(from, self), pkts);
    if (n != 0) sw_.ReceiveRecirculated(pkts, n);
    moved += n;
    n = DequeuePeer(rings.egress(from, self), pkts);
    for (uint32_t i = 0; i < n; ++i) sw_.EnqueueFromPeer(pkts[i]);
    moved += n;
  }
  return moved;
}

uint32_t Datapath::TransmitPort(PortId p) noexcept {
  PortEffects& fx = effects_[p];
  // Older frames first: what the delay line releases, then what the TM sends now.
  const uint32_t released = fx.held() != 0 ? ReleaseDelayed(p, loop_tsc_) : 0;
  const uint16_t id = ports_.dpdk_port(p);
  // A device that refused frames is full: leave the rest in the TM, where the queue builds up
  // (ECN marks, then TM drops) as behind a slower link, instead of dropping at the device.
  if (backlog_[p].n != 0 && !FlushBacklog(p, id)) return released;
  Packet* pkts[kBurst];
  const uint64_t t0 = PhaseTsc();
  const auto k = static_cast<uint16_t>(sw_.TransmitBurst(p, pkts, kBurst));
  if (k == 0) return released;
  const uint64_t t1 = PhaseTsc();
  Emit(p, id, pkts, k);
  if (timing_) {
    runtime_.egress.Add(t1 - t0, k);
    runtime_.tx.Add(rte_rdtsc() - t1, k);
  }
  return released + k;
}

void Datapath::Send(PortId port, Packet** pkts, uint32_t n) noexcept {
  runtime_.cut_through += n;
  const uint16_t id = ports_.dpdk_port(port);
  for (uint32_t at = 0; at < n; at += kBurst) {
    Emit(port, id, pkts + at, static_cast<uint16_t>(std::min<uint32_t>(kBurst, n - at)));
  }
}

void Datapath::Emit(PortId p, uint16_t id, Packet* const* pkts, uint16_t k) noexcept {
  rte_mbuf* mbufs[kBurst];
  uint64_t bytes = 0;  // the frames' bytes, for SendFrames
  for (uint16_t i = 0; i < k; ++i) {
    mbufs[i] = MbufPacketPool::Detach(pkts[i]);
    bytes += pkts[i]->len;
  }
  pool_.PutDescriptors(pkts, k, descriptors_);
  if (id == kNoDpdkPort) {  // a switch port without a device is an unplugged cable
    rte_pktmbuf_free_bulk(mbufs, k);
    Drop(DropReason::kLinkDown, k);
    return;
  }
  PortEffects& fx = effects_[p];
  uint16_t n = k;
  if (fx.lossy()) {  // the wire loses frames after the switch sent them
    n = 0;
    for (uint16_t i = 0; i < k; ++i) {
      if (fx.Lose()) {
        bytes -= mbufs[i]->pkt_len;
        rte_pktmbuf_free(mbufs[i]);
        Drop(DropReason::kLossInjected);
      } else {
        mbufs[n++] = mbufs[i];
      }
    }
  }
  if (fx.delaying()) {
    // The frames leave the switch now, not at the loop's start: a delay is never cut short.
    const uint64_t sent_tsc = rte_rdtsc();
    for (uint16_t i = 0; i < n; ++i) {
      if (fx.Hold(mbufs[i], sent_tsc)) {
        ++delayed_;
      } else {
        rte_pktmbuf_free(mbufs[i]);
        Drop(DropReason::kDelayLineFull);
      }
    }
    n = 0;
  }
  if (n != 0) SendFrames(p, id, mbufs, n, bytes);
}

uint32_t Datapath::ReleaseDelayed(PortId p, uint64_t now_tsc) noexcept {
  rte_mbuf* mbufs[kBurst];
  const uint16_t n = effects_[p].Release(now_tsc, mbufs, kBurst);
  if (n == 0) return 0;
  delayed_ -= n;
  // Only ports with a device hold frames.
  SendFrames(p, ports_.dpdk_port(p), mbufs, n, FrameBytes(mbufs, n));
  return n;
}

uint64_t Datapath::FrameBytes(rte_mbuf* const* mbufs, uint16_t n) noexcept {
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += mbufs[i]->pkt_len;
  return bytes;
}

void Datapath::SendFrames(PortId p, uint16_t id, rte_mbuf** mbufs, uint16_t n,
                          uint64_t bytes) noexcept {
  const bool record = recorder_ != nullptr && recorder_->records(p);
  const uint16_t filled = record ? FillRecords(p, PcapRecorder::kTx, mbufs, n) : 0;
  const uint16_t sent = rte_eth_tx_burst(id, 0, mbufs, n);
  if (record) {  // only what went on the wire
    const uint16_t published = std::min(filled, sent);
    pcap_ring_->Publish(published);
    pcap_ring_->CountDropped(sent - published);
  }
  // The driver may already have freed what it took; what it refused is still ours to read.
  if (sent < n) [[unlikely]]
    bytes -= FrameBytes(mbufs + sent, static_cast<uint16_t>(n - sent));
  WirePortCounters& wire = wire_[p];
  wire.tx_packets += sent;
  wire.tx_bytes += bytes;
  if (sent < n) {
    TxBacklog& backlog = backlog_[p];
    const auto keep = static_cast<uint16_t>(std::min<uint32_t>(n - sent, kBacklog - backlog.n));
    std::copy(mbufs + sent, mbufs + sent + keep, backlog.mbufs.begin() + backlog.n);
    backlog.n = static_cast<uint16_t>(backlog.n + keep);
    backlogged_ += keep;
    const uint16_t lost = static_cast<uint16_t>(n - sent - keep);
    if (lost != 0) {
      rte_pktmbuf_free_bulk(mbufs + sent + keep, lost);
      Drop(DropReason::kTxQueueFull, lost);
    }
  }
}

bool Datapath::FlushBacklog(PortId p, uint16_t id) noexcept {
  TxBacklog& backlog = backlog_[p];
  rte_mbuf* mbufs[kBacklog];
  const uint16_t n = backlog.n;
  std::copy(backlog.mbufs.begin(), backlog.mbufs.begin() + n, mbufs);
  backlog.n = 0;
  backlogged_ -= n;
  for (uint16_t at = 0; at < n;) {
    const auto chunk = static_cast<uint16_t>(std::min<uint32_t>(kBurst, n - at));
    SendFrames(p, id, mbufs + at, chunk, FrameBytes(mbufs + at, chunk));
    at = static_cast<uint16_t>(at + chunk);
    if (backlog.n != 0) {  // refused again: the rest waits behind it, in order
      std::copy(mbufs + at, mbufs + n, backlog.mbufs.begin() + backlog.n);
      backlog.n = static_cast<uint16_t>(backlog.n + (n - at));
      backlogged_ += n - at;
      return false;
    }
  }
  return true;
}

uint64_t Datapath::DiscardBacklog() {
  uint64_t discarded = 0;
  for (TxBacklog& backlog : backlog_) {
    rte_pktmbuf_free_bulk(backlog.mbufs.data(), backlog.n);
    discarded += backlog.n;
    backlog.n = 0;
  }
  backlogged_ = 0;
  return discarded;
}

uint16_t Datapath::FillRecords(PortId p, int direction, rte_mbuf* const* mbufs,
                               uint16_t n) noexcept {
  const auto fill = static_cast<uint16_t>(std::min<uint32_t>(n, pcap_ring_->Room()));
  if (fill == 0) return 0;
  const uint64_t ts = clock_.NowNs() + wall_offset_ns_;
  const uint32_t snaplen = recorder_->snaplen();
  for (uint16_t i = 0; i < fill; ++i) {
    uint8_t* data = nullptr;
    PcapRecorder::SlotHeader* header = pcap_ring_->Pending(i, &data);
    const rte_mbuf* m = mbufs[i];
    const uint32_t caplen = std::min(m->pkt_len, snaplen);
    // Copies into `data` when the frame spans segments, else points into the mbuf.
    const void* bytes = rte_pktmbuf_read(m, 0, caplen, data);
    if (bytes != data) std::memcpy(data, bytes, caplen);
    *header = {ts, m->pkt_len, static_cast<uint16_t>(caplen),
               static_cast<uint16_t>(p * 2 + direction)};
  }
  return fill;
}

void Datapath::Idle(bool holding) noexcept {
  ++idle_streak_;
  if (idle_streak_ <= kSpinLoops) return;
  // Frames waiting for the shaper or a delay line must leave on time: only pause, never sleep,
  // while any are held.
  if (idle_streak_ <= kSpinLoops + kPauseLoops || holding) {
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

uint64_t Datapath::DiscardDelayed() {
  uint64_t discarded = 0;
  for (PortEffects& fx : effects_) discarded += fx.FreeHeld();
  delayed_ = 0;
  return discarded;
}

std::array<uint64_t, kDropReasonCount> Datapath::AllDrops() const {
  std::array<uint64_t, kDropReasonCount> drops = drops_;
  for (std::size_t i = 0; i < kDropReasonCount; ++i)
    drops[i] += sw_.Drops(static_cast<DropReason>(i));
  return drops;
}

std::array<uint64_t, kDropReasonCount> Datapath::AllDropsSinceStart() const {
  std::array<uint64_t, kDropReasonCount> drops = drops_;
  for (std::size_t i = 0; i < kDropReasonCount; ++i)
    drops[i] += sw_.DropsSinceStart(static_cast<DropReason>(i));
  return drops;
}

}  // namespace swemu
