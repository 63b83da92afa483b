#include "hostlib/plink/agg_engine.h"

#include <algorithm>
#include <bit>
#include <string>

#include "pipeline/wire/byte_order.h"

namespace swemu {
namespace {

constexpr TimeNs kMaxRtoNs = 200'000'000;

bool IsContribution(PlinkStep s) {
  return s == PlinkStep::kToLocalMaster || s == PlinkStep::kToGlobalMaster;
}

// Receipts are keyed by (chunk, sender, step).
uint64_t ReceiptKey(uint32_t chunk, uint32_t from, PlinkStep step) {
  return (uint64_t{chunk} << 20) | (uint64_t{from} << 2) | static_cast<uint8_t>(step);
}

}  // namespace

PlinkAggNode::PlinkAggNode(uint16_t node, std::vector<PlinkNodeAddr> nodes, Transport* transport,
                           AggEngineOptions options)
    : node_(node), nodes_(std::move(nodes)), transport_(transport), options_(options) {}

Status PlinkAggNode::AllReduce(const AggPlan& plan, uint16_t epoch, const float* in, float* out,
                               std::size_t n, TimeNs now) {
  SWEMU_RETURN_IF_ERROR(plan.Validate());
  if (plan.nodes != nodes_.size()) {
    return Status::Error("aggengine: the plan has " + std::to_string(plan.nodes) +
                         " nodes, the job " + std::to_string(nodes_.size()));
  }
  if (nodes_.size() > (1u << 18) || node_ >= nodes_.size()) {
    return Status::Error("aggengine: node id out of range");
  }
  if (options_.payload_bytes == 0 || options_.payload_bytes % 4 != 0 ||
      options_.payload_bytes > 8192) {
    return Status::Error("aggengine: payload_bytes must be a multiple of 4 in 4..8192");
  }
  if (active_ && !done()) return Status::Error("aggengine: a reduction is still running");
  if (active_ && static_cast<int16_t>(epoch - epoch_) <= 0) {
    return Status::Error("aggengine: epoch " + std::to_string(epoch) + " is not after " +
                         std::to_string(epoch_));
  }
  if (plan.chunk_bytes.size() >= (1u << 30)) return Status::Error("aggengine: too many chunks");
  uint64_t total = 0;
  chunk_start_.assign(plan.chunk_bytes.size(), 0);
  for (std::size_t c = 0; c < plan.chunk_bytes.size(); ++c) {
    const uint64_t b = plan.chunk_bytes[c];
    if (b % 4 != 0 || b > 0xFFFFFFFFull) {
      return Status::Error("aggengine: chunk " + std::to_string(c) +
                           " is not a whole number of floats under 4 GiB");
    }
    chunk_start_[c] = total;
    total += b;
  }
  if (total != 4 * static_cast<uint64_t>(n)) {
    return Status::Error("aggengine: the plan's chunks cover " + std::to_string(total) +
                         " bytes, the buffer " + std::to_string(4 * static_cast<uint64_t>(n)));
  }
  if (n > 0 && (in == nullptr || out == nullptr)) return Status::Error("aggengine: no buffer");

  plan_ = plan;
  active_ = true;
  finished_ = false;
  epoch_ = epoch;
  in_ = in;
  out_ = out;
  receipts_.clear();
  results_missing_ = 0;
  unacked_ = 0;
  in_network_ = 0;
  flows_.assign(nodes_.size(), Flow{});
  const RttEstimatorOptions rtt =
      UncappedEstimateRtt(options_.initial_rto_ns, options_.min_rto_ns, kMaxRtoNs);
  for (Flow& f : flows_) {
    f.window = options_.initial_window;
    f.rtt = RttEstimator(rtt);
  }
  now_ = now;
  report_ = AggNodeReport{};
  report_.start_ns = now;
  report_.sent_to.assign(nodes_.size(), 0);
  report_.received_from.assign(nodes_.size(), 0);
  report_.send_busy_ns.assign(nodes_.size(), 0);
  members_.assign(plan.groups, {});
  for (uint32_t i = 0; i < plan.nodes; ++i) members_[plan.group_of[i]].push_back(i);

  const uint32_t me = node_;
  const uint32_t g = plan.group_of[me];
  chunks_.assign(plan.chunk_bytes.size(), ChunkState{});
  for (uint32_t c = 0; c < chunks_.size(); ++c) {
    ChunkState& cs = chunks_[c];
    cs.lm = plan.local_master[c][g];
    cs.gm = plan.global_master[c];
    ++results_missing_;
    if (me != cs.lm) {
      Enqueue(cs.lm, c, PlinkStep::kToLocalMaster);
      continue;
    }
    std::copy_n(in + chunk_start_[c] / 4, plan.chunk_bytes[c] / 4, out + chunk_start_[c] / 4);
    cs.contributions_missing = static_cast<uint32_t>(members_[g].size() - 1);
    if (me == cs.gm) cs.contributions_missing += plan.groups - 1;
    if (cs.contributions_missing == 0) ContributionComplete(c);
  }
  MaybeFinish(now);
  return Status::Ok();
}

void PlinkAggNode::Enqueue(uint32_t to, uint32_t chunk, PlinkStep step) {
  const uint64_t bytes = plan_.chunk_bytes[chunk];
  for (uint64_t off = 0; off < bytes; off += options_.payload_bytes) {
    OutPacket p;
    p.chunk = chunk;
    p.offset = static_cast<uint32_t>(off);
    p.len = static_cast<uint32_t>(std::min<uint64_t>(options_.payload_bytes, bytes - off));
    p.step = step;
    Flow& flow = flows_[to];
    if (flow.outstanding++ == 0) flow.busy_since = now_;
    flow.queue.push_back(p);
    ++unacked_;
  }
}

void PlinkAggNode::ContributionComplete(uint32_t chunk) {
  const ChunkState& cs = chunks_[chunk];
  if (cs.gm == node_) {
    TotalReady(chunk);
  } else {
    Enqueue(cs.gm, chunk, PlinkStep::kToGlobalMaster);
  }
}

void PlinkAggNode::TotalReady(uint32_t chunk) {
  ChunkState& cs = chunks_[chunk];
  cs.final = true;
  --results_missing_;
  if (cs.lm != node_) return;
  if (cs.gm == node_) {
    for (uint32_t g = 0; g < plan_.groups; ++g) {
      const uint32_t lm = plan_.local_master[chunk][g];
      if (lm != node_) Enqueue(lm, chunk, PlinkStep::kTotalToLocal);
    }
  }
  for (uint32_t m : members_[plan_.group_of[node_]]) {
    if (m != node_) Enqueue(m, chunk, PlinkStep::kTotalToMember);
  }
}

void PlinkAggNode::Transmit(TimeNs now, uint32_t to, InFlight& f) {
  const OutPacket& p = f.pkt;
  const UdpFrameTemplate tmpl(nodes_[node_].mac, nodes_[to].mac, nodes_[node_].ip, nodes_[to].ip,
                              options_.udp_port, kPlinkHeaderLen + p.len, 0);
  frame_.resize(tmpl.frame_len());
  uint8_t* h = tmpl.Write(frame_.data());
  PlinkFields pf;
  pf.type = PlinkType::kChunk;
  pf.flags = static_cast<uint8_t>(p.step);
  pf.sender = node_;
  pf.receiver = static_cast<uint16_t>(to);
  pf.epoch = epoch_;
  pf.seq = p.chunk;
  pf.offset = p.offset;
  pf.stamp = plan_.chunk_bytes[p.chunk];
  pf.Encode(h);
  // Members send their input; masters the sum they hold (the group sum or the total).
  const float* src =
      (p.step == PlinkStep::kToLocalMaster ? in_ : out_) + (chunk_start_[p.chunk] + p.offset) / 4;
  uint8_t* payload = h + kPlinkHeaderLen;
  for (uint32_t k = 0; k < p.len / 4; ++k) {
    StoreBe32(payload + 4 * k, std::bit_cast<uint32_t>(src[k]));
  }
  transport_->Send(frame_);
  ++stats_.packets_sent;
  ++in_network_;
  Flow& flow = flows_[to];
  f.sent = now;
  f.order = flow.sent_count++;
  flow.timeline.push_back({now, Key(p), f.order});
  if (options_.nic_rate_bps > 0) {
    pacer_.OnSend(now, frame_.size() + 24,  // + FCS, preamble, gap
                  static_cast<double>(options_.nic_rate_bps));
  }
}

bool PlinkAggNode::Sendable(const Flow& f) const {
  return !f.retx.empty() ||
         (!f.queue.empty() && f.inflight.size() < static_cast<std::size_t>(f.window) &&
          in_network_ < options_.node_window);
}

void PlinkAggNode::Pump(TimeNs now) noexcept {
  if (!active_) return;
  const auto n = static_cast<uint32_t>(flows_.size());
  while (options_.nic_rate_bps == 0 || pacer_.Ready(now)) {
    uint32_t k = 0;
    while (k < n && !Sendable(flows_[(rr_ + k) % n])) ++k;
    if (k == n) return;
    const uint32_t to = (rr_ + k) % n;
    rr_ = to + 1;
    Flow& flow = flows_[to];
    if (!flow.retx.empty()) {
      const uint64_t key = flow.retx.front();
      flow.retx.pop_front();
      auto it = flow.inflight.find(key);
      if (it == flow.inflight.end()) continue;  // acknowledged meanwhile
      it->second.retransmitted = true;
      ++stats_.retransmissions;
      Transmit(now, to, it->second);
    } else {
      const OutPacket p = flow.queue.front();
      flow.queue.pop_front();
      InFlight& f = flow.inflight[Key(p)];
      f.pkt = p;
      Transmit(now, to, f);
    }
  }
}

void PlinkAggNode::Clean(Flow& flow) {
  while (!flow.timeline.empty()) {
    const Sent& front = flow.timeline.front();
    auto it = flow.inflight.find(front.key);
    if (it != flow.inflight.end() && it->second.sent != kNever && it->second.order == front.order) {
      return;
    }
    flow.timeline.pop_front();
  }
}

void PlinkAggNode::DetectLosses(TimeNs now, Flow& flow) {
  constexpr uint64_t kDupThreshold = 3;
  bool timeout = false, lost = false;
  for (Clean(flow); !flow.timeline.empty(); Clean(flow)) {
    const Sent& front = flow.timeline.front();
    const bool timed_out = front.at + flow.rtt.rto_ns() <= now;
    if (!timed_out && front.order + kDupThreshold >= flow.highest_acked) break;
    timeout |= timed_out;
    lost = true;
    InFlight& f = flow.inflight.find(front.key)->second;
    f.sent = kNever;
    --in_network_;
    flow.retx.push_back(front.key);
    ++(timed_out ? stats_.timeouts : stats_.fast_retransmits);
    flow.timeline.pop_front();
  }
  if (lost && now >= flow.recovery_until) {
    flow.window = std::max(1.0, flow.window / 2);
    if (timeout) flow.rtt.Backoff();
    flow.recovery_until = now + std::max<TimeNs>(static_cast<TimeNs>(flow.rtt.srtt_ns()), 1);
  }
}

void PlinkAggNode::OnTimer(TimeNs now) noexcept {
  if (!active_) return;
  for (Flow& flow : flows_) DetectLosses(now, flow);
}

TimeNs PlinkAggNode::NextTimer() const noexcept {
  if (!active_) return kNever;
  TimeNs next = kNever;
  bool sendable = false;
  for (const Flow& flow : flows_) {
    if (!flow.timeline.empty()) next = std::min(next, flow.timeline.front().at + flow.rtt.rto_ns());
    sendable |= Sendable(flow);
  }
  if (sendable && options_.nic_rate_bps > 0) next = std::min(next, pacer_.next_ns());
  return next;
}

void PlinkAggNode::SendAck(const PlinkFields& data) {
  PlinkFields a = data;
  a.type = PlinkType::kChunkAck;
  a.sender = node_;
  a.receiver = data.sender;
  const UdpFrameTemplate tmpl(nodes_[node_].mac, nodes_[data.sender].mac, nodes_[node_].ip,
                              nodes_[data.sender].ip, options_.udp_port, kPlinkHeaderLen, 0);
  frame_.resize(tmpl.frame_len());
  a.Encode(tmpl.Write(frame_.data()));
  transport_->Send(frame_);
  ++stats_.acks_sent;
}

void PlinkAggNode::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  UdpFrameView udp;
  if (!ParseUdpFrame(frame, kPlinkHeaderLen, &udp) || udp.dst_port != options_.udp_port) return;
  const std::optional<PlinkFields> f = PlinkFields::Decode(udp.payload.data(), udp.payload.size());
  if (!f || (f->type != PlinkType::kChunk && f->type != PlinkType::kChunkAck)) return;
  if (f->receiver != node_ || f->sender >= nodes_.size() || f->sender == node_ ||
      (f->flags & ~kPlinkStepMask) != 0) {
    ++stats_.bad_packets;
    return;
  }
  now_ = now;
  if (f->type == PlinkType::kChunk) {
    OnChunk(now, *f, udp.payload.subspan(kPlinkHeaderLen));
  } else {
    OnAck(now, *f);
  }
  MaybeFinish(now);
}

