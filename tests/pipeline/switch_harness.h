#pragma once
// A switch on a virtual clock for tests: send frames, drain every port in time order, and check
// that no packet buffer leaks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"

namespace swemu::testing {

struct SentFrame {
  PortId port;
  TimeNs time;
  std::vector<uint8_t> bytes;
  bool operator==(const SentFrame&) const = default;
};

class SwitchHarness {
 public:
  explicit SwitchHarness(SwitchConfig config, std::size_t pool_size = 8192) : pool_(pool_size) {
    Result<std::unique_ptr<Switch>> sw = Switch::Create(std::move(config), pool_, clock_);
    if (!sw.ok()) {
      error_ = sw.message();
      return;
    }
    sw_ = std::move(*sw);
  }
  ~SwitchHarness() {
    sw_.reset();
    EXPECT_EQ(pool_.InUse(), 0u) << "packet buffers leaked";
  }

  bool ok() const { return sw_ != nullptr; }
  const std::string& error() const { return error_; }
  Switch& sw() { return *sw_; }
  VirtualClock& clock() { return clock_; }
  HeapPacketPool& pool() { return pool_; }

  Result<std::string> Cmd(const std::string& line) { return sw_->commands().Execute(line); }
  void MustCmd(const std::string& line) {
    Result<std::string> r = Cmd(line);
    ASSERT_TRUE(r.ok()) << line << ": " << r.message();
  }

  void Send(PortId port, const std::vector<uint8_t>& frame) {
    Packet* pkt = pool_.FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
    ASSERT_NE(pkt, nullptr);
    sw_->Receive(pkt, port);
  }

  void SendBurst(PortId port, const std::vector<std::vector<uint8_t>>& frames) {
    std::vector<Packet*> pkts;
    for (const std::vector<uint8_t>& frame : frames) {
      pkts.push_back(pool_.FromBytes(frame.data(), static_cast<uint32_t>(frame.size())));
      ASSERT_NE(pkts.back(), nullptr);
    }
    sw_->ReceiveBurst(pkts.data(), static_cast<uint32_t>(pkts.size()), port);
  }

  // Advances the clock to each port's next transmit time and collects every frame, in time order.
  std::vector<SentFrame> Drain() {
    std::vector<SentFrame> out;
    for (;;) {
      TimeNs next = kNever;
      PortId next_port = 0;
      for (PortId p = 0; p < sw_->num_ports(); ++p) {
        TimeNs t = sw_->NextTransmitTime(p);
        if (t < next) {
          next = t;
          next_port = p;
        }
      }
      if (next == kNever) return out;
      if (next > clock_.NowNs()) clock_.Set(next);
      while (Packet* pkt = sw_->Transmit(next_port)) {
        out.push_back(
            {next_port, clock_.NowNs(), std::vector<uint8_t>(pkt->data, pkt->data + pkt->len)});
        pool_.Free(pkt);
      }
    }
  }

  // Runs the switch up to `until`: its control plane (CPU port) when due, its ports when they
  // may send; returns every frame sent, in time order.
  std::vector<SentFrame> RunCpuUntil(TimeNs until) {
    std::vector<SentFrame> out;
    for (;;) {
      std::vector<SentFrame> sent = Drain();
      out.insert(out.end(), sent.begin(), sent.end());
      const TimeNs cpu = sw_->NextCpuTime();
      if (cpu > until) break;
      if (cpu > clock_.NowNs()) clock_.Set(cpu);
      sw_->ServiceCpu();
    }
    if (until > clock_.NowNs()) clock_.Set(until);
    return out;
  }

 private:
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> sw_;
  std::string error_;
};

// One register cell (lane) as the control plane reads it.
inline uint64_t Cell(SwitchHarness& h, const std::string& reg, uint32_t index, uint16_t lane = 0) {
  RegisterArray* r = h.sw().resources().FindRegister(reg);
  EXPECT_NE(r, nullptr) << reg;
  if (r == nullptr) return 0;
  Result<uint64_t> v = r->Read(index, lane);
  EXPECT_TRUE(v.ok()) << v.message();
  return v.ok() ? *v : 0;
}

// Every packet in (received, copied by multicast, made by the control plane) is accounted for:
// forwarded, consumed, dropped, still queued, held by the control plane or freed by it.
inline void ExpectConservation(SwitchHarness& h) {
  const Switch& sw = h.sw();
  uint64_t rx = 0;
  uint64_t tx = 0;
  for (const PortCounters& p : sw.counters().ports) {
    rx += p.rx_packets;
    tx += p.tx_packets;
  }
  const CpuCounters& cpu = sw.cpu().counters();
  EXPECT_EQ(rx + sw.tm().multicast_copies() + cpu.created,
            tx + sw.counters().program.consumed + sw.TotalDrops() + sw.tm().TotalQueued() +
                cpu.held() + cpu.freed);
}

}  // namespace swemu::testing
