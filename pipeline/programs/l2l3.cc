#include "pipeline/programs/l2l3.h"

#include "pipeline/parser/header_ops.h"
#include "pipeline/programs/l2l3_neighbour.h"
#include "pipeline/programs/l2l3_learn.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"

namespace swemu {
namespace {

MatchKey Key(uint64_t value, unsigned bits) { return KeyPacker().Push(value, bits).key(); }

uint64_t LoadMac(const uint8_t* p) { return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2); }

// The DSCP of an IPv4 or IPv6 packet: the TOS byte's or the traffic class's top six bits.
uint8_t DscpOf(const Packet& pkt) noexcept {
  if (pkt.hdr.has_ipv4()) return pkt.data[pkt.hdr.ipv4 + 1] >> 2;
  return HeaderAt<Ipv6Header>(pkt.data + pkt.hdr.ipv6)->TrafficClass() >> 2;
}

// An IPv6 destination as ipv6_lpm's 128-bit key.
MatchKey Ipv6DstKey(const Packet& pkt) noexcept {
  const uint8_t* dst = HeaderAt<Ipv6Header>(pkt.data + pkt.hdr.ipv6)->dst_addr;
  return MatchKey{{LoadBe64(dst + 8), LoadBe64(dst)}};
}

// qos's set_queue action (its only one, also the default).
uint8_t QueueOf(const ActionCall& set_queue) { return static_cast<uint8_t>(set_queue.params[0]); }

void StoreMac(uint8_t* p, uint64_t mac) {
  StoreBe16(p, static_cast<uint16_t>(mac >> 32));
  StoreBe32(p + 2, static_cast<uint32_t>(mac));
}

}  // namespace

L2l3Program::L2l3Program() = default;
L2l3Program::~L2l3Program() = default;

DigestChannel* L2l3Program::digest_channel() noexcept {
  return learning_ ? learning_->channel() : nullptr;
}

void L2l3Program::OnDigests(std::span<const DigestRecord> records, TimeNs now) {
  if (learning_) learning_->OnDigests(records, now);
}

void L2l3Program::OnControlTime(TimeNs now) {
  if (learning_) learning_->OnControlTime(now);
}

