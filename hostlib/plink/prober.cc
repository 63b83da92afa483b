#include "hostlib/plink/prober.h"

#include <algorithm>
#include <cmath>

namespace swemu {

std::vector<std::vector<std::pair<uint32_t, uint32_t>>> CircleRounds(uint32_t nodes) {
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> rounds;
  if (nodes < 2) return rounds;
  // The circle method: fix slot 0, rotate the others; an odd count adds a bye (m = nodes).
  const uint32_t m = nodes % 2 == 0 ? nodes : nodes + 1;
  std::vector<uint32_t> ring(m);
  for (uint32_t i = 0; i < m; ++i) ring[i] = i;
  for (uint32_t r = 0; r + 1 < m; ++r) {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t i = 0; i < m / 2; ++i) {
      const uint32_t a = ring[i], b = ring[m - 1 - i];
      if (a < nodes && b < nodes) pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(pairs);
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return rounds;
}

PlinkProber::PlinkProber(uint16_t node, std::vector<PlinkNodeAddr> nodes, Transport* transport,
                         ProberOptions options)
    : node_(node),
      nodes_(std::move(nodes)),
      transport_(transport),
      options_(options),
      min_rtt_(nodes_.size(), std::numeric_limits<double>::infinity()),
      frame_(kUdpPayloadOffset + kPlinkHeaderLen),
      rng_(options.seed) {}

void PlinkProber::Send(uint16_t to, PlinkFields f) noexcept {
  const UdpFrameTemplate tmpl(nodes_[node_].mac, nodes_[to].mac, nodes_[node_].ip, nodes_[to].ip,
                              options_.udp_port, kPlinkHeaderLen, 0);
  f.Encode(tmpl.Write(frame_.data()));
  transport_->Send(frame_);
}

void PlinkProber::Probe(uint16_t peer, uint16_t round, TimeNs now) {
  if (gone_ || peer >= nodes_.size() || peer == node_) return;
  peer_ = peer;
  round_ = round;
  sent_ = answered_ = 0;
  next_send_ = now;
  deadline_ = now + options_.timeout_ns + options_.samples * options_.gap_ns;
}

void PlinkProber::Pump(TimeNs now) noexcept {
  while (peer_ >= 0 && sent_ < options_.samples && now >= next_send_) {
    PlinkFields f;
    f.type = PlinkType::kProbeRequest;
    f.sender = node_;
    f.receiver = static_cast<uint16_t>(peer_);
    f.epoch = round_;
    f.seq = ++seq_;
    f.stamp = now;
    Send(static_cast<uint16_t>(peer_), f);
    ++stats_.requests_sent;
    ++sent_;
    next_send_ = now + options_.gap_ns;
  }
}

void PlinkProber::OnTimer(TimeNs now) noexcept {
  while (!pending_.empty() && pending_.begin()->first <= now) {
    Send(pending_.begin()->second.receiver, pending_.begin()->second);
    ++stats_.replies_sent;
    pending_.erase(pending_.begin());
  }
  if (peer_ >= 0 && now >= deadline_) {
    stats_.lost += sent_ - answered_;
    peer_ = -1;
  }
}

TimeNs PlinkProber::NextTimer() const noexcept {
  const TimeNs reply = pending_.empty() ? kNever : pending_.begin()->first;
  if (peer_ < 0) return reply;
  return std::min(reply, sent_ < options_.samples ? std::min(next_send_, deadline_) : deadline_);
}

void PlinkProber::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  if (gone_) return;
  UdpFrameView udp;
  if (!ParseUdpFrame(frame, kPlinkHeaderLen, &udp) || udp.dst_port != options_.udp_port) return;
  const std::optional<PlinkFields> f = PlinkFields::Decode(udp.payload.data(), udp.payload.size());
  if (!f || f->receiver != node_ || f->sender >= nodes_.size()) {
    ++stats_.bad_packets;
    return;
  }
  if (f->type == PlinkType::kProbeRequest) {
    PlinkFields reply = *f;
    reply.type = PlinkType::kProbeReply;
    reply.sender = node_;
    reply.receiver = f->sender;
    // The host's own delay before it answers: its constant plus exponential jitter.
    const double jitter = -options_.jitter_mean_ns * std::log(std::max(rng_.NextUnit(), 1e-300));
    const TimeNs due = now + options_.host_delay_ns + static_cast<TimeNs>(jitter);
    if (due <= now) {
      Send(f->sender, reply);
      ++stats_.replies_sent;
    } else {
      pending_.emplace(due, reply);
    }
  } else if (f->type == PlinkType::kProbeReply && now >= f->stamp) {
    ++stats_.replies_received;
    double& best = min_rtt_[f->sender];
    best = std::min(best, static_cast<double>(now - f->stamp));
    if (peer_ == f->sender && f->epoch == round_ && ++answered_ == options_.samples) peer_ = -1;
  }
}

}  // namespace swemu
