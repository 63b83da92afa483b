#pragma once
// A program's typed configuration comes from the [program] section of the switch config as
// key=value text; the program reads each key with a type, range and default, and any key no
// program read is an error (a typo never passes silently).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

class ProgramOptions {
 public:
  ProgramOptions() = default;
  explicit ProgramOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {
    for (const auto& entry : values_) order_.push_back(entry.first);
  }

  void Set(std::string key, std::string value) {
    if (!values_.contains(key)) order_.push_back(key);
    values_[std::move(key)] = std::move(value);
  }
  bool Has(std::string_view key) const { return values_.count(std::string(key)) != 0; }

  Result<uint64_t> GetUint(std::string_view key, uint64_t fallback, uint64_t min = 0,
                           uint64_t max = UINT64_MAX) const;
  Result<bool> GetBool(std::string_view key, bool fallback) const;
  Result<std::string> GetString(std::string_view key, std::string fallback) const;

  // Error naming the first key that no Get* call read.
  Status CheckAllUsed(std::string_view program) const;
  const std::map<std::string, std::string>& values() const { return values_; }
  // The keys in the order they were first set (a file's order: a written config keeps it).
  const std::vector<std::string>& order() const { return order_; }

 private:
  const std::string* Find(std::string_view key) const;
  std::map<std::string, std::string> values_;
  std::vector<std::string> order_;
  mutable std::set<std::string, std::less<>> used_;
};

}  // namespace swemu
