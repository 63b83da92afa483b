#include "swemu/replica_merge.h"

#include <algorithm>
#include <map>

#include "pipeline/control/answer_merge.h"
#include "pipeline/control/command_table.h"
#include "pipeline/core/drop_reason.h"

namespace swemu {
namespace {

// "port rx_packets rx_bytes tx_packets tx_bytes rate": the port and rate are identities.
NumberOp PortRow(std::size_t k, std::size_t) {
  return k >= 1 && k <= 4 ? NumberOp::kSum : NumberOp::kKeep;
}

// "name: entries/size entries, hits H, misses M"
NumberOp TableRow(std::size_t k, std::size_t) { return k >= 2 ? NumberOp::kSum : NumberOp::kKeep; }

// "  reason count" lines of every answer, summed per reason, in DropReason order.
std::string MergeDrops(const std::vector<std::vector<std::string_view>>& answers) {
  std::map<std::string, uint64_t, std::less<>> counts;
  for (const auto& lines : answers) {
    for (std::string_view line : lines) {
      const std::size_t space = line.rfind(' ');
      const std::size_t name = line.find_first_not_of(' ');
      if (space == std::string_view::npos || name >= space || line.find('(') != line.npos) {
        continue;
      }
      counts[std::string(line.substr(name, space - name))] +=
          std::stoull(std::string(line.substr(space + 1)));
    }
  }
  std::string out;
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    auto it = counts.find(DropReasonName(static_cast<DropReason>(i)));
    if (it == counts.end()) continue;
    out += "  " + it->first + " " + std::to_string(it->second) + "\n";
  }
  return out.empty() ? "  (no drops)\n" : out;
}

std::string MergeShowDrops(const std::vector<std::string>& answers) {
  std::vector<std::vector<std::string_view>> lines;
  for (const std::string& answer : answers) lines.push_back(AnswerLines(answer));
  return MergeDrops(lines);
}

// Header, port table up to "program:", the program line, "drops (N):", drop lines.
std::string MergeShowStats(const std::vector<std::string>& answers) {
  std::vector<std::string> ports;
  std::vector<std::string_view> program;
  std::vector<std::string_view> total;
  std::vector<std::vector<std::string_view>> drops;
  for (const std::string& answer : answers) {
    const std::vector<std::string_view> lines = AnswerLines(answer);
    auto at = std::find_if(lines.begin(), lines.end(),
                           [](std::string_view l) { return l.starts_with("program:"); });
    if (at == lines.begin() || lines.end() - at < 2) return answers[0];
    std::string table;
    for (auto l = lines.begin() + 1; l != at; ++l) table += std::string(*l) + "\n";
    ports.push_back(table);
    program.push_back(*at);
    total.push_back(*(at + 1));
    drops.emplace_back(at + 2, lines.end());
  }
  return std::string(AnswerLines(answers[0])[0]) + "\n" +
         MergeByLine(ports, [](auto, auto) { return PortRow; }) + MergeLine(program, SumAll) +
         "\n" + MergeLine(total, SumAll) + "\n" + MergeDrops(drops);
}

// "reg[i]=v,..." lines: cell i from replica i % N.
std::string MergeRegisterRead(const std::vector<std::string>& answers) {
  const std::vector<std::vector<std::string_view>> lines = LinesOfEach(answers);
  if (lines.empty()) return answers[0];
  std::string out;
  for (std::size_t l = 0; l < lines[0].size(); ++l) {
    const std::string_view line = lines[0][l];
    const std::size_t close = line.find("]=");
    const std::size_t open = line.rfind('[', close);
    std::size_t owner = 0;
    if (close != line.npos && open != line.npos && close > open + 1) {
      owner = std::stoull(std::string(line.substr(open + 1, close - open - 1))) % answers.size();
    }
    out += std::string(lines[owner][l]);
    if (l + 1 < lines[0].size()) out += '\n';
  }
  return out;
}

std::string MergeTableDump(const std::vector<std::string>& answers) {
  return MergeByLine(answers, [](std::size_t line, std::string_view text) -> LineRule {
    if (line == 0) return TableRow;
    if (text.ends_with(")") && text.find(" (hits ") != text.npos) {
      return [](std::size_t k, std::size_t n) {
        return k + 1 == n ? NumberOp::kSum : NumberOp::kKeep;
      };
    }
    return KeepAll;
  });
}

// "name[index]= numbers": every number after '=' is a count.
std::string MergeCounterRead(const std::vector<std::string>& answers) {
  return MergeByLine(answers, [](std::size_t, std::string_view text) -> LineRule {
    // numbers before the '=' (the index) are identities
    const std::size_t before = CountNumbers(text.substr(0, text.find('=')));
    return [before](std::size_t k, std::size_t) {
      return k >= before ? NumberOp::kSum : NumberOp::kKeep;
    };
  });
}

std::string MergeRuntime(const std::vector<std::string>& answers) {
  std::string out;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    out += "lcore " + std::to_string(i) + ":\n" + answers[i];
    if (!answers[i].ends_with('\n')) out += '\n';
  }
  return out;
}

}  // namespace

