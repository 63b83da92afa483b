// goat: configuration, resources, control commands and shard key. The per-packet ingress stages
// are in goat_ingress.cc.
#include "pipeline/programs/goat.h"

#include "pipeline/core/hash.h"
#include "pipeline/parser/header_ops.h"
#include "pipeline/program/stats_command.h"

namespace swemu {
namespace {

constexpr uint32_t kBytesBeforeElements = kGoatHeaderOffset + kGoatHeaderLen;

// Several replicas: {"claimed": N, ..., "slots_in_use": N, "slots": SIZE, "elements": E}. Each
// slot lives on the replica that owns its shard, so the counts add up; the last two are
// configuration.
AnswerMerge MergeStats() { return MergeEachLine(SumAllButLast(2)); }

}  // namespace

Status GoatProgram::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> port = opt.GetUint("udp_port", kGoatDefaultUdpPort, 1, 65535);
  Result<uint64_t> slots = opt.GetUint("slots", kGoatDefaultSlots, 1, 1 << 22);
  Result<uint64_t> elements = opt.GetUint("elements", kGoatDefaultElements, 1, 65535);
  Result<uint64_t> entries = opt.GetUint("entries", 4096, 1, 1 << 20);
  for (const Status& s : {port.status(), slots.status(), elements.status(), entries.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  parse_depth_ = ctx.parser.config().parse_depth;
  const uint32_t max_elements =
      parse_depth_ > kBytesBeforeElements ? (parse_depth_ - kBytesBeforeElements) / 4 : 0;
  if (*elements > max_elements) {
    return Status::Error("elements " + std::to_string(*elements) + ": Eth+IPv4+UDP+GOAT (" +
                         std::to_string(kBytesBeforeElements) + " B) + 4 B per element exceed " +
                         "the parse depth of " + std::to_string(parse_depth_) + " B; at most " +
                         std::to_string(max_elements) + " elements fit");
  }
  slots_ = static_cast<uint32_t>(*slots);
  elements_ = static_cast<uint16_t>(*elements);
  SWEMU_RETURN_IF_ERROR(l2l3_.Load(ctx));
  SWEMU_RETURN_IF_ERROR(ctx.parser.AddUdpApp(static_cast<uint16_t>(*port), kGoatHeaderLen, kAppId));
  SWEMU_RETURN_IF_ERROR(DeclareResources(ctx, *entries));
  return AddCommands(ctx.commands);
}

// Stage 0: goat_node and goat_route beside l2l3's tables. Then the slot arrays one per stage,
// goat_value four lanes per stage, continuing into egress stages when ingress runs out (as atp).
Status GoatProgram::DeclareResources(ProgramContext& ctx, uint64_t entries) {
  ProgramBuilder& b = ctx.builder;
  const std::vector<ActionParam> slot_params = {{"base", 32}, {"size", 32}, {"fan_in", 8}};
  Result<MatchTable*> nodes =
      b.AddTable(Gress::kIngress, 0,
                 {"goat_node",
                  MatchKind::kExact,
                  {{"job_id", 16}, {"node_id", 16}, {"submodel", 16}},
                  {{"aggregate", slot_params}, {"share", slot_params}, {"not_here", {}}},
                  static_cast<uint32_t>(entries),
                  "not_here",
                  {}});
  if (!nodes.ok()) return nodes.status();
  nodes_ = *nodes;
  Result<MatchTable*> routes = b.AddTable(Gress::kIngress, 0,
                                          {"goat_route",
                                           MatchKind::kExact,
                                           {{"node_id", 16}},
                                           {{"forward", {{"port", 16, ctx.num_ports}}}, {"miss", {}}},
                                           1024,
                                           "miss",
                                           {}});
  if (!routes.ok()) return routes.status();
  routes_ = *routes;
  const int ingress_stages = static_cast<int>(b.report().ingress.size());
  int next = 1;
  auto place = [&](int stage) {
    return stage < ingress_stages ? std::pair{Gress::kIngress, stage}
                                  : std::pair{Gress::kEgress, stage - ingress_stages};
  };
  auto add = [&](const std::string& name, uint8_t width, uint16_t lanes,
                 RegisterArray** out) -> Status {
    const auto [gress, stage] = place(next++);
    Result<RegisterArray*> reg = b.AddRegister(gress, stage, {name, slots_, width, lanes});
    if (!reg.ok()) return reg.status();
    *out = *reg;
    return Status::Ok();
  };
  SWEMU_RETURN_IF_ERROR(add("goat_id", 64, 2, &id_));
  SWEMU_RETURN_IF_ERROR(add("goat_bitmap", 64, 1, &bitmap_));
  SWEMU_RETURN_IF_ERROR(add("goat_count", 8, 1, &count_));
  const auto [gress, stage] = place(next);
  Result<LaneSplitRegister> values = b.AddLaneSplitRegister(
      gress, stage, {"goat_value", slots_, 32, elements_, /*storage_bytes=*/4}, kLanesPerStage);
  if (!values.ok()) {
    return Status::Error(values.message() + " (" + std::to_string(elements_) +
                         " elements at 4 stateful ALUs per stage)");
  }
  values_ = values->reg;
  next += values->range.stages;
  SWEMU_RETURN_IF_ERROR(add("goat_overflow", 1, 1, &overflow_));
  if (next > ingress_stages) {
    b.Note("goat: the slot arrays continue into egress stages 0.." +
           std::to_string(next - ingress_stages - 1) + " (run in the ingress pass, as atp's)");
  }
  b.Note(
      "goat: goat_route forwards fragments by aggregation node id; the op each slot array "
      "applies is decided by the arrays before it and carried in metadata");
  return Status::Ok();
}

uint32_t GoatProgram::ShardKey(const Packet& pkt) const noexcept {
  if (pkt.hdr.app_id != kAppId) return FlowHash(pkt);
  const auto* h = HeaderAt<GoatHeader>(pkt.data + pkt.hdr.app);
  return static_cast<uint32_t>(
      HashPair(GoatSlotKey(h->JobId(), h->Submodel(), h->Fragment()), 0, 0x474f4154));  // GOAT
}

void GoatProgram::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

uint32_t GoatProgram::SlotsInUse() const {
  uint32_t used = 0;
  for (uint32_t i = 0; i < slots_; ++i) {
    Result<uint64_t> key = id_->Read(i, 0);
    if (key.ok() && *key != 0) ++used;
  }
  return used;
}

std::string GoatProgram::StatsJson() const {
  const GoatCounters& c = counters_;
  return CountersJson({
      {"claimed", c.claimed},
      {"aggregated", c.aggregated},
      {"completed", c.completed},
      {"flushed", c.flushed},
      {"duplicates", c.duplicates},
      {"collisions", c.collisions},
      {"late", c.late},
      {"evicted", c.evicted},
      {"released", c.released},
      {"out_of_range", c.out_of_range},
      {"routed", c.routed},
      {"route_miss", c.route_miss},
      {"resend_direct", c.resend_direct},
      {"overflow", c.overflow},
      {"fragments_forwarded", c.fragments_forwarded},
      {"slots_in_use", SlotsInUse()},
      {"slots", slots_},
      {"elements", elements_},
  });
}

Status GoatProgram::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"show goat", "", "GOAT aggregation counters and slots in use", 0, 0,
       [this](CommandArgs) -> Result<std::string> { return "goat: " + StatsJson() + "\n"; },
       MergeStats()}));
  return AddStatsCommand(
      commands, "goat_stats", "GOAT counters as one line of JSON; `reset` zeroes them",
      [this] { return StatsJson(); }, [this] { ResetCounters(); }, MergeStats());
}

SWEMU_REGISTER_PROGRAM("goat", GoatProgram);

}  // namespace swemu
