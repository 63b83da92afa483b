#include "pipeline/program/program_options.h"

#include "pipeline/control/units.h"

namespace swemu {

const std::string* ProgramOptions::Find(std::string_view key) const {
  used_.emplace(key);
  auto it = values_.find(std::string(key));
  return it == values_.end() ? nullptr : &it->second;
}

Result<uint64_t> ProgramOptions::GetUint(std::string_view key, uint64_t fallback, uint64_t min,
                                         uint64_t max) const {
  const std::string* text = Find(key);
  if (text == nullptr) return fallback;
  Result<uint64_t> value = ParseUint(*text, min, max);
  if (!value.ok()) return Status::Error("program." + std::string(key) + ": " + value.message());
  return value;
}

Result<bool> ProgramOptions::GetBool(std::string_view key, bool fallback) const {
  const std::string* text = Find(key);
  if (text == nullptr) return fallback;
  Result<bool> value = ParseBool(*text);
  if (!value.ok()) return Status::Error("program." + std::string(key) + ": " + value.message());
  return value;
}

Result<std::string> ProgramOptions::GetString(std::string_view key, std::string fallback) const {
  const std::string* text = Find(key);
  return text == nullptr ? fallback : *text;
}

Status ProgramOptions::CheckAllUsed(std::string_view program) const {
  for (const auto& [key, value] : values_) {
    if (used_.count(key) == 0) {
      return Status::Error("program." + key + ": unknown option for program " +
                           std::string(program));
    }
  }
  return Status::Ok();
}

}  // namespace swemu
