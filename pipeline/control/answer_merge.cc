#include "pipeline/control/answer_merge.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace swemu {
namespace {

// A line cut into text and the numbers between: text.size() == numbers.size() + 1.
struct NumberedLine {
  std::vector<std::string> text;
  std::vector<uint64_t> numbers;
  std::vector<std::string> digits;  // each number as written ("00" in a MAC address)
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

// The number right after `prefix` at the start of the line, if there is one.
bool KeyOf(std::string_view line, std::string_view prefix, uint64_t* key) {
  if (!line.starts_with(prefix)) return false;
  std::size_t end = prefix.size();
  while (end < line.size() && end - prefix.size() < 19 &&
         std::isdigit(static_cast<unsigned char>(line[end]))) {
    ++end;
  }
  if (end == prefix.size()) return false;
  *key = std::stoull(std::string(line.substr(prefix.size(), end - prefix.size())));
  return true;
}

}  // namespace

std::size_t CountNumbers(std::string_view text) { return Split(text).numbers.size(); }

std::vector<std::string_view> AnswerLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string MergeLine(const std::vector<std::string_view>& lines, const LineRule& rule) {
  const NumberedLine first = Split(lines[0]);
  const std::vector<std::string> skeleton = Skeleton(first);
  std::vector<uint64_t> merged = first.numbers;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const NumberedLine other = Split(lines[i]);
    if (Skeleton(other) != skeleton) return std::string(lines[0]);
    for (std::size_t k = 0; k < merged.size(); ++k) {
      const NumberOp how = rule(k, merged.size());
      if (how == NumberOp::kSum) merged[k] += other.numbers[k];
      if (how == NumberOp::kMax) merged[k] = std::max(merged[k], other.numbers[k]);
    }
  }
  return Join(first, merged);
}

std::vector<std::vector<std::string_view>> LinesOfEach(const std::vector<std::string>& answers) {
  std::vector<std::vector<std::string_view>> lines;
  for (const std::string& answer : answers) lines.push_back(AnswerLines(answer));
  for (const auto& each : lines) {
    if (each.size() != lines[0].size()) return {};
  }
  return lines;
}

std::string MergeByLine(const std::vector<std::string>& answers, const LinesRule& rules) {
  const std::vector<std::vector<std::string_view>> lines = LinesOfEach(answers);
  if (lines.empty() || lines[0].empty()) return answers[0];
  std::string out;
  for (std::size_t l = 0; l < lines[0].size(); ++l) {
    std::vector<std::string_view> row;
    for (const auto& each : lines) row.push_back(each[l]);
    out += MergeLine(row, rules(l, row[0]));
    if (l + 1 < lines[0].size() || answers[0].ends_with('\n')) out += '\n';
  }
  return out;
}

std::string OwnedRows(const std::vector<std::string>& answers, std::string_view prefix) {
  std::vector<std::tuple<uint64_t, std::size_t, std::string_view>> rows;  // key, order, line
  for (std::size_t r = 0; r < answers.size(); ++r) {
    for (std::string_view line : AnswerLines(answers[r])) {
      uint64_t key = 0;
      if (KeyOf(line, prefix, &key) && key % answers.size() == r) {
        rows.emplace_back(key, rows.size(), line);
      }
    }
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const auto& row : rows) out += std::string(std::get<2>(row)) + "\n";
  return out;
}

AnswerMerge MergeLines(LinesRule rules) {
  return [rules = std::move(rules)](const std::vector<std::string>& answers) {
    const bool all_empty =
        std::all_of(answers.begin(), answers.end(), [](const std::string& a) { return a.empty(); });
    return all_empty ? std::string() : MergeByLine(answers, rules);
  };
}

AnswerMerge SumNumbers() { return MergeEachLine(SumAll); }

AnswerMerge MergeEachLine(LineRule rule) {
  return MergeLines([rule = std::move(rule)](std::size_t, std::string_view) { return rule; });
}

}  // namespace swemu
