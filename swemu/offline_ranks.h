#pragma once
// An offline run under mpirun (docs/cli.md, "Ranks"): what RunOffline does differently on each
// rank. Every function here is called by every rank at the same point (they are collective).
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline/engine/pcap_fixlen.h"
#include "pipeline/engine/rank_exchange.h"
#include "pipeline/engine/telemetry.h"
#include "swemu/command_line.h"
#include "swemu/offline.h"

namespace swemu {

// One partition per rank unless --partitions asks for more (as many as the ranks at least);
// more ranks than switches is refused.
Status PartitionsForRanks(const RankExchange& ranks, CommandLine& cmd);
// Whether this rank runs switch `sw` of the plan (always without ranks).
bool RunsHere(const RunPlan& plan, const std::string& sw, const RankExchange* ranks);
// With ranks, a step's status is every rank's (AgreeStatus); alone, its own.
Status Agreed(RankExchange* ranks, const Status& mine);
FixlenCounts SumOverRanks(RankExchange* ranks, const FixlenCounts& mine);

// --telemetry under ranks: each rank samples the switches it runs and keeps their rows; at the
// end rank 0 writes every rank's, ordered as one process writes them (by instant, then switch).
class RankTelemetry {
 public:
  void Add(TimeNs now, uint32_t sw, const std::string& name, std::span<const QueueSnapshot> queues);
  // Collective; `writer` is rank 0's (null on the others).
  void WriteAll(RankExchange& ranks, TelemetryWriter* writer);

 private:
  std::vector<std::tuple<TimeNs, uint32_t, std::string>> blocks_;  // instant, switch, rows
};

}  // namespace swemu
