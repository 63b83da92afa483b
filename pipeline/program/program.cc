#include "pipeline/program/program.h"

#include <map>

namespace swemu {
namespace {

std::map<std::string, ProgramFactory, std::less<>>& Registry() {
  static std::map<std::string, ProgramFactory, std::less<>> registry;
  return registry;
}

}  // namespace

bool RegisterProgram(std::string name, ProgramFactory factory) {
  return Registry().emplace(std::move(name), std::move(factory)).second;
}

Result<std::unique_ptr<Program>> MakeProgram(std::string_view name) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    std::string known;
    for (const std::string& n : ProgramNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::Error("unknown program \"" + std::string(name) + "\" (known: " + known + ")");
  }
  return it->second();
}

std::vector<std::string> ProgramNames() {
  std::vector<std::string> names;
  for (const auto& [name, unused] : Registry()) names.push_back(name);
  return names;
}

}  // namespace swemu
