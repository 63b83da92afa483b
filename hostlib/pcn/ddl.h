#pragma once
// A distributed-deep-learning traffic pattern in the spirit of the paper's DDLgen (section 4):
// workers that alternate a gradient burst toward the PS with a period of network silence, each
// burst announced with a PCN-START first (or not, for the run without PCN), and the PS that
// answers the STARTs and receives the bursts and any background flows. The bursts are model
// TCP flows that react to ECN (hostlib/common/ecn_tcp.h), one new connection per burst as
// iperf3's runs are; as Endpoints they run in the virtual-time engine or on a raw-frame port.
// Real kernel TCP bursts are tools/pcn's `swemu-pcn ddl`.
#include <cstdint>
#include <vector>

#include "hostlib/common/tcp_host.h"
#include "hostlib/pcn/handshake.h"

namespace swemu {

struct DdlWorkerOptions {
  uint64_t burst_bytes = 1'000'000;
  uint64_t burst_rate_bps = 0;  // the burst's sending rate limit (iperf3 -b); 0: the NIC's
  uint32_t iterations = 6;
  TimeNs first_ns = 0;              // the first burst's START (or data, without PCN)
  TimeNs idle_ns = 700'000'000;     // from a burst's last ACK to the next START
  TcpEnd ps;                        // MAC, IP and PCN port of the PS
  uint16_t ps_data_port = 5000;     // the PS's TCP port for bursts
  uint16_t local_pcn_port = kPcnDefaultUdpPort;
  uint16_t first_local_port = 50000;  // burst i comes from this port + i
  bool pcn = true;
  PcnAnnouncerOptions announce;
  // The burst starts no earlier than this after its START, ACK or not (0: as the ACK comes).
  // Kernel TCP and iperf3 spend round trips on handshakes before data flows; model flows have
  // none, so an experiment that compares with the paper gives them this lead instead.
  TimeNs min_lead_ns = 0;

  Status Validate() const;
};

struct DdlBurst {
  uint32_t index = 0;
  TimeNs announced_ns = kNever;  // START sent (kNever without PCN)
  TimeNs ack_ns = kNever;        // ACK received (kNever: none, or without PCN)
  TimeNs start_ns = kNever;      // first data segment sent
  TimeNs done_ns = kNever;       // last byte acknowledged
  uint64_t bytes = 0;
  uint64_t retransmits = 0;
  uint64_t ecn_reductions = 0;
};

class DdlWorker final : public Endpoint {
 public:
  DdlWorker(Transport& transport, const MacAddr& mac, Ipv4Addr ip, const DdlWorkerOptions& options,
            const EcnTcpOptions& tcp);

  const std::vector<DdlBurst>& bursts() const { return bursts_; }
  bool finished() const { return state_ == State::kFinished; }
  const PcnAnnouncer& announcer() const { return announcer_; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  enum class State : uint8_t { kIdle, kAnnouncing, kBursting, kFinished };
  void Advance(TimeNs now);
  void StartBurst(TimeNs now);

  DdlWorkerOptions opt_;
  TcpHost tcp_;
  PcnAnnouncer announcer_;
  State state_ = State::kIdle;
  TimeNs next_ns_;
  EcnTcpSender* sender_ = nullptr;
  std::vector<DdlBurst> bursts_;
};

// The PS: answers STARTs on its PCN port and receives bursts and background flows (every
// port it listens on).
class DdlPs final : public Endpoint {
 public:
  DdlPs(Transport& transport, const MacAddr& mac, Ipv4Addr ip, uint16_t pcn_port,
        const EcnTcpOptions& tcp)
      : responder_(transport, TcpEnd{mac, ip, pcn_port}), tcp_(transport, mac, ip, tcp) {}
  EcnTcpSink& Listen(uint16_t port) { return tcp_.Listen(port); }
  const EcnTcpSink* sink(uint16_t port) const { return tcp_.sink(port); }
  const PcnResponder& responder() const { return responder_; }

  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override {
    if (!responder_.OnFrame(frame)) tcp_.OnFrame(now, frame);
  }
  void OnTimer(TimeNs now) noexcept override { tcp_.OnTimer(now); }
  TimeNs NextTimer() const noexcept override { return tcp_.NextTimer(); }
  void Pump(TimeNs now) noexcept override { tcp_.Pump(now); }

 private:
  PcnResponder responder_;
  TcpHost tcp_;
};

}  // namespace swemu
