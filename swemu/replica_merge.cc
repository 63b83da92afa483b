#include "swemu/replica_merge.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <tuple>

#include "pipeline/control/command_table.h"
#include "pipeline/core/drop_reason.h"

namespace swemu {
namespace {

enum class Op { kKeep, kSum, kMax };

// A line cut into text and the numbers between: text.size() == numbers.size() + 1. A number is a
// run of digits that is a word of its own ("port_rx[3]" has one, "ipv4" and "10G" none).
struct NumberedLine {
  std::vector<std::string> text;
  std::vector<uint64_t> numbers;
  std::vector<std::string> digits;   // each number as written ("00" in a MAC address)
  std::vector<std::size_t> offsets;  // where each number starts in the line
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

NumberedLine Split(std::string_view line) {
  NumberedLine out;
  out.text.emplace_back();
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    const bool starts_word = i == 0 || !IsWordChar(line[i - 1]);
    const bool ends_word = j == line.size() || !IsWordChar(line[j]);
    if (j > i && starts_word && ends_word && j - i <= 19) {
      out.numbers.push_back(std::stoull(std::string(line.substr(i, j - i))));
      out.digits.emplace_back(line.substr(i, j - i));
      out.offsets.push_back(i);
      out.text.emplace_back();
      i = j;
    } else {
      const std::size_t end = std::max(j, i + 1);
      out.text.back().append(line.substr(i, end - i));
      i = end;
    }
  }
  return out;
}

// The text around the numbers, with runs of spaces as one: column padding differs by value.
std::vector<std::string> Skeleton(const NumberedLine& line) {
  std::vector<std::string> out;
  for (const std::string& text : line.text) {
    std::string squeezed;
    for (char c : text) {
      if (c != ' ' || squeezed.empty() || squeezed.back() != ' ') squeezed += c;
    }
    out.push_back(squeezed);
  }
  return out;
}

// Reassembles a line with new numbers. A number that changed width moves the spaces before it,
// so a right-aligned column ends where it did (at least one space stays).
std::string Join(const NumberedLine& line, const std::vector<uint64_t>& numbers) {
  std::string out = line.text[0];
  for (std::size_t k = 0; k < numbers.size(); ++k) {
    if (numbers[k] == line.numbers[k]) {
      out += line.digits[k] + line.text[k + 1];
      continue;
    }
    const std::string digits = std::to_string(numbers[k]);
    std::size_t spaces = 0;
    while (spaces < out.size() && out[out.size() - 1 - spaces] == ' ') ++spaces;
    if (spaces > 0) {
      const std::size_t width = spaces + line.digits[k].size();
      const std::size_t keep =
          width > digits.size() ? std::max<std::size_t>(width - digits.size(), 1) : 1;
      out.resize(out.size() - spaces);
      out.append(keep, ' ');
    }
    out += digits + line.text[k + 1];
  }
  return out;
}

using OpFor = std::function<Op(std::size_t k, std::size_t count)>;

// Lines with the same text around their numbers become one line, number k merged by op(k, n).
std::string MergeLine(const std::vector<std::string_view>& lines, const OpFor& op) {
  const NumberedLine first = Split(lines[0]);
  const std::vector<std::string> skeleton = Skeleton(first);
  std::vector<uint64_t> merged = first.numbers;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const NumberedLine other = Split(lines[i]);
    if (Skeleton(other) != skeleton) return std::string(lines[0]);
    for (std::size_t k = 0; k < merged.size(); ++k) {
      const Op how = op(k, merged.size());
      if (how == Op::kSum) merged[k] += other.numbers[k];
      if (how == Op::kMax) merged[k] = std::max(merged[k], other.numbers[k]);
    }
  }
  return Join(first, merged);
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Every answer's lines; empty when the answers do not all have as many lines.
std::vector<std::vector<std::string_view>> LinesOfEach(const std::vector<std::string>& answers) {
  std::vector<std::vector<std::string_view>> lines;
  for (const std::string& answer : answers) lines.push_back(Lines(answer));
  for (const auto& each : lines) {
    if (each.size() != lines[0].size()) return {};
  }
  return lines;
}

// Line k of every answer merged into line k of the result (every answer has as many lines).
std::string MergeByLine(const std::vector<std::string>& answers,
                        const std::function<OpFor(std::size_t line, std::string_view)>& rule) {
  const std::vector<std::vector<std::string_view>> lines = LinesOfEach(answers);
  if (lines.empty()) return answers[0];
  std::string out;
  for (std::size_t l = 0; l < lines[0].size(); ++l) {
    std::vector<std::string_view> row;
    for (const auto& each : lines) row.push_back(each[l]);
    out += MergeLine(row, rule(l, row[0]));
    if (l + 1 < lines[0].size() || answers[0].ends_with('\n')) out += '\n';
  }
  return out;
}

const OpFor kSumAll = [](std::size_t, std::size_t) { return Op::kSum; };

// "port rx_packets rx_bytes tx_packets tx_bytes rate": the port and rate are identities.
const OpFor kPortRow = [](std::size_t k, std::size_t) {
  return k >= 1 && k <= 4 ? Op::kSum : Op::kKeep;
};

// "name: entries/size entries, hits H, misses M"
const OpFor kTableRow = [](std::size_t k, std::size_t) { return k >= 2 ? Op::kSum : Op::kKeep; };

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
  for (const std::string& answer : answers) lines.push_back(Lines(answer));
  return MergeDrops(lines);
}

// Header, port table up to "program:", the program line, "drops (N):", drop lines.
std::string MergeShowStats(const std::vector<std::string>& answers) {
  std::vector<std::string> ports;
  std::vector<std::string_view> program;
  std::vector<std::string_view> total;
  std::vector<std::vector<std::string_view>> drops;
  for (const std::string& answer : answers) {
    const std::vector<std::string_view> lines = Lines(answer);
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
  return std::string(Lines(answers[0])[0]) + "\n" +
         MergeByLine(ports, [](auto, auto) { return kPortRow; }) + MergeLine(program, kSumAll) +
         "\n" + MergeLine(total, kSumAll) + "\n" + MergeDrops(drops);
}

// "port P queue Q: ..." lines: a port's queues live on the lcore that owns it (P % N).
std::string MergeShowQueues(const std::vector<std::string>& answers) {
  std::vector<std::tuple<uint64_t, uint64_t, std::string_view>> rows;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    for (std::string_view line : Lines(answers[i])) {
      const NumberedLine split = Split(line);
      if (split.numbers.size() < 2) continue;
      if (split.numbers[0] % answers.size() == i) {
        rows.emplace_back(split.numbers[0], split.numbers[1], line);
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::string out;
  for (const auto& row : rows) out += std::string(std::get<2>(row)) + "\n";
  return out;
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
  return MergeByLine(answers, [](std::size_t line, std::string_view text) -> OpFor {
    if (line == 0) return kTableRow;
    if (text.ends_with(")") && text.find(" (hits ") != text.npos) {
      return [](std::size_t k, std::size_t n) { return k + 1 == n ? Op::kSum : Op::kKeep; };
    }
    return [](std::size_t, std::size_t) { return Op::kKeep; };
  });
}

// "name[index]= numbers": every number after '=' is a count.
std::string MergeCounterRead(const std::vector<std::string>& answers) {
  return MergeByLine(answers, [](std::size_t, std::string_view text) -> OpFor {
    const NumberedLine split = Split(text);
    const std::size_t eq = text.find('=');
    std::size_t before = 0;  // numbers before the '=' (the index) are identities
    while (before < split.offsets.size() && split.offsets[before] < eq) ++before;
    return [before](std::size_t k, std::size_t) { return k >= before ? Op::kSum : Op::kKeep; };
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

// show pcn: "pcn: ..." (configuration, replica 0's), "port P: ..." lines, then the counters as
// one line of JSON (summed). A port's pending jobs and active threshold live on the lcore that
// owns the port, so its line is the one that names jobs, else replica 0's.
std::string MergeShowPcn(const std::vector<std::string>& answers) {
  std::map<uint64_t, std::string> ports;
  std::vector<std::string_view> counters;
  std::string header;
  for (std::size_t r = 0; r < answers.size(); ++r) {
    std::vector<std::string_view> lines;
    for (std::string_view rest = answers[r]; !rest.empty();) {
      const std::size_t end = rest.find('\n');
      lines.push_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    if (lines.size() < 2) return answers[0];
    if (r == 0) header = std::string(lines.front());
    counters.push_back(lines.back());
    for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
      const std::string_view line = lines[i];
      if (!line.starts_with("port ")) return answers[0];
      const uint64_t port = std::strtoull(std::string(line.substr(5)).c_str(), nullptr, 10);
      auto [it, added] = ports.try_emplace(port, line);
      if (!added && it->second.find(" job ") == std::string::npos &&
          line.find(" job ") != std::string_view::npos) {
        it->second = std::string(line);
      }
    }
  }
  std::string out = header + "\n";
  for (const auto& [port, line] : ports) out += line + "\n";
  return out + MergeLine(counters, [](std::size_t, std::size_t) { return Op::kSum; }) + "\n";
}

}  // namespace

MergeRule MergeRuleFor(std::string_view line) {
  const std::vector<std::string> words = CommandTable::Tokenize(line);
  if (words.empty()) return MergeRule::kNone;
  if (words[0] == "table_dump") return MergeRule::kTableDump;
  if (words[0] == "counter_read") return MergeRule::kCounterRead;
  if (words[0] == "register_read") return MergeRule::kRegisterRead;
  if (words[0] == "atp_stats" && words.size() == 1) return MergeRule::kAtpStats;
  if (words[0] == "pcn_stats" && words.size() == 1) return MergeRule::kPcnStats;
  if (words[0] == "goat_stats" && words.size() == 1) return MergeRule::kGoatStats;
  if (words[0] != "show" || words.size() < 2) return MergeRule::kNone;
  static const std::map<std::string, MergeRule, std::less<>> kShow = {
      {"stats", MergeRule::kShowStats},     {"ports", MergeRule::kShowPorts},
      {"drops", MergeRule::kShowDrops},     {"queues", MergeRule::kShowQueues},
      {"tables", MergeRule::kShowTables},   {"counters", MergeRule::kShowCounters},
      {"runtime", MergeRule::kShowRuntime}, {"atp", MergeRule::kShowAtp},
      {"goat", MergeRule::kGoatStats},     {"pcn", MergeRule::kShowPcn},
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
      return MergeByLine(answers, [](auto, auto) { return kPortRow; });
    case MergeRule::kShowDrops:
      return MergeShowDrops(answers);
    case MergeRule::kShowQueues:
      return MergeShowQueues(answers);
    case MergeRule::kShowTables:
      return MergeByLine(answers, [](auto, auto) { return kTableRow; });
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
    case MergeRule::kShowAtp:
      // "atp: IN_USE/SIZE aggregators in use, E elements", then lines of counters.
      return MergeByLine(answers, [](std::size_t line, std::string_view) -> OpFor {
        if (line != 0) return kSumAll;
        return [](std::size_t k, std::size_t) { return k == 0 ? Op::kSum : Op::kKeep; };
      });
    case MergeRule::kAtpStats: {
      // {"claimed": N, ..., "aggregators_in_use": N, "aggregators": SIZE, "elements": E}
      std::vector<std::string_view> lines(answers.begin(), answers.end());
      return MergeLine(
          lines, [](std::size_t k, std::size_t n) { return k + 2 < n ? Op::kSum : Op::kKeep; });
    }
    case MergeRule::kGoatStats: {
      // [goat: ]{"claimed": N, ..., "slots_in_use": N, "slots": SIZE, "elements": E}: each slot
      // lives on the replica that owns its shard, so the counts add up.
      std::vector<std::string_view> lines(answers.begin(), answers.end());
      return MergeLine(
          lines, [](std::size_t k, std::size_t n) { return k + 2 < n ? Op::kSum : Op::kKeep; });
    }
    case MergeRule::kPcnStats: {
      std::vector<std::string_view> lines(answers.begin(), answers.end());
      return MergeLine(lines, [](std::size_t, std::size_t) { return Op::kSum; });
    }
    case MergeRule::kShowPcn:
      return MergeShowPcn(answers);
  }
  return answers[0];
}

}  // namespace swemu
