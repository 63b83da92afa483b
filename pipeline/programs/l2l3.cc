#include "pipeline/programs/l2l3.h"

#include "pipeline/parser/header_ops.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"

namespace swemu {
namespace {

MatchKey Key(uint64_t value, unsigned bits) { return KeyPacker().Push(value, bits).key(); }

uint64_t LoadMac(const uint8_t* p) { return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2); }

void StoreMac(uint8_t* p, uint64_t mac) {
  StoreBe16(p, static_cast<uint16_t>(mac >> 32));
  StoreBe32(p + 2, static_cast<uint32_t>(mac));
}

}  // namespace

Status L2l3Program::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> mac_size = opt.GetUint("dmac_size", 16384, 1, 1 << 20);
  Result<uint64_t> lpm_size = opt.GetUint("lpm_size", 8192, 1, 1 << 20);
  Result<uint64_t> nhop_size = opt.GetUint("nexthop_size", 4096, 1, 1 << 16);
  Result<uint64_t> ecmp_groups = opt.GetUint("ecmp_groups", 1024, 1, 1 << 16);
  Result<bool> ecn = opt.GetBool("ecn", true);
  for (const Status& s : {mac_size.status(), lpm_size.status(), nhop_size.status(),
                          ecmp_groups.status(), ecn.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  ecn_ = *ecn;
  const ActionSpec drop{"drop", {}};
  const ActionSpec multicast{"multicast", {{"grp", 16}}};
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
                               {{"forward", {{"port", 16}}}, multicast, drop},
                               static_cast<uint32_t>(*mac_size),
                               "drop",
                               {}},
                              &dmac_));
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
            {"ipv4_lpm",
             MatchKind::kLpm,
             {{"dst_ip", 32}},
             {{"set_nhop", {{"nhop", 16}}}, {"set_ecmp", {{"group", 16}}}, multicast, drop},
             static_cast<uint32_t>(*lpm_size),
             "drop",
             {}},
            &ipv4_lpm_));
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
                               {{"rewrite", {{"dmac", 48}, {"smac", 48}, {"port", 16}}}, drop},
                               static_cast<uint32_t>(*nhop_size),
                               "drop",
                               {}},
                              &nexthop_));
  ctx.builder.Note("egress ECN marking and TTL/MAC rewrites are stateless VLIW actions");
  return Status::Ok();
}

void L2l3Program::Ingress(Packet& pkt) noexcept {
  const uint64_t dst_mac = LoadMac(pkt.data + pkt.hdr.eth);
  if (pkt.hdr.has_ipv4()) {
    uint8_t dscp = pkt.data[pkt.hdr.ipv4 + 1] >> 2;
    LookupResult qos = qos_->Lookup(Key(dscp, 6));
    pkt.meta.queue_id = static_cast<uint8_t>(qos.action->params[0]);
    if (router_mac_->Lookup(Key(dst_mac, 48)).hit) {
      Route(pkt);
      return;
    }
  }
  Switch2(pkt, dst_mac);
}

void L2l3Program::Switch2(Packet& pkt, uint64_t dst_mac) noexcept {
  LookupResult r = dmac_->Lookup(Key(dst_mac, 48));
  switch (r.action->action) {
    case kForward:
      pkt.meta.egress_spec = static_cast<PortId>(r.action->params[0]);
      break;
    case kDmacMulticast:
      pkt.meta.mcast_grp = static_cast<uint16_t>(r.action->params[0]);
      break;
    default:
      pkt.meta.MarkDrop(r.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
  }
}

bool L2l3Program::SelectEcmpMember(Packet& pkt, uint64_t group, uint64_t* nhop) noexcept {
  LookupResult g = ecmp_group_->Lookup(Key(group, 16));
  uint64_t members = g.action->params[0];
  if (!g.hit || g.action->action != 0 || members == 0) {
    pkt.meta.MarkDrop(g.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
    return false;
  }
  uint64_t index = pkt.meta.flow_hash % members;
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

void L2l3Program::Route(Packet& pkt) noexcept {
  uint8_t* ip = pkt.data + pkt.hdr.ipv4;
  if (ip[8] <= 1) {  // TTL
    pkt.meta.MarkDrop(DropReason::kTtlExpired);
    return;
  }
  LookupResult r = ipv4_lpm_->Lookup(Key(LoadBe32(ip + 16), 32));
  uint64_t nhop = 0;
  switch (r.action->action) {
    case kSetNhop:
      nhop = r.action->params[0];
      break;
    case kSetEcmp:
      if (!SelectEcmpMember(pkt, r.action->params[0], &nhop)) return;
      break;
    case kLpmMulticast:
      pkt.meta.mcast_grp = static_cast<uint16_t>(r.action->params[0]);
      DecrementTtl(pkt);
      return;
    default:
      pkt.meta.MarkDrop(r.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
      return;
  }
  LookupResult n = nexthop_->Lookup(Key(nhop, 16));
  if (!n.hit || n.action->action != 0) {
    pkt.meta.MarkDrop(n.hit ? DropReason::kProgramDrop : DropReason::kTableMiss);
    return;
  }
  uint8_t* eth = pkt.data + pkt.hdr.eth;
  StoreMac(eth, n.action->params[0]);
  StoreMac(eth + 6, n.action->params[1]);
  pkt.meta.egress_spec = static_cast<PortId>(n.action->params[2]);
  DecrementTtl(pkt);
}

void L2l3Program::Egress(Packet& pkt) noexcept {
  // MarkEcnCe leaves Not-ECT packets alone and sets meta.ecn_marked when it marks.
  if (ecn_ && pkt.meta.congested) MarkEcnCe(pkt);
}

SWEMU_REGISTER_PROGRAM("l2l3", L2l3Program);

}  // namespace swemu
