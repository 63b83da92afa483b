#pragma once
// The switch side of the CPU port (pipeline/program/cpu_port.h): a bounded FIFO of packets-in,
// each handed to the program's agent `latency_ns` after it entered ingress, the agent's timers,
// and packet-out / back-to-ingress through the switch. Everything here runs on the thread that
// owns the switch: the engine's, or the lcore's between bursts.
//
// Replicas of one switch (real time, [dpdk] workers > 1) share one control plane: each
// replica's agent is handed the same packet-ins and timer ticks at the same times by one pump
// (swemu/cpu_pump.h), so the agents' states and what they program into their own replica's
// tables stay alike, as every replica applies the same control commands; only the primary's
// (replica 0's) outputs leave, and a secondary frees what its agent sends, uncounted. The agent
// knows nothing of this.
#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/program/cpu_port.h"

namespace swemu {

class Switch;

class CpuPath final : public CpuPort {
 public:
  CpuPath(Switch& sw, const CpuPortConfig& config);

  // Fast path: takes a packet ingress sent to kCpuPort; false (the caller drops it) when no
  // agent listens or the queue is full (`reason` says which).
  bool Enqueue(Packet* pkt, DropReason* reason) noexcept {
    if (agent_ == nullptr) {
      *reason = DropReason::kNoEgressPort;
      return false;
    }
    if (count_ == ring_.size()) {
      *reason = DropReason::kCpuQueueFull;
      return false;
    }
    ring_[(head_ + count_++) % ring_.size()] = pkt;
    ++counters_.packet_in;
    return true;
  }
  // When Service next has work: the oldest packet-in's due time or the agent's timer; kNever
  // when shared (the pump runs the agent).
  TimeNs NextTime() const noexcept;
  // Hands the agent every packet-in due by `now`, then runs its timer if due.
  void Service(TimeNs now);
  bool attached() const { return agent_ != nullptr; }
  const CpuCounters& counters() const { return counters_; }
  // counter_reset: the flow counts start again from the packets held now (packet_in = held).
  void ResetCounters() { counters_ = CpuCounters{.packet_in = counters_.held()}; }
  // Frees what waits in the queue and what the agent holds (shutdown).
  void FreeAll();

  // Before traffic: this replica's agent is one of several fed by a pump; `primary` for the one
  // whose outputs leave. `now` is the control plane's time until the first RunShared.
  void Share(bool primary, TimeNs now);
  bool shared() const { return shared_; }
  // Shared: moves every packet-in waiting here to `out`, in order; they leave this replica's
  // packet_in count (the primary's RunShared counts them).
  void TakeQueued(std::vector<Packet*>* out);
  // Shared: the control plane's time becomes `now`; the agent is handed `pkts` (the primary
  // takes them; a secondary a copy of each, so secondaries run before the primary), then its
  // timer runs if due.
  void RunShared(std::span<Packet* const> pkts, TimeNs now);

  // CpuPort
  void Attach(CpuAgent* agent) override { agent_ = agent; }
  Packet* NewPacket(std::span<const uint8_t> frame) override;
  void PacketOut(Packet* pkt, PortId port, uint8_t queue) override;
  void ToIngress(Packet* pkt, PortId port) override;
  void Free(Packet* pkt) override;
  void Drop(Packet* pkt, DropReason reason) override;
  TimeNs Now() const override;

 private:
  bool secondary() const { return shared_ && !primary_; }

  Switch& sw_;
  CpuPortConfig config_;
  CpuAgent* agent_ = nullptr;
  std::vector<Packet*> ring_;  // sized at construction: the fast path never allocates
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  CpuCounters counters_;
  bool shared_ = false;
  bool primary_ = true;
  TimeNs shared_now_ = 0;  // shared: the pump's time, the same on every replica
};

}  // namespace swemu
