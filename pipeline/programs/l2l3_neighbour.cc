#include "pipeline/programs/l2l3_neighbour.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "pipeline/wire/address.h"
#include "pipeline/wire/arp.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/ipv6.h"

namespace swemu {
namespace {

const DropReason kUnresolved = RegisterDropReason("neighbour_unresolved");
const DropReason kQueueFull = RegisterDropReason("neighbour_queue_full");
const DropReason kTableFull = RegisterDropReason("neighbour_table_full");
const DropReason kNotForCpu = RegisterDropReason("cpu_not_handled");

constexpr uint8_t kIcmpEchoRequest = 8;
constexpr uint8_t kIcmpEchoReply = 0;

MatchKey Key(uint64_t value, unsigned bits) { return KeyPacker().Push(value, bits).key(); }

// An IPv6 address as ipv6_lpm's and nd_trap's 128-bit key.
MatchKey Key(const Ipv6Addr& ip) { return KeyPacker().Push(ip.hi, 64).Push(ip.lo, 64).key(); }

void StoreMac(uint8_t* p, uint64_t mac) { StoreBe48(p, mac); }

ActionCall Call(uint16_t action, std::initializer_list<uint64_t> params) {
  ActionCall call;
  call.action = action;
  for (uint64_t p : params) call.params[call.num_params++] = p;
  return call;
}

TableEntry Entry(MatchKey key, uint8_t prefix_len, ActionCall action) {
  TableEntry entry;
  entry.key = key;
  entry.prefix_len = prefix_len;
  entry.action = action;
  return entry;
}

}  // namespace

L2l3Neighbours::L2l3Neighbours(CpuPort& cpu, std::vector<RouterInterface> rifs,
                               const Tables& tables, const NeighbourTimers& timers,
                               uint32_t capacity)
    : cpu_(cpu),
      rifs_(std::move(rifs)),
      t_(tables),
      table_(timers, capacity),
      slot_ip_(capacity),
      slot_nexthop_(capacity, kNoEntry) {}

Result<std::unique_ptr<L2l3Neighbours>> L2l3Neighbours::Create(ProgramContext& ctx,
                                                               const Tables& tables,
                                                               const NeighbourTimers& timers,
                                                               uint32_t capacity) {
  std::unique_ptr<L2l3Neighbours> agent(
      new L2l3Neighbours(ctx.cpu, ctx.interfaces, tables, timers, capacity));
  SWEMU_RETURN_IF_ERROR(agent->ProgramInterfaces());
  SWEMU_RETURN_IF_ERROR(agent->AddCommands(ctx.commands));
  ctx.cpu.Attach(agent.get());
  return agent;
}

Status L2l3Neighbours::ProgramInterfaces() {
  std::map<uint64_t, bool> macs;
  for (const RouterInterface& rif : rifs_) {
    if (macs.emplace(rif.mac, true).second) {
      Result<EntryHandle> h = t_.router_mac->Add(Entry(Key(rif.mac, 48), 0, Call(0, {})));
      if (!h.ok()) return h.status();
    }
    Result<EntryHandle> h = t_.arp_trap->Add(Entry(Key(rif.ipv4, 32), 0, Call(0, {})));
    if (!h.ok()) return h.status();
    h = t_.ipv4_lpm->Add(Entry(Key(rif.Subnet(), 32), rif.prefix_len, Call(t_.lpm_glean, {})));
    if (!h.ok()) return h.status();
    h = t_.ipv4_lpm->Add(Entry(Key(rif.ipv4, 32), 32, Call(t_.lpm_to_cpu, {})));
    if (!h.ok()) return h.status();
    SWEMU_RETURN_IF_ERROR(ProgramIpv6(rif));
  }
  return Status::Ok();
}

// The IPv6 half of an interface: nd_trap and ipv6_lpm's /128 => to_cpu for the gateway and the
// link-local address (interfaces sharing a MAC share it), the subnet's glean route.
Status L2l3Neighbours::ProgramIpv6(const RouterInterface& rif) {
  if (!rif.HasIpv6()) return Status::Ok();
  const Ipv6Addr link_local = rif.LinkLocal();
  for (const Ipv6Addr& ip : {rif.ipv6, link_local}) {
    if (ip == link_local && t_.nd_trap->Lookup(Key(ip)).hit) continue;
    Result<EntryHandle> h = t_.nd_trap->Add(Entry(Key(ip), 0, Call(0, {})));
    if (!h.ok()) return h.status();
    h = t_.ipv6_lpm->Add(Entry(Key(ip), 128, Call(t_.lpm_to_cpu, {})));
    if (!h.ok()) return h.status();
  }
  const Ipv6Prefix subnet = rif.Subnet6();
  return t_.ipv6_lpm->Add(Entry(Key(subnet.addr), subnet.len, Call(t_.lpm_glean, {}))).status();
}

void L2l3Neighbours::OnPacketIn(Packet* pkt, TimeNs now) {
  switch (pkt->meta.user[0]) {
    case kPuntArp:
      return OnArp(pkt, now);
    case kPuntGlean:
      if (pkt->hdr.has_ipv6()) {
        return Hold(pkt, HeaderAt<Ipv6Header>(pkt->data + pkt->hdr.ipv6)->DstAddr(), now);
      }
      return Hold(pkt, Ipv6Addr::MappedIpv4(LoadBe32(pkt->data + pkt->hdr.ipv4 + 16)), now);
    case kPuntNexthop: {
      const uint32_t slot = pkt->meta.user[1] - t_.nhop_base;
      if (slot < slot_ip_.size() && slot_nexthop_[slot] != kNoEntry) {
        return Hold(pkt, slot_ip_[slot], now);
      }
      return cpu_.Drop(pkt, kNotForCpu);
    }
    case kPuntLocal:
      return OnLocal(pkt, now);
    case kPuntNd:
      return OnNd(pkt, now);
    default:
      return cpu_.Drop(pkt, kNotForCpu);
  }
}

int L2l3Neighbours::RifOf(const Ipv6Addr& ip) const {
  for (std::size_t i = 0; i < rifs_.size(); ++i) {
    if (ip.IsMappedIpv4() ? rifs_[i].Contains(ip.Ipv4()) : rifs_[i].Contains6(ip)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int L2l3Neighbours::RifOfPort(PortId port) const {
  for (std::size_t i = 0; i < rifs_.size(); ++i) {
    const std::vector<PortId>& ports = rifs_[i].ports;
    if (std::find(ports.begin(), ports.end(), port) != ports.end()) return static_cast<int>(i);
  }
  return -1;
}

// Requests for a gateway are answered in place (the frame turned round, its VLAN tags kept);
// requests and replies both say where their sender is.
void L2l3Neighbours::OnArp(Packet* pkt, TimeNs now) {
  uint8_t* arp = pkt->data + pkt->hdr.payload;
  std::optional<ArpFields> f = ArpFields::Decode(arp, pkt->len - pkt->hdr.payload);
  const int rif = f ? RifOf(Ipv6Addr::MappedIpv4(f->sender_ip)) : -1;
  if (rif < 0 || f->target_ip != rifs_[rif].ipv4 || f->sender_ip == f->target_ip) {
    return cpu_.Drop(pkt, kNotForCpu);
  }
  std::vector<NeighbourEvent> events;
  table_.Confirm(Ipv6Addr::MappedIpv4(f->sender_ip), static_cast<uint32_t>(rif), f->sender_mac,
                 pkt->meta.ingress_port, now, true, &events);
  Apply(events);
  if (f->oper != kArpRequest) return cpu_.Free(pkt);
  const RouterInterface& r = rifs_[rif];
  ArpFields reply{kArpReply, r.mac, r.ipv4, f->sender_mac, f->sender_ip};
  reply.Encode(arp);
  StoreMac(pkt->data, f->sender_mac);
  StoreMac(pkt->data + 6, r.mac);
  ++stats_.arp_replies_sent;
  cpu_.PacketOut(pkt, pkt->meta.ingress_port, 0);
}

// ICMP echo to a gateway address: the reply goes back through the switch's own routing (its
// destination MAC is the router MAC), so it reaches a host of any subnet.
void L2l3Neighbours::OnLocal(Packet* pkt, TimeNs now) {
  if (pkt->hdr.has_ipv6()) return OnLocal6(pkt, now);
  uint8_t* ip = pkt->data + pkt->hdr.ipv4;
  auto* iph = HeaderAt<Ipv4Header>(ip);
  const uint32_t ihl = iph->HeaderLen();
  const uint32_t total = iph->TotalLength();
  uint8_t* icmp = ip + ihl;
  if (pkt->hdr.ip_proto != kIpProtoIcmp || total < ihl + 8 || icmp[0] != kIcmpEchoRequest ||
      (iph->FlagsFragmentOffset() & 0x3FFF) != 0) {
    return cpu_.Drop(pkt, kNotForCpu);
  }
  const int rif = RifOf(Ipv6Addr::MappedIpv4(LoadBe32(ip + 12)));
  const uint64_t router_mac = rif >= 0 ? rifs_[rif].mac : rifs_.front().mac;
  const uint32_t src = LoadBe32(ip + 12);
  iph->SetSrcAddr(LoadBe32(ip + 16));
  iph->SetDstAddr(src);
  ip[8] = 65;  // TTL 64 after the switch's own routing takes one
  iph->SetHeaderChecksum(0);
  iph->SetHeaderChecksum(Ipv4HeaderChecksum(ip, ihl));
  icmp[0] = kIcmpEchoReply;
  StoreBe16(icmp + 2, 0);
  StoreBe16(icmp + 2, InternetChecksum(icmp, total - ihl));
  StoreMac(pkt->data, router_mac);
  ++stats_.echo_replies_sent;
  cpu_.ToIngress(pkt, pkt->meta.ingress_port);
}

void L2l3Neighbours::Hold(Packet* pkt, const Ipv6Addr& ip, TimeNs now) {
  const int rif = RifOf(ip);
  // Neither the gateway nor the subnet's broadcast (IPv4) or own (IPv6) address is a neighbour.
  if (rif < 0 || (ip.IsMappedIpv4() ? ip.Ipv4() == rifs_[rif].ipv4 ||
                                          (ip.Ipv4() | rifs_[rif].Mask()) == ~uint32_t{0}
                                    : ip == rifs_[rif].ipv6 || ip == rifs_[rif].Subnet6().addr)) {
    return cpu_.Drop(pkt, kNotForCpu);
  }
  std::vector<NeighbourEvent> events;
  Neighbour* n = table_.Resolve(ip, static_cast<uint32_t>(rif), now, &events);
  if (n == nullptr) return cpu_.Drop(pkt, kTableFull);
  ProgramSlot(*n);
  if (n->state == NeighbourState::kReachable || n->state == NeighbourState::kStale) {
    cpu_.ToIngress(pkt, pkt->meta.ingress_port);  // resolved while it waited for the CPU
  } else if (!table_.Hold(*n, pkt)) {
    cpu_.Drop(pkt, kQueueFull);
  }
  Apply(events);
}

void L2l3Neighbours::ProgramSlot(const Neighbour& n) {
  if (slot_nexthop_[n.slot] != kNoEntry && slot_ip_[n.slot] == n.ip) return;
  slot_ip_[n.slot] = n.ip;
  const uint64_t nhop = t_.nhop_base + n.slot;
  // Both entries are the agent's own (its nexthop range, a host of its subnet): neither can
  // exist, except a /32 a startup script wrote, which stays as written.
  Result<EntryHandle> h = t_.nexthop->Add(Entry(Key(nhop, 16), 0, Call(t_.nhop_to_cpu, {})));
  if (!h.ok()) return;
  slot_nexthop_[n.slot] = *h;
  if (n.ip.IsMappedIpv4()) {
    (void)t_.ipv4_lpm->Add(Entry(Key(n.ip.Ipv4(), 32), 32, Call(t_.lpm_set_nhop, {nhop})));
  } else {
    (void)t_.ipv6_lpm->Add(Entry(Key(n.ip), 128, Call(t_.lpm_set_nhop, {nhop})));
  }
}

void L2l3Neighbours::Apply(std::vector<NeighbourEvent>& events) {
  for (NeighbourEvent& e : events) {
    switch (e.kind) {
      case NeighbourEvent::kRequest:
        SendRequest(e);
        break;
      case NeighbourEvent::kResolved: {
        if (const Neighbour* n = table_.Find(e.ip)) ProgramSlot(*n);
        (void)t_.nexthop->Modify(slot_nexthop_[e.slot],
                                 Call(t_.nhop_rewrite, {e.mac, rifs_[e.rif].mac, e.port}));
        for (Packet* pkt : e.pending) cpu_.ToIngress(pkt, pkt->meta.ingress_port);
        break;
      }
      case NeighbourEvent::kFailed:
        if (slot_nexthop_[e.slot] != kNoEntry) {
          (void)t_.nexthop->Modify(slot_nexthop_[e.slot], Call(t_.nhop_to_cpu, {}));
        }
        for (Packet* pkt : e.pending) cpu_.Drop(pkt, kUnresolved);
        break;
    }
  }
  events.clear();
}

void L2l3Neighbours::SendRequest(const NeighbourEvent& e) {
  if (!e.ip.IsMappedIpv4()) return SendSolicitation(e);
  const RouterInterface& rif = rifs_[e.rif];
  uint8_t frame[kEthernetMinFrameLen] = {};
  StoreMac(frame, e.mac != 0 ? e.mac : 0xFFFF'FFFF'FFFFULL);
  StoreMac(frame + 6, rif.mac);
  StoreBe16(frame + 12, kEtherTypeArp);
  ArpFields{kArpRequest, rif.mac, rif.ipv4, 0, e.ip.Ipv4()}.Encode(frame + kEthernetHeaderLen);
  // A re-probe goes where the neighbour was; a first request out of every port of the subnet.
  std::vector<PortId> ports = e.mac != 0 ? std::vector<PortId>{e.port} : rif.ports;
  for (PortId port : ports) {
    Packet* pkt = cpu_.NewPacket(frame);
    if (pkt == nullptr) return;  // the pool is empty: the retry timer tries again
    ++stats_.arp_requests_sent;
    cpu_.PacketOut(pkt, port, 0);
  }
}

void L2l3Neighbours::OnTimer(TimeNs now) {
  std::vector<NeighbourEvent> events;
  table_.Expire(now, &events);
  Apply(events);
}

void L2l3Neighbours::OnMacAt(uint64_t mac, PortId port) {
  const int rif = RifOfPort(port);
  if (rif < 0) return;
  std::vector<NeighbourEvent> events;
  table_.MoveMac(mac, static_cast<uint32_t>(rif), port, &events);
  Apply(events);
}

void L2l3Neighbours::FreeHeld() {
  for (Packet* pkt : table_.TakeAllPending()) cpu_.Free(pkt);
}

}  // namespace swemu
