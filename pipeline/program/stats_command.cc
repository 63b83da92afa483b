#include "pipeline/program/stats_command.h"

namespace swemu {

std::string CountersJson(std::initializer_list<std::pair<const char*, uint64_t>> fields) {
  std::string out = "{";
  for (const auto& [name, value] : fields) {
    if (out.size() > 1) out += ", ";
    out += std::string("\"") + name + "\": " + std::to_string(value);
  }
  return out + "}";
}

Status AddStatsCommand(CommandTable& commands, const std::string& name, const std::string& help,
                       std::function<std::string()> json, std::function<void()> reset,
                       AnswerMerge merge) {
  return commands.Add({name, "[reset]", help, 0, 1,
                       [name, json, reset](CommandArgs args) -> Result<std::string> {
                         if (args.empty()) return json();
                         if (args[0] != "reset") {
                           return Status::Error(name + ": unknown argument '" + args[0] +
                                                "' (expected reset)");
                         }
                         reset();
                         return std::string();
                       },
                       std::move(merge)});
}

}  // namespace swemu