Status L2l3Program::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> mac_size = opt.GetUint("dmac_size", 16384, 1, 1 << 20);
  Result<uint64_t> lpm_size = opt.GetUint("lpm_size", 8192, 1, 1 << 20);
  Result<uint64_t> lpm6_size = opt.GetUint("lpm6_size", 4096, 1, 1 << 20);
  Result<uint64_t> nhop_size = opt.GetUint("nexthop_size", 4096, 1, 1 << 16);
  Result<uint64_t> ecmp_groups = opt.GetUint("ecmp_groups", 1024, 1, 1 << 16);
  Result<bool> ecn = opt.GetBool("ecn", true);
  for (const Status& s : {mac_size.status(), lpm_size.status(), lpm6_size.status(),
                          nhop_size.status(), ecmp_groups.status(), ecn.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  ecn_ = *ecn;
  const ActionSpec drop{"drop", {}};
  const ActionSpec multicast{"multicast", {{"grp", 16}}};
  // ipv4_lpm's and ipv6_lpm's actions, in LpmAction's order.
  const std::vector<ActionSpec> lpm_actions = {
      {"set_nhop", {{"nhop", 16}}}, {"set_ecmp", {{"group", 16}}}, multicast, drop, {"glean", {}},
      {"to_cpu", {}}};
  auto table = [&](Gress g, int stage, TableSpec spec, MatchTable** out) -> Status {
    Result<MatchTable*> t = ctx.builder.AddTable(g, stage, spec);
    if (!t.ok()) return t.status();
    *out = *t;
    return Status::Ok();
  };
  const Gress in = Gress::kIngress;
  SWEMU_RETURN_IF_ERROR(table(in, 0,
                              {"dmac",
                               MatchKind::kExact,
                               {{"dst_mac", 48}},
                               {{"forward", {{"port", 16, ctx.num_ports}}}, multicast, drop},
                               static_cast<uint32_t>(*mac_size),
                               "drop",
                               {}},
                              &dmac_));
  SWEMU_RETURN_IF_ERROR(LoadLearning(ctx));
  SWEMU_RETURN_IF_ERROR(table(in, 0,
                              {"router_mac",
                               MatchKind::kExact,
                               {{"dst_mac", 48}},
                               {{"route", {}}, {"no_route", {}}},
                               64,
                               "no_route",
                               {}},
                              &router_mac_));
  SWEMU_RETURN_IF_ERROR(table(in, 0,
                              {"qos",
                               MatchKind::kTernary,
                               {{"dscp", 6}},
                               {{"set_queue", {{"queue", 3}}}},
                               64,
                               "set_queue",
                               {0}},
                              &qos_));
  SWEMU_RETURN_IF_ERROR(
      table(in, 1,
            {"ipv4_lpm", MatchKind::kLpm, {{"dst_ip", 32}}, lpm_actions,
             static_cast<uint32_t>(*lpm_size), "drop", {}},
            &ipv4_lpm_));
  SWEMU_RETURN_IF_ERROR(
      table(in, 1,
            {"ipv6_lpm", MatchKind::kLpm, {{"dst_ip6", 128}}, lpm_actions,
             static_cast<uint32_t>(*lpm6_size), "drop", {}},
            &ipv6_lpm_));
  SWEMU_RETURN_IF_ERROR(table(in, 2,
                              {"ecmp_group",
                               MatchKind::kExact,
                               {{"group", 16}},
                               {{"ecmp_select", {{"members", 16}, {"mode", 1}}}, drop},
                               static_cast<uint32_t>(*ecmp_groups),
                               "drop",
                               {}},
                              &ecmp_group_));
  Result<RegisterArray*> rr =
      ctx.builder.AddRegister(in, 3, {"ecmp_rr", static_cast<uint32_t>(*ecmp_groups), 16, 1});
  if (!rr.ok()) return rr.status();
  ecmp_rr_ = *rr;
  SWEMU_RETURN_IF_ERROR(table(in, 4,
                              {"ecmp_member",
                               MatchKind::kExact,
                               {{"group", 16}, {"index", 16}},
                               {{"set_nhop", {{"nhop", 16}}}, drop},
                               static_cast<uint32_t>(*ecmp_groups * 16),
                               "drop",
                               {}},
                              &ecmp_member_));
  SWEMU_RETURN_IF_ERROR(table(in, 5,
                              {"nexthop",
                               MatchKind::kExact,
                               {{"nhop", 16}},
                               {{"rewrite", {{"dmac", 48}, {"smac", 48}, {"port", 16, ctx.num_ports}}},
                                drop,
                                {"to_cpu", {}}},
                               static_cast<uint32_t>(*nhop_size),
                               "drop",
                               {}},
                              &nexthop_));
  ctx.builder.Note("egress ECN marking and TTL/MAC rewrites are stateless VLIW actions");
  return LoadNeighbours(ctx, static_cast<uint32_t>(*nhop_size));
}

// learning = on: MAC learning on digests, over the dmac table Load added.
Status L2l3Program::LoadLearning(ProgramContext& ctx) {
  Result<std::unique_ptr<MacLearning>> learning = MacLearning::Load(ctx, dmac_);
  if (!learning.ok()) return learning.status();
  learning_ = std::move(*learning);
  return Status::Ok();
}

// Router interfaces ([interface.N]): their control plane (ARP, the neighbour table) on the
// tables Load added.
Status L2l3Program::LoadNeighbours(ProgramContext& ctx, uint32_t nhop_size) {
  if (ctx.interfaces.empty()) return Status::Ok();
  Result<std::unique_ptr<L2l3Neighbours>> neighbours = L2l3Neighbours::Load(
      ctx,
      {router_mac_, ipv4_lpm_, nexthop_, nullptr, ipv6_lpm_, nullptr, kSetNhop, kGlean, kLpmToCpu,
       kRewrite, kNhopToCpu, 0},
      nhop_size);
  if (!neighbours.ok()) return neighbours.status();
  neighbours_ = std::move(*neighbours);
  arp_trap_ = neighbours_->arp_trap();
  nd_trap_ = neighbours_->nd_trap();
  if (learning_) {  // a neighbour's port is where the MAC table has its MAC
    L2l3Neighbours* agent = neighbours_.get();
    learning_->OnMacAt([agent](uint64_t mac, PortId port) { agent->OnMacAt(mac, port); });
  }
  return Status::Ok();
}

void L2l3Program::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

// Each stage runs over the whole burst with one batched lookup, so the table reads of 32
// packets overlap (the tables prefetch) instead of waiting on one cache miss after another.
void L2l3Program::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  Packet* ip[kMaxBurst];
  Packet* bridged[kMaxBurst];
  uint32_t n_ip = 0;
  uint32_t n_bridged = 0;
  if (learning_) learning_->Learn(pkts, n);
  // Stage 0: DSCP -> queue and router MAC for IPv4 and IPv6; everything else is bridged. A table the
  // control plane left empty gives the whole burst its default action without keys
  // (MissAllIfEmpty): a pure L2 switch reads no DSCP and no MAC here.
  for (uint32_t i = 0; i < n; ++i) {
    if (pkts[i]->hdr.has_ipv4() || pkts[i]->hdr.has_ipv6()) {
      ip[n_ip++] = pkts[i];
    } else {
      bridged[n_bridged++] = pkts[i];
    }
  }
  if (n_ip != 0) {
    if (const ActionCall* all = qos_->MissAllIfEmpty(n_ip)) {
      for (uint32_t i = 0; i < n_ip; ++i) ip[i]->meta.queue_id = QueueOf(*all);
    } else {
      for (uint32_t i = 0; i < n_ip; ++i) keys[i] = Key(DscpOf(*ip[i]), 6);
      qos_->LookupBatch(keys, res, n_ip);
      for (uint32_t i = 0; i < n_ip; ++i) ip[i]->meta.queue_id = QueueOf(*res[i].action);
    }
    uint32_t n_routed = 0;
    if (router_mac_->MissAllIfEmpty(n_ip) != nullptr) {
      if (n_bridged == 0) {  // an all-IP burst with no router MAC: bridged as it is
        Bridge(ip, n_ip);
        return;
      }
      for (uint32_t i = 0; i < n_ip; ++i) bridged[n_bridged++] = ip[i];
    } else {
      for (uint32_t i = 0; i < n_ip; ++i) keys[i] = Key(LoadMac(ip[i]->data + ip[i]->hdr.eth), 48);
      router_mac_->LookupBatch(keys, res, n_ip);
      for (uint32_t i = 0; i < n_ip; ++i) {
        if (res[i].hit) {
          ip[n_routed++] = ip[i];
        } else {
          bridged[n_bridged++] = ip[i];
        }
      }
    }
    Route(ip, n_routed);
  }
  if (arp_trap_ != nullptr) n_bridged = TrapArp(*arp_trap_, bridged, n_bridged);
  if (nd_trap_ != nullptr) n_bridged = TrapNd(*nd_trap_, bridged, n_bridged);
  Bridge(bridged, n_bridged);
}