void PlinkAggNode::OnChunk(TimeNs now, const PlinkFields& f, std::span<const uint8_t> payload) {
  (void)now;
  const int16_t age = static_cast<int16_t>(f.epoch - epoch_);
  if (!active_ || age > 0) {
    ++stats_.early;
    return;
  }
  if (age < 0) {
    ++stats_.stale;
    SendAck(f);
    return;
  }
  const auto step = static_cast<PlinkStep>(f.flags & kPlinkStepMask);
  const uint32_t c = f.seq;
  if (c >= chunks_.size()) {
    ++stats_.bad_packets;
    return;
  }
  const uint64_t bytes = plan_.chunk_bytes[c];
  const uint32_t len = static_cast<uint32_t>(
      std::min<uint64_t>(options_.payload_bytes, bytes - std::min<uint64_t>(f.offset, bytes)));
  // The packet must be exactly one of the pieces this plan cuts the chunk into, and the step one
  // this node plays with that sender.
  const ChunkState& cs = chunks_[c];
  const uint32_t from = f.sender, me = node_;
  const bool same_group = plan_.group_of[from] == plan_.group_of[me];
  bool role = false;
  switch (step) {
    case PlinkStep::kToLocalMaster:
      role = me == cs.lm && same_group;
      break;
    case PlinkStep::kToGlobalMaster:
      role = me == cs.gm && !same_group && plan_.local_master[c][plan_.group_of[from]] == from;
      break;
    case PlinkStep::kTotalToLocal:
      role = me == cs.lm && me != cs.gm && from == cs.gm;
      break;
    case PlinkStep::kTotalToMember:
      role = me != cs.lm && from == cs.lm;
      break;
  }
  if (!role || f.stamp != bytes || f.offset >= bytes || f.offset % options_.payload_bytes != 0 ||
      payload.size() < len) {
    ++stats_.bad_packets;
    return;
  }
  Receipt& r = receipts_[ReceiptKey(c, from, step)];
  if (r.got.empty()) {
    const uint64_t packets = (bytes + options_.payload_bytes - 1) / options_.payload_bytes;
    r.got.assign(packets, 0);
    r.missing = static_cast<uint32_t>(packets);
  }
  SendAck(f);
  uint8_t& seen = r.got[f.offset / options_.payload_bytes];
  if (seen != 0) {
    ++stats_.duplicates;
    return;
  }
  seen = 1;
  --r.missing;
  report_.received_from[from] += len;
  float* dst = out_ + (chunk_start_[c] + f.offset) / 4;
  const bool add = IsContribution(step);
  for (uint32_t k = 0; k < len / 4; ++k) {
    const float v = std::bit_cast<float>(LoadBe32(payload.data() + 4 * k));
    dst[k] = add ? dst[k] + v : v;
  }
  if (r.missing != 0) return;
  if (add) {
    if (--chunks_[c].contributions_missing == 0) ContributionComplete(c);
  } else {
    TotalReady(c);
  }
}

