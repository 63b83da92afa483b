#pragma once
// With [dpdk] workers = N a switch runs N replicas, one per lcore, and a command runs on every
// one: its N answers become one answer for the whole switch by the rule the command declares
// beside its handler (CommandSpec::merge). Without a rule the answer is replica 0's, which is
// right for a command that changes state (every replica makes the same change) and for
// configuration (every replica holds the same). A read of state the replicas share out (counters
// each replica holds a part of, cells or ports each owned by one replica) declares a rule built
// from the helpers below; a program declares its own beside each of its commands.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace swemu {

// answers[i] is replica i's answer (N >= 1 answers).
using AnswerMerge = std::function<std::string(const std::vector<std::string>& answers)>;

// What becomes of one number of a line: replica 0's, the sum over replicas, the largest.
enum class NumberOp : uint8_t { kKeep, kSum, kMax };
// The op for number k of the n numbers of a line. A number is a run of digits that is a word of
// its own ("port_rx[3]" has one, "ipv4" and "10G" none).
using LineRule = std::function<NumberOp(std::size_t k, std::size_t n)>;
// The rule of line `line` (0-based) of an answer, whose text (replica 0's) is `text`.
using LinesRule = std::function<LineRule(std::size_t line, std::string_view text)>;

inline NumberOp SumAll(std::size_t, std::size_t) { return NumberOp::kSum; }
inline NumberOp KeepAll(std::size_t, std::size_t) { return NumberOp::kKeep; }
// Every number summed but the last `kept` (configuration written after the counters).
inline LineRule SumAllButLast(std::size_t kept) {
  return [kept](std::size_t k, std::size_t n) {
    return k + kept < n ? NumberOp::kSum : NumberOp::kKeep;
  };
}

// How many numbers `text` holds.
std::size_t CountNumbers(std::string_view text);

// The lines of an answer (a last '\n' ends the last line and starts none).
std::vector<std::string_view> AnswerLines(std::string_view text);

// Every answer's lines; empty when they do not all have as many lines.
std::vector<std::vector<std::string_view>> LinesOfEach(const std::vector<std::string>& answers);

// One line from the replicas' lines, which have the same text around their numbers (runs of
// spaces aside: column padding differs by value); number k merged by rule(k, n). A line of
// another shape gives lines[0].
std::string MergeLine(const std::vector<std::string_view>& lines, const LineRule& rule);

// Answers with as many lines, line l merged by rules(l, text); another shape gives answers[0].
std::string MergeByLine(const std::vector<std::string>& answers, const LinesRule& rules);

// Lines "<prefix><K>..." (K a number: a port, an index) each from the replica that owns K (the
// one at K % N, as the lcore that owns port K), ordered by K, each followed by '\n'. Other lines
// are left out.
std::string OwnedRows(const std::vector<std::string>& answers, std::string_view prefix);

// Rules a command declares (CommandSpec::merge):
// every line merged by MergeByLine with `rules`; all empty answers (a `reset`) give "".
AnswerMerge MergeLines(LinesRule rules);
// every number of every line summed (counters, one replica's part each).
AnswerMerge SumNumbers();
// every line by `rule`, the same for each line.
AnswerMerge MergeEachLine(LineRule rule);

}  // namespace swemu
