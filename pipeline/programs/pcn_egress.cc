// pcn egress: scope, the announced bursts, the port's job lanes and the marking decision
// (pipeline/programs/pcn.h). Packets go through the stages one after another, each touching
// each array once, in order, as they follow one another through the egress pipeline.
#include "pipeline/core/hash.h"
#include "pipeline/parser/header_ops.h"
#include "pipeline/parser/parser.h"
#include "pipeline/programs/pcn.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/pcn.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

// pcn_pending's index for (egress port, worker, job): a 64-bit mix, wrapped by the array.
uint32_t PendingIndex(PortId port, uint32_t worker, uint32_t job) noexcept {
  uint64_t x = (uint64_t{worker} << 32) | (uint64_t{port} << 8) | job;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Bytes after the L4 header (after the IPv4 header for other protocols), by the IPv4 total
// length: what the sender put in the datagram, whether or not the parser kept all of it.
uint32_t L4Payload(const Packet& pkt, const Ipv4Header& ip) noexcept {
  uint32_t headers = ip.HeaderLen();
  if (pkt.hdr.has_udp()) {
    headers += kUdpHeaderLen;
  } else if (pkt.hdr.has_tcp()) {
    headers += HeaderAt<TcpHeader>(pkt.data + pkt.hdr.tcp)->HeaderLen();
  }
  const uint32_t total = ip.TotalLength();
  return total > headers ? total - headers : 0;
}

}  // namespace

uint32_t PcnProgram::ShardKey(const Packet& pkt) const noexcept {
  if (!pkt.hdr.has_ipv4()) return FlowHash(pkt);
  const auto* ip = HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4);
  return static_cast<uint32_t>(Mix64(uint64_t{ip->SrcAddr()} * 0x9E3779B97F4A7C15ULL));
}

void PcnProgram::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

// l2l3, then the control queue for PCN datagrams (a stateless match on the parsed headers).
void PcnProgram::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  l2l3_.IngressBurst(pkts, n);
  if (control_queue_ < 0) return;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (!pkt.hdr.has_udp() || (pkt.data[pkt.hdr.ipv4 + 1] & (kPcnStart | kPcnAck)) == 0) continue;
    const auto* udp = HeaderAt<UdpHeader>(pkt.data + pkt.hdr.udp);
    if (udp->DstPort() == udp_port_ || udp->SrcPort() == udp_port_) {
      pkt.meta.queue_id = static_cast<uint8_t>(control_queue_);
    }
  }
}

void PcnProgram::Egress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  EgressBurst(&one, 1);
}

void PcnProgram::EgressBurst(Packet** pkts, uint32_t n) noexcept {
  l2l3_.EgressBurst(pkts, n);  // CE against the TM's byte thresholds, when any are set
  Classified cls[kMaxBurst];
  Classify(pkts, n, cls);
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (pkt.meta.dropped()) continue;
    const uint32_t now_ms = pcn::MsOf(pkt.meta.enq_ts + pkt.meta.deq_timedelta);
    last_ms_ = now_ms;
    // Stage 1: the worker's announced burst.
    pcn::LaneOp op = pcn::LaneOp::kNone;
    if (cls[i].kind != Kind::kOther) {
      const Ipv4Header& ip = *HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4);
      const uint32_t worker = ip.SrcAddr();
      const uint32_t index = PendingIndex(pkt.meta.egress_port, worker, cls[i].job);
      const Kind kind = cls[i].kind;
      const uint32_t timeout = timeout_ms_;
      pcn::PendingEvent event = pcn::PendingEvent::kNone;
      if (!pending_->Rmw<false>(pkt, index, [&](std::span<uint64_t> cell) {
            const pcn::Pending now = pcn::Pending::Unpack(cell[0]);
            const pcn::PendingResult r =
                kind == Kind::kStart ? pcn::OnStart(now, worker, cls[i].job, now_ms, timeout)
                                     : pcn::OnData(now, worker, cls[i].job, now_ms);
            cell[0] = r.cell.Pack();
            op = r.op;
            event = r.event;
          })) {
        continue;
      }
      switch (event) {
        case pcn::PendingEvent::kNew:
          ++counters_.starts;
          break;
        case pcn::PendingEvent::kEvicted:
          ++counters_.starts;
          ++counters_.pending_evicted;
          break;
        case pcn::PendingEvent::kRepeat:
          ++counters_.starts_repeated;
          break;
        case pcn::PendingEvent::kArrived:
          ++counters_.bursts_arrived;
          break;
        case pcn::PendingEvent::kExpired:
          ++counters_.pending_expired;
          break;
        case pcn::PendingEvent::kNone:
          break;
      }
    }
    // Stages 2..: the port's job lanes, and the threshold they leave.
    const uint32_t threshold = PortStage(pkt, op, cls[i], now_ms);
    if (pkt.meta.dropped()) continue;
    // ECN rewrite: ECT packets only (MarkEcnCe leaves Not-ECT alone), once.
    if (pkt.meta.enq_qdepth >= threshold && !pkt.meta.ecn_marked && MarkEcnCe(pkt) &&
        pkt.meta.ecn_marked) {
      const PortId port = pkt.meta.egress_port;
      const bool announced = port < initial_.size() && threshold < initial_[port];
      ++(announced ? counters_.marked_pcn : counters_.marked_initial);
    }
  }
}