MergeRule MergeRuleFor(std::string_view line) {
  const std::vector<std::string> words = CommandTable::Tokenize(line);
  if (words.empty()) return MergeRule::kNone;
  if (words[0] == "table_dump") return MergeRule::kTableDump;
  if (words[0] == "counter_read") return MergeRule::kCounterRead;
  if (words[0] == "register_read") return MergeRule::kRegisterRead;
  if (words[0] != "show" || words.size() < 2) return MergeRule::kNone;
  static const std::map<std::string, MergeRule, std::less<>> kShow = {
      {"stats", MergeRule::kShowStats},     {"ports", MergeRule::kShowPorts},
      {"drops", MergeRule::kShowDrops},     {"queues", MergeRule::kShowQueues},
      {"tables", MergeRule::kShowTables},   {"counters", MergeRule::kShowCounters},
      {"runtime", MergeRule::kShowRuntime},
  };
  auto it = kShow.find(words[1]);
  return it == kShow.end() ? MergeRule::kNone : it->second;
}

std::string MergeAnswers(MergeRule rule, const std::vector<std::string>& answers) {
  if (answers.size() == 1) return answers[0];
  switch (rule) {
    case MergeRule::kNone:
      return answers[0];
    case MergeRule::kShowStats:
      return MergeShowStats(answers);
    case MergeRule::kShowPorts:
      return MergeByLine(answers, [](auto, auto) { return PortRow; });
    case MergeRule::kShowDrops:
      return MergeShowDrops(answers);
    case MergeRule::kShowQueues:
      return OwnedRows(answers, "port ");  // a port's queues live on its owner's replica
    case MergeRule::kShowTables:
      return MergeByLine(answers, [](auto, auto) { return TableRow; });
    case MergeRule::kShowCounters: {
      std::string merged = MergeCountersJson(answers);
      return merged.empty() ? answers[0] : merged;
    }
    case MergeRule::kShowRuntime:
      return MergeRuntime(answers);
    case MergeRule::kTableDump:
      return MergeTableDump(answers);
    case MergeRule::kCounterRead:
      return MergeCounterRead(answers);
    case MergeRule::kRegisterRead:
      return MergeRegisterRead(answers);
  }
  return answers[0];
}

std::string MergeAnswers(const CommandTable& commands, std::string_view line,
                         const std::vector<std::string>& answers) {
  const MergeRule rule = MergeRuleFor(line);
  if (rule != MergeRule::kNone || answers.size() == 1) return MergeAnswers(rule, answers);
  const AnswerMerge* declared = commands.MergeOf(line);
  return declared != nullptr ? (*declared)(answers) : answers[0];
}

}  // namespace swemu