void PlinkAggNode::OnAck(TimeNs now, const PlinkFields& f) {
  if (!active_ || f.epoch != epoch_ || f.seq >= chunks_.size()) return;
  Flow& flow = flows_[f.sender];
  OutPacket p;
  p.chunk = f.seq;
  p.offset = f.offset;
  p.step = static_cast<PlinkStep>(f.flags & kPlinkStepMask);
  auto it = flow.inflight.find(Key(p));
  if (it == flow.inflight.end()) return;  // a duplicate ack
  const InFlight& done = it->second;
  if (!done.retransmitted && done.sent != kNever && now >= done.sent) {
    flow.rtt.Sample(now - done.sent);  // Karn: first sends only
  }
  report_.sent_to[f.sender] += done.pkt.len;
  if (done.sent != kNever) --in_network_;
  flow.highest_acked = std::max(flow.highest_acked, done.order + 1);
  if (--flow.outstanding == 0) report_.send_busy_ns[f.sender] += now - flow.busy_since;
  flow.inflight.erase(it);
  --unacked_;
  flow.window = std::min<double>(options_.window_packets, flow.window + 1.0 / flow.window);
  DetectLosses(now, flow);
}

void PlinkAggNode::MaybeFinish(TimeNs now) {
  if (!finished_ && done()) {
    finished_ = true;
    report_.finish_ns = now;
  }
}

}  // namespace swemu
