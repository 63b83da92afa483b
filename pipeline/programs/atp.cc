// atp: configuration, resources, control commands, shard key and egress. The per-packet
// ingress stages are in atp_ingress.cc.
#include "pipeline/programs/atp.h"

#include "pipeline/parser/header_ops.h"
#include "pipeline/program/stats_command.h"

namespace swemu {
namespace {

// Ethernet + IPv4 + UDP + the ATP header: what precedes the elements in an untagged frame.
constexpr uint32_t kBytesBeforeElements = kAtpHeaderOffset + kAtpHeaderLen;

NumberOp FirstSummed(std::size_t k, std::size_t) {
  return k == 0 ? NumberOp::kSum : NumberOp::kKeep;
}

// show atp over several replicas: each aggregator has one owner (the shard key is its index), so
// the counters and the aggregators in use add up; the array size and the elements are kept.
// "atp: IN_USE/SIZE aggregators in use, E elements", then lines of counters.
AnswerMerge MergeShow() {
  return MergeLines([](std::size_t line, std::string_view) -> LineRule {
    return line == 0 ? LineRule(FirstSummed) : LineRule(SumAll);
  });
}

}  // namespace

Status AtpProgram::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> port = opt.GetUint("udp_port", kAtpDefaultUdpPort, 1, 65535);
  Result<uint64_t> aggregators = opt.GetUint("aggregators", kAtpDefaultAggregators, 1, 1 << 22);
  Result<uint64_t> elements = opt.GetUint("elements", kAtpDefaultElements, 1, 65535);
  Result<uint64_t> jobs = opt.GetUint("jobs", 1024, 1, 65535);
  Result<bool> ecn = opt.GetBool("ecn", true);
  for (const Status& s :
       {port.status(), aggregators.status(), elements.status(), jobs.status(), ecn.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  parse_depth_ = ctx.parser.config().parse_depth;
  // The elements are aggregated from the parsed header vector, so all of them must be parsed.
  const uint32_t max_elements =
      parse_depth_ > kBytesBeforeElements ? (parse_depth_ - kBytesBeforeElements) / 4 : 0;
  if (*elements > max_elements) {
    return Status::Error("elements " + std::to_string(*elements) + ": Eth+IPv4+UDP+ATP (" +
                         std::to_string(kBytesBeforeElements) + " B) + 4 B per element exceed " +
                         "the parse depth of " + std::to_string(parse_depth_) + " B; at most " +
                         std::to_string(max_elements) + " elements fit");
  }
  aggregators_ = static_cast<uint32_t>(*aggregators);
  elements_ = static_cast<uint16_t>(*elements);
  ecn_ = *ecn;
  SWEMU_RETURN_IF_ERROR(l2l3_.Load(ctx));
  SWEMU_RETURN_IF_ERROR(ctx.parser.AddUdpApp(static_cast<uint16_t>(*port), kAtpHeaderLen, kAppId));
  SWEMU_RETURN_IF_ERROR(DeclareResources(ctx, *jobs));
  return AddCommands(ctx.commands);
}

// Stage 0 holds the job table beside l2l3's stage-0 tables; the aggregator arrays follow, one
// per stage, and atp_value four lanes per stage, continuing into the egress stages when the
// ingress stages run out. atp_value is one lane-split array: an aggregator's lanes are one
// contiguous block, so a packet's update touches 4 adjacent cache lines (64 elements), not 16
// arrays in 16 places.
Status AtpProgram::DeclareResources(ProgramContext& ctx, uint64_t jobs) {
  ProgramBuilder& b = ctx.builder;
  const ActionSpec grp_param{"", {{"mcast_grp", 16}}};
  Result<MatchTable*> table = b.AddTable(
      Gress::kIngress, 0,
      {"atp_job",
       MatchKind::kExact,
       {{"job_id", 16}},
       {{"aggregate", grp_param.params}, {"forward_only", grp_param.params}, {"drop", {}}},
       static_cast<uint32_t>(jobs),
       "drop",
       {}});
  if (!table.ok()) return table.status();
  jobs_ = *table;
  const int ingress_stages = static_cast<int>(b.report().ingress.size());
  int next = 1;  // stage index over ingress then egress
  auto add = [&](const std::string& name, uint8_t width, uint16_t lanes,
                 RegisterArray** out) -> Status {
    const bool in = next < ingress_stages;
    const int stage = in ? next : next - ingress_stages;
    ++next;
    Result<RegisterArray*> reg = b.AddRegister(in ? Gress::kIngress : Gress::kEgress, stage,
                                               {name, aggregators_, width, lanes});
    if (!reg.ok()) {
      return Status::Error(reg.message() + " (" + std::to_string(elements_) + " elements need " +
                           std::to_string(next) + " stages of 4 stateful ALUs after stage 0)");
    }
    *out = *reg;
    return Status::Ok();
  };
  SWEMU_RETURN_IF_ERROR(add("atp_id", 64, 1, &id_));
  SWEMU_RETURN_IF_ERROR(add("atp_bitmap", 32, 1, &bitmap_));
  SWEMU_RETURN_IF_ERROR(add("atp_count", 8, 1, &count_));
  const bool values_in_ingress = next < ingress_stages;
  Result<LaneSplitRegister> values = b.AddLaneSplitRegister(
      values_in_ingress ? Gress::kIngress : Gress::kEgress,
      values_in_ingress ? next : next - ingress_stages,
      {"atp_value", aggregators_, 32, elements_, /*storage_bytes=*/4}, kLanesPerStage);
  if (!values.ok()) {
    return Status::Error(values.message() + " (" + std::to_string(elements_) +
                         " elements at 4 stateful ALUs per stage)");
  }
  values_ = values->reg;
  // The first lane past the ingress stages, if the value lanes continue into egress.
  int first_egress_lane = -1;
  if (!values_in_ingress) {
    first_egress_lane = 0;
  } else if (values->range.last_gress == Gress::kEgress) {
    first_egress_lane = (ingress_stages - next) * static_cast<int>(kLanesPerStage);
  }
  next += values->range.stages;
  SWEMU_RETURN_IF_ERROR(add("atp_overflow", 1, 1, &overflow_));
  arrays_ = {id_, bitmap_, count_, values_, overflow_};
  if (next > ingress_stages) {
    b.Note("atp: " +
           (first_egress_lane < 0 ? std::string("atp_overflow")
                                  : "atp_value lanes " + std::to_string(first_egress_lane) + ".." +
                                        std::to_string(elements_ - 1) + " and atp_overflow") +
           " sit in egress stages 0.." + std::to_string(next - ingress_stages - 1) +
           ", ATP's second pipeline (paper section 6, double pipeline). On Tofino those stages run "
           "after the TM; swemu runs them in the ingress pass, before the TM, so a consumed "
           "gradient never takes queue space");
  }
  b.Note(
      "atp: per-packet op of each aggregator array (claim/add/read/clear) is decided by the "
      "arrays before it and carried in metadata; validation and hashing are stateless");
  return Status::Ok();
}

uint32_t AtpProgram::ShardKey(const Packet& pkt) const noexcept {
  if (pkt.hdr.app_id != kAppId) return FlowHash(pkt);
  const auto* h = HeaderAt<AtpHeader>(pkt.data + pkt.hdr.app);
  return AtpAggregatorIndex(h->JobId(), h->Seq(), aggregators_);
}

void AtpProgram::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

void AtpProgram::Egress(Packet& pkt) noexcept {
  l2l3_.Egress(pkt);  // IP CE on ECT packets
  if (ecn_ && pkt.meta.congested && pkt.hdr.app_id == kAppId) {
    auto* h = HeaderAt<AtpHeader>(pkt.data + pkt.hdr.app);
    if (!h->Has(kAtpFlagEcn)) {
      h->Set(kAtpFlagEcn);
      pkt.hdr.dirty |= kDirtyL4;
    }
  }
}

uint32_t AtpProgram::AggregatorsInUse() const {
  uint32_t used = 0;
  for (uint32_t i = 0; i < aggregators_; ++i) {
    Result<uint64_t> id = id_->Read(i);
    if (id.ok() && *id != 0) ++used;
  }
  return used;
}

std::string AtpProgram::StatsJson() const {
  const AtpCounters& c = counters_;
  return CountersJson({
      {"claimed", c.claimed},
      {"aggregated", c.aggregated},
      {"completed", c.completed},
      {"collisions", c.collisions},
      {"duplicates", c.duplicates},
      {"param_dealloc", c.param_dealloc},
      {"resend_dealloc", c.resend_dealloc},
      {"resend_forwarded", c.resend_forwarded},
      {"overflow", c.overflow},
      {"forwarded_plain", c.forwarded_plain},
      {"aggregators_in_use", AggregatorsInUse()},
      {"aggregators", aggregators_},
      {"elements", elements_},
  });
}

Status AtpProgram::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add(
      {"show atp", "", "ATP aggregation counters and aggregators in use", 0, 0,
       [this](CommandArgs) -> Result<std::string> {
         const AtpCounters& c = counters_;
         return "atp: " + std::to_string(AggregatorsInUse()) + "/" + std::to_string(aggregators_) +
                " aggregators in use, " + std::to_string(elements_) + " elements\n" + "claimed " +
                std::to_string(c.claimed) + ", aggregated " + std::to_string(c.aggregated) +
                ", completed " + std::to_string(c.completed) + ", collisions " +
                std::to_string(c.collisions) + ", duplicates " + std::to_string(c.duplicates) +
                "\nparam_dealloc " + std::to_string(c.param_dealloc) + ", resend_dealloc " +
                std::to_string(c.resend_dealloc) + ", resend_forwarded " +
                std::to_string(c.resend_forwarded) + ", overflow " + std::to_string(c.overflow) +
                ", forwarded_plain " + std::to_string(c.forwarded_plain) + "\n";
       },
       MergeShow()}));
  // {"claimed": N, ..., "aggregators_in_use": N, "aggregators": SIZE, "elements": E}
  return AddStatsCommand(
      commands, "atp_stats", "ATP counters as one line of JSON; `reset` zeroes them",
      [this] { return StatsJson(); }, [this] { ResetCounters(); }, MergeEachLine(SumAllButLast(2)));
}

SWEMU_REGISTER_PROGRAM("atp", AtpProgram);

}  // namespace swemu
