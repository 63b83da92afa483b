#include "pipeline/programs/l2l3_learn.h"

#include <algorithm>
#include <cstdio>

#include "pipeline/control/units.h"
#include "pipeline/programs/l2l3.h"
#include "pipeline/wire/address.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

MatchKey MacKey(uint64_t mac) { return KeyPacker().Push(mac, 48).key(); }

uint64_t LoadMac(const uint8_t* p) { return (uint64_t{LoadBe16(p)} << 32) | LoadBe32(p + 2); }

ActionCall Call(uint16_t action, std::initializer_list<uint64_t> params) {
  ActionCall call;
  call.action = action;
  for (uint64_t p : params) call.params[call.num_params++] = p;
  return call;
}

// Digest words: the MAC, then the VLAN and the ingress port.
DigestRecord LearnRecord(TimeNs time, uint64_t mac, uint16_t vlan, PortId port) {
  return {time, {mac, (uint64_t{vlan} << 16) | port}};
}

}  // namespace

Result<std::vector<uint16_t>> ParsePortVlans(std::string_view text, uint16_t num_ports) {
  std::vector<uint16_t> vlans(num_ports, 1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t colon = part.find(':');
    const std::size_t dash = part.find('-');
    const auto bad = [&](const std::string& why) {
      return Status::Error("program.port_vlan: \"" + std::string(part) + "\": " + why +
                           " (want PORT:VLAN or FIRST-LAST:VLAN, comma-separated)");
    };
    if (colon == std::string_view::npos) return bad("no ':'");
    const std::string_view ports = part.substr(0, colon);
    Result<uint64_t> first = ParseUint(ports.substr(0, std::min(dash, colon)), 0, num_ports - 1);
    Result<uint64_t> last = dash < colon ? ParseUint(ports.substr(dash + 1), 0, num_ports - 1)
                                         : first;
    Result<uint64_t> vlan = ParseUint(part.substr(colon + 1), 1, 4094);
    if (!first.ok()) return bad("port " + first.message());
    if (!last.ok()) return bad("port " + last.message());
    if (!vlan.ok()) return bad("VLAN " + vlan.message());
    if (*last < *first) return bad("the range runs backwards");
    for (uint64_t p = *first; p <= *last; ++p) vlans[p] = static_cast<uint16_t>(*vlan);
  }
  return vlans;
}

MacLearning::MacLearning(MacLearningConfig config, MatchTable* dmac, MatchTable* smac)
    : config_(std::move(config)), dmac_(dmac), smac_(smac), channel_(config_.digest) {}

