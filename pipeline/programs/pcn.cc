// pcn: options, resources and control commands. The per-packet egress stages are in
// pcn_egress.cc; the cells and their update rules in pcn_state.h.
#include "pipeline/programs/pcn.h"

#include "pipeline/control/units.h"
#include "pipeline/program/stats_command.h"
#include "pipeline/tm/tm_config.h"
#include "pipeline/wire/pcn.h"

namespace swemu {
namespace {

// show pcn over several replicas: the configuration line (replica 0's), each "port P:" line from
// the replica that owns port P, where its egress runs (its jobs, its active threshold), and the
// counters summed (each replica counts what its ports' egress saw).
std::string MergeShow(const std::vector<std::string>& answers) {
  std::vector<std::string_view> counters;
  for (const std::string& answer : answers) {
    const std::vector<std::string_view> lines = AnswerLines(answer);
    if (lines.size() < 2) return answers[0];
    counters.push_back(lines.back());
  }
  return std::string(AnswerLines(answers[0]).front()) + "\n" + OwnedRows(answers, "port ") +
         MergeLine(counters, SumAll) + "\n";
}

}  // namespace

Status PcnProgram::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> initial = opt.GetUint("initial_threshold", 40, 1, kTmMaxQueueDepthPkts);
  Result<uint64_t> port = opt.GetUint("udp_port", kPcnDefaultUdpPort, 1, 65535);
  Result<uint64_t> jobs = opt.GetUint("jobs", 4, 1, kMaxJobs);
  Result<uint64_t> timeout = opt.GetUint("timeout_ms", 1000, 1, pcn::kMaxTimeoutMs);
  Result<uint64_t> pending = opt.GetUint("pending_slots", 4096, 1, 1 << 20);
  Result<uint64_t> min_payload = opt.GetUint("burst_min_payload", 512, 1, 65535);
  // 8 = leave STARTs and ACKs where the qos table puts them.
  Result<uint64_t> control_queue = opt.GetUint("control_queue", 7, 0, kQueuesPerPort);
  for (const Status& s : {initial.status(), port.status(), jobs.status(), timeout.status(),
                          pending.status(), min_payload.status(), control_queue.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  tm_ = &ctx.tm;
  initial_.assign(ctx.num_ports, static_cast<uint32_t>(*initial));
  udp_port_ = static_cast<uint16_t>(*port);
  jobs_ = static_cast<uint32_t>(*jobs);
  timeout_ms_ = static_cast<uint32_t>(*timeout);
  burst_min_payload_ = static_cast<uint32_t>(*min_payload);
  control_queue_ = *control_queue == kQueuesPerPort ? -1 : static_cast<int>(*control_queue);
  SWEMU_RETURN_IF_ERROR(l2l3_.Load(ctx));
  SWEMU_RETURN_IF_ERROR(DeclareResources(ctx, static_cast<uint32_t>(*pending)));
  return AddCommands(ctx.commands);
}

// Egress stage 0 holds the scope table, stage 1 the announced bursts, stages 2.. the per-port
// job lanes (4 stateful ALUs per stage, so up to 4 jobs per stage).
Status PcnProgram::DeclareResources(ProgramContext& ctx, uint32_t pending_slots) {
  ProgramBuilder& b = ctx.builder;
  Result<MatchTable*> table = b.AddTable(Gress::kEgress, 0,
                                         {"pcn_job",
                                          MatchKind::kExact,
                                          {{"ps_ip", 32}},
                                          {{"job", {{"slot", 8}}}, {"none", {}}},
                                          256,
                                          "none",
                                          {}});
  if (!table.ok()) return table.status();
  jobs_table_ = *table;
  Result<RegisterArray*> pending =
      b.AddRegister(Gress::kEgress, 1, {"pcn_pending", pending_slots, 64, 1});
  if (!pending.ok()) return pending.status();
  pending_ = *pending;
  Result<LaneSplitRegister> lanes = b.AddLaneSplitRegister(
      Gress::kEgress, 2, {"pcn_port", ctx.num_ports, 47, static_cast<uint16_t>(jobs_)},
      kLanesPerStage);
  if (!lanes.ok()) return lanes.status();
  port_ = lanes->reg;
  b.Note(
      "pcn: the active threshold (lowest live lane, else the port's initial one) and the "
      "comparison with enq_qdepth are stateless; marking is egress's ECN rewrite");
  return Status::Ok();
}

uint32_t PcnProgram::ActiveThreshold(PortId port, uint64_t now_ns) const {
  const uint32_t initial = InitialThreshold(port);
  if (port >= initial_.size()) return initial;
  std::vector<uint64_t> cells;
  for (uint16_t lane = 0; lane < jobs_; ++lane) {
    Result<uint64_t> cell = port_->Read(port, lane);
    if (cell.ok()) cells.push_back(*cell);
  }
  return pcn::ActiveThreshold(cells, initial, pcn::MsOf(now_ns));
}

std::string PcnProgram::StatsJson() const {
  const PcnCounters& c = counters_;
  return CountersJson({
      {"starts", c.starts},
      {"starts_repeated", c.starts_repeated},
      {"starts_ignored", c.starts_ignored},
      {"starts_with_ack", c.starts_with_ack},
      {"acks", c.acks},
      {"bursts_arrived", c.bursts_arrived},
      {"pending_expired", c.pending_expired},
      {"pending_evicted", c.pending_evicted},
      {"timeouts", c.timeouts},
      {"marked_pcn", c.marked_pcn},
      {"marked_initial", c.marked_initial},
  });
}

// Per port with an announced job or a non-default initial threshold: the lanes as the last
// packet left them (a lane past its deadline is shown as such; the next packet clears it).
std::string PcnProgram::Show() const {
  std::string out = "pcn: udp_port " + std::to_string(udp_port_) + ", timeout " +
                    std::to_string(timeout_ms_) + " ms, " + std::to_string(jobs_) +
                    " job lanes per port, burst_min_payload " + std::to_string(burst_min_payload_) +
                    " B\n";
  for (PortId p = 0; p < initial_.size(); ++p) {
    std::string jobs;
    for (uint16_t lane = 0; lane < jobs_; ++lane) {
      Result<uint64_t> cell = port_->Read(p, lane);
      if (!cell.ok()) continue;
      const pcn::Lane l = pcn::Lane::Unpack(*cell);
      if (l.count == 0) continue;
      jobs += " job " + std::to_string(lane) + ": " + std::to_string(l.count) +
              " pending, threshold " + std::to_string(l.threshold) +
              (pcn::Reached(last_ms_, l.deadline) ? " (timed out)" : "") + ";";
    }
    if (jobs.empty() && (p == 0 || initial_[p] == initial_[0])) continue;
    out += "port " + std::to_string(p) + ": initial " + std::to_string(initial_[p]) + ", active " +
           std::to_string(ActiveThreshold(p, uint64_t{last_ms_} * 1'000'000)) +
           (jobs.empty() ? std::string() : "," + jobs) + "\n";
  }
  return out + StatsJson() + "\n";
}

Status PcnProgram::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(
      commands.Add({"show pcn", "", "PCN: announced thresholds per egress port and the counters", 0,
                    0, [this](CommandArgs) -> Result<std::string> { return Show(); }, MergeShow}));
  SWEMU_RETURN_IF_ERROR(AddStatsCommand(
      commands, "pcn_stats", "PCN counters as one line of JSON; `reset` zeroes them",
      [this] { return StatsJson(); }, [this] { counters_ = PcnCounters(); }, SumNumbers()));
  SWEMU_RETURN_IF_ERROR(
      commands.Add({"pcn_initial", "<port|all> <packets>",
                    "the ECN threshold a port marks against when no job announced a lower one", 2,
                    2, [this](CommandArgs args) -> Result<std::string> {
                      const auto ports = static_cast<uint64_t>(initial_.size());
                      std::optional<uint64_t> port;
                      if (args[0] != "all") {
                        Result<uint64_t> p = ParseUint(args[0], 0, ports == 0 ? 0 : ports - 1);
                        if (!p.ok()) return Status::Error("pcn_initial: port: " + p.message());
                        port = *p;
                      }
                      Result<uint64_t> pkts = ParseUint(args[1], 1, kTmMaxQueueDepthPkts);
                      if (!pkts.ok())
                        return Status::Error("pcn_initial: packets: " + pkts.message());
                      for (uint64_t p = 0; p < ports; ++p) {
                        if (!port || *port == p) initial_[p] = static_cast<uint32_t>(*pkts);
                      }
                      return std::string();
                    }}));
  return commands.Add({"pcn_timeout", "<ms>",
                       "how long an announced burst may take to arrive before the port's "
                       "initial threshold returns",
                       1, 1, [this](CommandArgs args) -> Result<std::string> {
                         Result<uint64_t> ms = ParseUint(args[0], 1, pcn::kMaxTimeoutMs);
                         if (!ms.ok()) return Status::Error("pcn_timeout: " + ms.message());
                         timeout_ms_ = static_cast<uint32_t>(*ms);
                         return std::string();
                       }});
}

SWEMU_REGISTER_PROGRAM("pcn", PcnProgram);

}  // namespace swemu
