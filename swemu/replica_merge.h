#pragma once
// Real time on several lcores ([dpdk] workers = N): a command that reads counters runs on every
// replica of the switch, and their answers become one answer for the whole switch. The switch's
// own reads are merged here by a rule per command: counters each replica holds a part of are
// summed (port rx where ingress ran, tx and a port's queues on the lcore that owns the port,
// whose peers hold zeros); the configuration (rates, thresholds, table entries) is the same on
// every replica and is replica 0's; register cell i is the value of replica i % N, the one that
// runs ingress for shard key i. A program's commands declare their own rule beside their handler
// (CommandSpec::merge, pipeline/control/answer_merge.h), so nothing here knows a program.
#include <string>
#include <string_view>
#include <vector>

namespace swemu {

class CommandTable;

enum class MergeRule {
  kNone,  // not one of the switch's reads: the command's declared merge, else replica 0's answer
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
};

// The rule for a command line of the switch's own; kNone for every other line (changes, a
// program's commands).
MergeRule MergeRuleFor(std::string_view line);

// answers[i] is replica i's successful answer (answers.size() = N >= 1). When the answers do not
// have the shape the rule expects, the result is replica 0's answer.
std::string MergeAnswers(MergeRule rule, const std::vector<std::string>& answers);

// The answer for the whole switch to `line`: by MergeRuleFor(line), else by the merge the line's
// command declares in `commands` (CommandTable::MergeOf), else replica 0's. A declared merge
// reads only its answers, so it may run on the thread that serves the control socket.
std::string MergeAnswers(const CommandTable& commands, std::string_view line,
                         const std::vector<std::string>& answers);

// A JSON document of counters: numbers under the same path summed, except identities ("port",
// "queue", "entries": replica 0's) and maxima ("max_depth_*"); empty when a document is not JSON.
std::string MergeCountersJson(const std::vector<std::string>& documents);

}  // namespace swemu