void L2l3Program::Bridge(Packet** pkts, uint32_t n) noexcept {
  if (n == 0) return;
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  for (uint32_t i = 0; i < n; ++i) keys[i] = Key(LoadMac(pkts[i]->data + pkts[i]->hdr.eth), 48);
  dmac_->LookupBatch(keys, res, n);
  if (learning_) {
    for (uint32_t i = 0; i < n; ++i) learning_->Forward(*pkts[i], res[i]);
    return;
  }
  for (uint32_t i = 0; i < n; ++i) {
    Metadata& meta = pkts[i]->meta;
    const ActionCall& action = *res[i].action;
    switch (action.action) {
      case kForward:
        meta.egress_spec = static_cast<PortId>(action.params[0]);
        break;
      case kDmacMulticast:
        meta.mcast_grp = static_cast<uint16_t>(action.params[0]);
        break;
      default:
        meta.MarkDrop(res[i].hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
    }
  }
}

bool L2l3Program::SelectEcmpMember(Packet& pkt, uint64_t group, uint64_t* nhop) noexcept {
  LookupResult g = ecmp_group_->Lookup(Key(group, 16));
  uint64_t members = g.action->params[0];
  if (!g.hit || g.action->action != 0 || members == 0) {
    pkt.meta.MarkDrop(g.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
    return false;
  }
  uint64_t index = FlowHash(pkt) % members;
  if (g.action->params[1] == kPerPacket) {
    // Round robin per group: one read-modify-write of the group's counter per packet.
    if (!ecmp_rr_->Rmw(pkt, static_cast<uint32_t>(group), [&](std::span<uint64_t> cell) {
          index = cell[0] % members;
          cell[0] = cell[0] + 1;
        })) {
      return false;
    }
  }
  LookupResult m = ecmp_member_->Lookup(KeyPacker().Push(group, 16).Push(index, 16).key());
  if (!m.hit || m.action->action != 0) {
    pkt.meta.MarkDrop(m.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
    return false;
  }
  *nhop = m.action->params[0];
  return true;
}

// Stage 1: TTL (hop limit) expiry, then ipv4_lpm for IPv4 and ipv6_lpm for IPv6. Fills
// live[i] and res[i] for the packets left, IPv4 first; returns how many.
uint32_t L2l3Program::LookupRoutes(Packet** pkts, uint32_t n, Packet** live,
                                   LookupResult* res) noexcept {
  BurstScratch<MatchKey> keys;
  Packet* v6[kMaxBurst];
  uint32_t m = 0;
  uint32_t n6 = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (!pkt.hdr.has_ipv4()) {
      if (HeaderAt<Ipv6Header>(pkt.data + pkt.hdr.ipv6)->hop_limit <= 1) {
        pkt.meta.MarkDrop(DropReason::kHopLimitExpired);
      } else {
        v6[n6++] = &pkt;
      }
      continue;
    }
    const uint8_t* ip = pkt.data + pkt.hdr.ipv4;
    if (ip[8] <= 1) {  // TTL
      pkt.meta.MarkDrop(DropReason::kTtlExpired);
      continue;
    }
    live[m] = &pkt;
    keys[m++] = Key(LoadBe32(ip + 16), 32);
  }
  ipv4_lpm_->LookupBatch(keys, res, m);
  if (n6 == 0) return m;
  for (uint32_t i = 0; i < n6; ++i) {
    live[m + i] = v6[i];
    keys[i] = Ipv6DstKey(*v6[i]);
  }
  ipv6_lpm_->LookupBatch(keys, res + m, n6);
  return m + n6;
}

// Stages 1-5 for routed packets: LPM, ECMP selection, next-hop rewrite and TTL.
void L2l3Program::Route(Packet** pkts, uint32_t n) noexcept {
  if (n == 0) return;
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  Packet* live[kMaxBurst];
  const uint32_t m = LookupRoutes(pkts, n, live, res);
  uint32_t n_nhop = 0;
  for (uint32_t i = 0; i < m; ++i) {
    Packet& pkt = *live[i];
    const ActionCall& action = *res[i].action;
    uint64_t nhop = 0;
    switch (action.action) {
      case kSetNhop:
        nhop = action.params[0];
        break;
      case kSetEcmp:
        if (!SelectEcmpMember(pkt, action.params[0], &nhop)) continue;
        break;
      case kLpmMulticast:
        pkt.meta.mcast_grp = static_cast<uint16_t>(action.params[0]);
        DecrementTtl(pkt);
        continue;
      case kGlean:
        PuntToCpu(pkt, kPuntGlean);
        continue;
      case kLpmToCpu:
        PuntToCpu(pkt, kPuntLocal);
        continue;
      default:
        pkt.meta.MarkDrop(res[i].hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
        continue;
    }
    live[n_nhop] = &pkt;
    keys[n_nhop++] = Key(nhop, 16);
  }
  nexthop_->LookupBatch(keys, res, n_nhop);
  for (uint32_t i = 0; i < n_nhop; ++i) {
    Packet& pkt = *live[i];
    if (!res[i].hit || res[i].action->action != kRewrite) {
      if (res[i].hit && res[i].action->action == kNhopToCpu) {
        PuntToCpu(pkt, kPuntNexthop, static_cast<uint32_t>(keys[i].w[0]));
        continue;
      }
      pkt.meta.MarkDrop(res[i].hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
      continue;
    }
    const ActionCall& rewrite = *res[i].action;
    uint8_t* eth = pkt.data + pkt.hdr.eth;
    StoreMac(eth, rewrite.params[0]);
    StoreMac(eth + 6, rewrite.params[1]);
    pkt.meta.egress_spec = static_cast<PortId>(rewrite.params[2]);
    DecrementTtl(pkt);
  }
}

namespace {

// MarkEcnCe leaves Not-ECT packets alone and sets meta.ecn_marked when it marks.
void MarkIfCongested(Packet& pkt) noexcept {
  if (pkt.meta.congested) MarkEcnCe(pkt);
}

}  // namespace

void L2l3Program::Egress(Packet& pkt) noexcept {
  if (ecn_) MarkIfCongested(pkt);
}

void L2l3Program::EgressBurst(Packet** pkts, uint32_t n) noexcept {
  if (!ecn_) return;  // read once: the packets' stores could alias it
  for (uint32_t i = 0; i < n; ++i) MarkIfCongested(*pkts[i]);
}

SWEMU_REGISTER_PROGRAM("l2l3", L2l3Program);

}  // namespace swemu
