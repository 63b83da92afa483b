#include "swemu/offline_ranks.h"

#include <algorithm>

namespace swemu {

Status PartitionsForRanks(const RankExchange& ranks, CommandLine& cmd) {
  const std::string np = "mpirun -np " + std::to_string(ranks.ranks());
  if (cmd.partitions != 0 && cmd.partitions < ranks.ranks()) {
    return Status::Error("--partitions " + std::to_string(cmd.partitions) + ": fewer than the " +
                         std::to_string(ranks.ranks()) + " ranks of " + np);
  }
  if (cmd.partitions == 0) {
    Result<RunPlan> whole = MakeRunPlan(cmd);
    if (!whole.ok()) return whole.status();
    const std::size_t switches = whole->switches.size();
    if (ranks.ranks() > switches) {
      return Status::Error(np + ": more ranks than the " + std::to_string(switches) +
                           (switches == 1 ? " switch" : " switches") + " to run");
    }
    cmd.partitions = ranks.ranks();
  }
  return Status::Ok();
}

bool RunsHere(const RunPlan& plan, const std::string& sw, const RankExchange* ranks) {
  if (ranks == nullptr) return true;
  for (std::size_t i = 0; i < plan.switches.size(); ++i) {
    if (plan.switches[i].config.name == sw) {
      return plan.partition_of[i] % ranks->ranks() == ranks->rank();
    }
  }
  return false;
}

Status Agreed(RankExchange* ranks, const Status& mine) {
  return ranks == nullptr ? mine : AgreeStatus(*ranks, mine);
}

FixlenCounts SumOverRanks(RankExchange* ranks, const FixlenCounts& mine) {
  if (ranks == nullptr) return mine;
  uint64_t words[] = {mine.frames, mine.cut_short, mine.fixed, mine.left_short};
  SumOverRanks(*ranks, words);
  return {words[0], words[1], words[2], words[3]};
}

void RankTelemetry::Add(TimeNs now, uint32_t sw, const std::string& name,
                        std::span<const QueueSnapshot> queues) {
  std::string rows;
  AppendTelemetryRows(now, name, queues, rows);
  if (!rows.empty()) blocks_.emplace_back(now, sw, std::move(rows));
}

void RankTelemetry::WriteAll(RankExchange& ranks, TelemetryWriter* writer) {
  std::vector<std::vector<uint8_t>> to_rank(ranks.ranks());
  WireWriter out(to_rank[0]);
  for (const auto& [now, sw, rows] : blocks_) {
    out.Value(now);
    out.Value(sw);
    out.Text(rows);
  }
  blocks_.clear();
  const std::vector<std::vector<uint8_t>> from_rank = ranks.Exchange(to_rank);
  if (writer == nullptr) return;
  std::vector<std::tuple<TimeNs, uint32_t, std::string>> all;
  for (const std::vector<uint8_t>& bytes : from_rank) {
    WireReader in(bytes);
    while (in.ok() && !in.done()) {
      const auto now = in.Value<TimeNs>();
      const auto sw = in.Value<uint32_t>();
      all.emplace_back(now, sw, in.Text());
    }
  }
  // An instant's switches come from several ranks; within one (instant, switch) there is one block.
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& block : all) writer->WriteRows(std::get<2>(block));
}

}  // namespace swemu