uint32_t PcnProgram::PortStage(Packet& pkt, pcn::LaneOp op, const Classified& c,
                               uint32_t now_ms) noexcept {
  const PortId port = pkt.meta.egress_port;
  const uint32_t initial = port < initial_.size() ? initial_[port] : UINT32_MAX;
  uint32_t active = initial;
  const uint32_t timeout = timeout_ms_;
  uint64_t timeouts = 0;
  port_->Rmw<false>(pkt, port, [&](std::span<uint64_t> lanes) {
    for (uint32_t j = 0; j < lanes.size(); ++j) {
      bool timed_out = false;
      const pcn::Lane lane =
          pcn::ApplyLane(pcn::Lane::Unpack(lanes[j]), j == c.job ? op : pcn::LaneOp::kNone,
                         c.threshold, now_ms, timeout, &timed_out);
      lanes[j] = lane.Pack();
      timeouts += timed_out;
      if (lane.count != 0 && lane.threshold < active) active = lane.threshold;
    }
  });
  counters_.timeouts += timeouts;
  return active;
}

void PcnProgram::Classify(Packet** pkts, uint32_t n, Classified* out) noexcept {
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  uint32_t idx[kMaxBurst];
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    out[i] = Classified{};
    Packet& pkt = *pkts[i];
    if (!pkt.hdr.has_ipv4() || pkt.meta.dropped()) continue;
    const uint8_t* ip = pkt.data + pkt.hdr.ipv4;
    // ACKs change no state; they are only counted (the PS answers from the PCN port).
    if (pkt.hdr.has_udp() && (ip[1] & (kPcnStart | kPcnAck)) == kPcnAck &&
        HeaderAt<UdpHeader>(pkt.data + pkt.hdr.udp)->SrcPort() == udp_port_) {
      ++counters_.acks;
    }
    idx[m] = i;
    keys[m++] = KeyPacker().Push(LoadBe32(ip + 16), 32).key();
  }
  if (m == 0 || jobs_table_->MissAllIfEmpty(m) != nullptr) return;
  jobs_table_->LookupBatch(keys, res, m);
  for (uint32_t k = 0; k < m; ++k) {
    if (!res[k].hit || res[k].action->action != 0) continue;
    const uint64_t slot = res[k].action->params[0];
    if (slot >= jobs_) continue;  // a slot beyond the lanes: not scoped (table_add allows 8 bits)
    Classified& c = out[idx[k]];
    c.job = static_cast<uint8_t>(slot);
    c.kind = KindOf(*pkts[idx[k]], c);
  }
}

PcnProgram::Kind PcnProgram::KindOf(Packet& pkt, Classified& c) noexcept {
  const Ipv4Header& ip = *HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4);
  if (pkt.hdr.has_udp() && HeaderAt<UdpHeader>(pkt.data + pkt.hdr.udp)->DstPort() == udp_port_) {
    const PcnTos tos = PcnTos::Decode(ip.tos);
    if (!tos.start) return Kind::kOther;
    if (tos.ack) {
      ++counters_.starts_with_ack;
      return Kind::kOther;
    }
    const PortId port = pkt.meta.egress_port;
    if (port >= initial_.size() || tos.threshold >= initial_[port]) {
      ++counters_.starts_ignored;
      return Kind::kOther;
    }
    c.threshold = static_cast<uint8_t>(tos.threshold);
    return Kind::kStart;
  }
  return L4Payload(pkt, ip) >= burst_min_payload_ ? Kind::kData : Kind::kOther;
}

}  // namespace swemu