Result<std::unique_ptr<MacLearning>> MacLearning::Load(ProgramContext& ctx, MatchTable* dmac) {
  const ProgramOptions& opt = ctx.options;
  Result<bool> on = opt.GetBool("learning", false);
  if (!on.ok()) return on.status();
  if (!*on) return std::unique_ptr<MacLearning>();
  const uint64_t max_base = 65536 - ctx.num_ports;
  Result<uint64_t> age = opt.GetUint("mac_age", 300, 0, 1'000'000);
  Result<uint64_t> limit = opt.GetUint("mac_limit", std::min<uint64_t>(4096, dmac->size()), 1,
                                       dmac->size());
  Result<std::string> vlans = opt.GetString("port_vlan", "");
  Result<uint64_t> base = opt.GetUint("flood_group_base", std::min<uint64_t>(0xFF00, max_base),
                                      1, max_base);
  Result<uint64_t> rate = opt.GetUint("digest_rate", 10000, 0, 1'000'000'000);
  Result<uint64_t> latency = opt.GetUint("digest_latency_us", 10, 0, 1'000'000);
  for (const Status& s : {age.status(), limit.status(), vlans.status(), base.status(),
                          rate.status(), latency.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  MacLearningConfig config;
  Result<std::vector<uint16_t>> port_vlan = ParsePortVlans(*vlans, ctx.num_ports);
  if (!port_vlan.ok()) return port_vlan.status();
  config.port_vlan = std::move(*port_vlan);
  config.age_ns = *age * 1'000'000'000ull;
  config.limit = static_cast<uint32_t>(*limit);
  config.flood_group_base = static_cast<uint16_t>(*base);
  config.digest.max_per_second = *rate;
  config.digest.latency_ns = *latency * 1000;
  const ActionParam port{"port", 16, ctx.num_ports};
  Result<MatchTable*> smac = ctx.builder.AddTable(
      Gress::kIngress, 0,
      {"smac",
       MatchKind::kExact,
       {{"src_mac", 48}},
       {{"learned", {port}}, {"stale", {port}}, {"pinned", {}}, {"learn", {}}},
       dmac->size(),
       "learn",
       {}});
  if (!smac.ok()) return smac.status();
  std::unique_ptr<MacLearning> learning(new MacLearning(std::move(config), dmac, *smac));
  SWEMU_RETURN_IF_ERROR(learning->AddFloodGroups(ctx.tm, ctx.num_ports));
  MacLearning* self = learning.get();
  SWEMU_RETURN_IF_ERROR(ctx.commands.Add(
      {"show mac", "", "the MAC table: learned and static entries, their age, the counters", 0, 0,
       [self](CommandArgs) -> Result<std::string> { return self->Show(self->now_); }}));
  ctx.builder.Note("learning: digests to the control plane; flood groups " +
                   std::to_string(*base) + "..." + std::to_string(*base + ctx.num_ports - 1));
  return learning;
}

Status MacLearning::AddFloodGroups(TrafficManager& tm, uint16_t num_ports) {
  for (PortId p = 0; p < num_ports; ++p) {
    const auto grp = static_cast<uint16_t>(config_.flood_group_base + p);
    Result<uint16_t> created = tm.McGroupCreate(grp);
    if (!created.ok()) return created.status();
    std::vector<PortId> ports;
    for (PortId q = 0; q < num_ports; ++q) {
      if (q != p && config_.port_vlan[q] == config_.port_vlan[p]) ports.push_back(q);
    }
    if (ports.empty()) continue;
    Result<uint32_t> node = tm.McNodeCreate(0, std::move(ports));
    if (!node.ok()) return node.status();
    SWEMU_RETURN_IF_ERROR(tm.McNodeAssociate(grp, *node));
  }
  return Status::Ok();
}

void MacLearning::Learn(Packet** pkts, uint32_t n) noexcept {
  BurstScratch<MatchKey> keys;
  BurstScratch<LookupResult> res;
  Packet* live[kMaxBurst];
  uint64_t macs[kMaxBurst];
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    const uint16_t vlan = config_.port_vlan[pkt.meta.ingress_port];
    if (pkt.hdr.vlan_count > 0) {
      const uint16_t vid = HeaderAt<VlanTag>(pkt.data + pkt.hdr.vlan[0])->Vid();
      if (vid != 0 && vid != vlan) {  // 0: a priority tag, in the port's VLAN
        pkt.meta.MarkDrop(kVlanFilter);
        continue;
      }
    }
    const uint64_t src = LoadMac(pkt.data + pkt.hdr.eth + 6);
    if ((src >> 40) & 1) continue;  // a group address is never a source to learn
    live[m] = &pkt;
    macs[m] = src;
    keys[m++] = MacKey(src);
  }
  if (m == 0) return;
  smac_->LookupBatch(keys, res, m);
  for (uint32_t i = 0; i < m; ++i) {
    const Packet& pkt = *live[i];
    const PortId in = pkt.meta.ingress_port;
    const ActionCall& a = *res[i].action;
    const bool known_here = res[i].hit && (a.action == kPinned ||
                                           (a.action == kLearned && a.params[0] == in));
    if (known_here) continue;
    channel_.Emit(LearnRecord(pkt.meta.ingress_ts, macs[i], config_.port_vlan[in], in));
  }
}

void MacLearning::Forward(Packet& pkt, const LookupResult& dmac) noexcept {
  Metadata& meta = pkt.meta;
  const PortId in = meta.ingress_port;
  if (dmac.hit) {
    const ActionCall& a = *dmac.action;
    if (a.action == L2l3Program::kDmacMulticast) {
      meta.mcast_grp = static_cast<uint16_t>(a.params[0]);
      return;
    }
    if (a.action != L2l3Program::kForward) {
      meta.MarkDrop(DropReason::kProgramDrop);
      return;
    }
    const auto out = static_cast<PortId>(a.params[0]);
    if (out == in) {
      meta.MarkDrop(kSamePort);
      return;
    }
    if (config_.port_vlan[out] == config_.port_vlan[in]) {
      meta.egress_spec = out;
      return;
    }
    // The host is in another VLAN: unknown in this one.
  }
  meta.mcast_grp = static_cast<uint16_t>(config_.flood_group_base + in);
}

// A MAC the control plane did not learn but dmac holds was written by hand: static. Its smac
// entry is pinned, so its packets send no more digests.
bool MacLearning::IsStatic(uint64_t mac) {
  if (!dmac_->Lookup(MacKey(mac)).hit) return false;
  if (!smac_->Lookup(MacKey(mac)).hit) {
    TableEntry pin;
    pin.key = MacKey(mac);
    pin.action = Call(kPinned, {});
    (void)smac_->Add(pin);  // full: the MAC keeps sending digests, which change nothing
  }
  return true;
}

void MacLearning::Install(uint64_t mac, const Entry& at, Entry* entry) {
  *entry = at;
  TableEntry forward;
  forward.key = MacKey(mac);
  forward.action = Call(L2l3Program::kForward, {at.port});
  Result<EntryHandle> d = dmac_->Add(forward);
  if (!d.ok()) return;
  TableEntry learned;
  learned.key = MacKey(mac);
  learned.action = Call(kLearned, {at.port});
  Result<EntryHandle> s = smac_->Add(learned);
  if (!s.ok()) {
    (void)dmac_->Delete(*d);
    return;
  }
  entry->dmac = *d;
  entry->smac = *s;
}

void MacLearning::Remove(std::map<uint64_t, Entry>::iterator it) {
  (void)dmac_->Delete(it->second.dmac);
  (void)smac_->Delete(it->second.smac);
  entries_.erase(it);
}

void MacLearning::Apply(const DigestRecord& record) {
  const uint64_t mac = record.words[0];
  const auto vlan = static_cast<uint16_t>(record.words[1] >> 16);
  const auto port = static_cast<PortId>(record.words[1] & 0xFFFF);
  auto it = entries_.find(mac);
  if (it == entries_.end()) {
    if (IsStatic(mac)) return;
    if (entries_.size() >= config_.limit) {
      ++counters_.refused_full;
      return;
    }
    Entry entry;
    Install(mac, {vlan, port, record.time, false}, &entry);
    if (entry.dmac == kNoEntry) {  // a table full of static entries
      ++counters_.refused_full;
      return;
    }
    entries_.emplace(mac, entry);
    ++counters_.learned;
    if (config_.age_ns != 0) next_check_ = std::min(next_check_, record.time + config_.age_ns / 2);
    if (mac_at_) mac_at_(mac, port);
    return;
  }
  Entry& entry = it->second;
  if (entry.port != port || entry.vlan != vlan) {
    if (record.time < entry.last_seen) return;  // older news than what the entry holds
    (void)dmac_->Modify(entry.dmac, Call(L2l3Program::kForward, {port}));
    (void)smac_->Modify(entry.smac, Call(kLearned, {port}));
    entry.port = port;
    entry.vlan = vlan;
    ++counters_.moved;
    if (mac_at_) mac_at_(mac, port);
  } else {
    if (entry.stale) (void)smac_->Modify(entry.smac, Call(kLearned, {port}));
    ++counters_.refreshed;
  }
  entry.stale = false;
  entry.last_seen = std::max(entry.last_seen, record.time);
}

void MacLearning::OnDigests(std::span<const DigestRecord> records, TimeNs now) {
  now_ = std::max(now_, now);
  for (const DigestRecord& record : records) Apply(record);
}

// An entry not seen for half of mac_age turns stale (its packets send digests again); one not
// seen for mac_age is removed. Only the sweep when the earliest of those instants is due.
void MacLearning::OnControlTime(TimeNs now) {
  now_ = std::max(now_, now);
  if (config_.age_ns == 0 || now < next_check_) return;
  next_check_ = kNever;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    const TimeNs age = now >= entry.last_seen ? now - entry.last_seen : 0;
    if (age >= config_.age_ns) {
      ++counters_.aged;
      Remove(it++);
      continue;
    }
    if (!entry.stale && age >= config_.age_ns / 2) {
      (void)smac_->Modify(entry.smac, Call(kStale, {entry.port}));
      entry.stale = true;
    }
    next_check_ = std::min(next_check_, entry.last_seen + (entry.stale ? config_.age_ns
                                                                       : config_.age_ns / 2));
    ++it;
  }
}

void MacLearning::WriteCounters(JsonWriter& json) const {
  json.BeginObject("learning")
      .Uint("entries", entries_.size())
      .Uint("mac_limit", config_.limit)
      .Uint("learned", counters_.learned)
      .Uint("refreshed", counters_.refreshed)
      .Uint("moved", counters_.moved)
      .Uint("aged", counters_.aged)
      .Uint("refused_full", counters_.refused_full)
      .EndObject();
}

void L2l3Program::WriteControlPlaneCounters(JsonWriter& json) const {
  if (learning_) learning_->WriteCounters(json);
}

std::string MacLearning::Show(TimeNs now) const {
  char line[128];
  std::string out = "mac                vlan  port  age_s     type\n";
  auto row = [&](uint64_t mac, uint16_t vlan, PortId port, const char* age, const char* type) {
    std::snprintf(line, sizeof line, "%-17s  %-4u  %-4u  %-8s  %s\n",
                  FormatMac(MacAddr::FromU64(mac)).c_str(), unsigned{vlan}, unsigned{port}, age,
                  type);
    out += line;
  };
  for (const auto& [mac, entry] : entries_) {
    char age[32];
    const TimeNs ns = now >= entry.last_seen ? now - entry.last_seen : 0;
    std::snprintf(age, sizeof age, "%.1f", static_cast<double>(ns) / 1e9);
    row(mac, entry.vlan, entry.port, age, entry.stale ? "dynamic (stale)" : "dynamic");
  }
  for (const auto& [handle, e] : dmac_->Dump()) {
    const uint64_t mac = e.key.w[0] & 0xFFFF'FFFF'FFFFULL;
    if (entries_.count(mac) != 0 || e.action.action != L2l3Program::kForward) continue;
    const auto port = static_cast<PortId>(e.action.params[0]);
    row(mac, config_.port_vlan[port], port, "-", "static");
  }
  out += "learned " + std::to_string(counters_.learned) + ", refreshed " +
         std::to_string(counters_.refreshed) + ", moved " + std::to_string(counters_.moved) +
         ", aged " + std::to_string(counters_.aged) + ", refused (table full) " +
         std::to_string(counters_.refused_full) + "; entries " +
         std::to_string(entries_.size()) + " of mac_limit " + std::to_string(config_.limit) +
         ", mac_age " + std::to_string(config_.age_ns / 1'000'000'000ull) + " s\n";
  return out;
}

}  // namespace swemu
