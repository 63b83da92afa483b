#include "hostlib/common/job_text.h"

#include <algorithm>
#include <sstream>

namespace swemu {

Status ForEachJobKey(std::string_view text, const std::string& what,
                     std::initializer_list<std::string_view> repeatable, const JobKeyFn& apply,
                     std::set<std::string>* seen) {
  std::set<std::string> keys;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  bool section = false;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = what + " line " + std::to_string(number) + ": ";
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first == "[job]") {
      section = true;
      continue;
    }
    if (!section) return Status::Error(where + "expected [job] first");
    std::string eq;
    if (!(words >> eq) || eq != "=") return Status::Error(where + "expected KEY = VALUE");
    const bool repeats = std::find(repeatable.begin(), repeatable.end(), first) != repeatable.end();
    if (!keys.insert(first).second && !repeats) {
      return Status::Error(where + first + " given twice");
    }
    std::string value;
    std::getline(words >> std::ws, value);
    while (!value.empty() &&
           (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) {
      value.pop_back();
    }
    Status applied = apply(first, value);
    if (!applied.ok()) return Status::Error(where + applied.message());
  }
  if (seen != nullptr) *seen = std::move(keys);
  return Status::Ok();
}

}  // namespace swemu
