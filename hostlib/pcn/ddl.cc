#include "hostlib/pcn/ddl.h"

#include <algorithm>

namespace swemu {

Status DdlWorkerOptions::Validate() const {
  if (burst_bytes == 0) return Status::Error("DDL burst size must be positive");
  if (iterations == 0) return Status::Error("DDL iterations must be at least 1");
  if (uint32_t{first_local_port} + iterations > 65536) {
    return Status::Error("DDL: " + std::to_string(iterations) +
                         " bursts need that many local ports from " +
                         std::to_string(first_local_port));
  }
  return pcn ? announce.Validate() : Status::Ok();
}

DdlWorker::DdlWorker(Transport& transport, const MacAddr& mac, Ipv4Addr ip,
                     const DdlWorkerOptions& options, const EcnTcpOptions& tcp)
    : opt_(options),
      tcp_(transport, mac, ip, tcp),
      announcer_(transport, TcpEnd{mac, ip, options.local_pcn_port}, options.ps, options.announce),
      next_ns_(options.first_ns) {}

void DdlWorker::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  if (!announcer_.OnFrame(now, frame)) tcp_.OnFrame(now, frame);
}

void DdlWorker::OnTimer(TimeNs now) noexcept {
  announcer_.OnTimer(now);
  tcp_.OnTimer(now);
}

TimeNs DdlWorker::NextTimer() const noexcept {
  TimeNs next = std::min(announcer_.NextTimer(), tcp_.NextTimer());
  if (state_ == State::kIdle) next = std::min(next, next_ns_);
  if (state_ == State::kAnnouncing && announcer_.ready()) {
    next = std::min(next, bursts_.back().announced_ns + opt_.min_lead_ns);
  }
  return next;
}

void DdlWorker::Pump(TimeNs now) noexcept {
  Advance(now);
  tcp_.Pump(now);
}

void DdlWorker::StartBurst(TimeNs now) {
  DdlBurst& burst = bursts_.back();
  const auto port = static_cast<uint16_t>(opt_.first_local_port + burst.index);
  sender_ = &tcp_.AddFlow({TcpEnd{opt_.ps.mac, opt_.ps.ip, opt_.ps_data_port}, port, now, kNever,
                           opt_.burst_bytes, opt_.burst_rate_bps});
  state_ = State::kBursting;
}

void DdlWorker::Advance(TimeNs now) {
  for (;;) {
    switch (state_) {
      case State::kIdle: {
        if (now < next_ns_) return;
        DdlBurst& burst = bursts_.emplace_back();
        burst.index = static_cast<uint32_t>(bursts_.size() - 1);
        burst.bytes = opt_.burst_bytes;
        if (opt_.pcn) {
          burst.announced_ns = now;
          announcer_.Announce(now, burst.index, opt_.burst_bytes);
          state_ = State::kAnnouncing;
        } else {
          StartBurst(now);
        }
        break;
      }
      case State::kAnnouncing:
        if (!announcer_.ready() || now < bursts_.back().announced_ns + opt_.min_lead_ns) return;
        bursts_.back().ack_ns = announcer_.ack_ns();
        StartBurst(now);
        break;
      case State::kBursting: {
        DdlBurst& burst = bursts_.back();
        burst.start_ns = sender_->stats().started_ns;
        if (!sender_->done()) return;
        burst.done_ns = sender_->stats().done_ns;
        burst.retransmits = sender_->stats().retransmits;
        burst.ecn_reductions = sender_->stats().ecn_reductions;
        sender_ = nullptr;
        if (bursts_.size() >= opt_.iterations) {
          state_ = State::kFinished;
          return;
        }
        next_ns_ = burst.done_ns + opt_.idle_ns;
        state_ = State::kIdle;
        break;
      }
      case State::kFinished:
        return;
    }
  }
}

}  // namespace swemu
