#pragma once
// Real time on several lcores ([dpdk] workers = N): a command that reads counters runs on every
// replica of the switch, and their answers become one answer for the whole switch by a rule per
// command. Counters each replica holds a part of are summed (port rx where ingress ran, tx and a
// port's queues on the lcore that owns the port, whose peers hold zeros); the configuration
// (rates, thresholds, table entries) is the same on every replica and is replica 0's; register
// cell i is the value of replica i % N, the one that runs ingress for shard key i.
#include <string>
#include <string_view>
#include <vector>

namespace swemu {

enum class MergeRule {
  kNone,  // not merged: runs on replica 0, then on the others; the answer is replica 0's
  kShowStats,
  kShowPorts,
  kShowDrops,
  kShowQueues,
  kShowTables,
  kShowCounters,  // JSON
  kShowRuntime,   // one section per lcore
  kTableDump,
  kCounterRead,
  kRegisterRead,
  kShowAtp,    // the atp program's counters: summed; aggregators in use summed (each has one owner)
  kAtpStats,   // the same as one line of JSON; the configuration (aggregators, elements) kept
  kPcnStats,   // the pcn program's counters, one line of JSON: all summed (each replica counts
               // the packets of the egress ports it owns)
  kShowPcn,   // show pcn: configuration kept, each port's line from its owner, counters summed
  kGoatStats,  // goat_stats and show goat: counters and slots in use summed (each slot has one
               // owner), the configuration (slots, elements) kept
};

// The rule for a command line; kNone for commands that change state or are not merged.
MergeRule MergeRuleFor(std::string_view line);

// answers[i] is replica i's successful answer (answers.size() = N >= 1). When the answers do not
// have the shape the rule expects, the result is replica 0's answer.
std::string MergeAnswers(MergeRule rule, const std::vector<std::string>& answers);

// A JSON document of counters: numbers under the same path summed, except identities ("port",
// "queue", "entries": replica 0's) and maxima ("max_depth_*"); empty when a document is not JSON.
std::string MergeCountersJson(const std::vector<std::string>& documents);

}  // namespace swemu
