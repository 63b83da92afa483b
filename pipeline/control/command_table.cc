#include "pipeline/control/command_table.h"

#include <sstream>

#include "pipeline/core/text_file.h"

namespace swemu {

Status CommandTable::Add(CommandSpec spec) {
  if (spec.name.empty() || !spec.handler) return Status::Error("command needs a name and handler");
  if (spec.min_args > spec.max_args) return Status::Error("command " + spec.name + ": bad arity");
  auto [it, inserted] = commands_.emplace(spec.name, std::move(spec));
  if (!inserted) return Status::Error("command " + it->first + " is defined twice");
  return Status::Ok();
}

std::vector<std::string> CommandTable::Tokenize(std::string_view line) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
           line[i] != '\n' && line[i] != '#') {
      ++i;
    }
    tokens.emplace_back(line.substr(start, i - start));
  }
  return tokens;
}

const CommandSpec* CommandTable::Find(const std::vector<std::string>& tokens,
                                      std::size_t* consumed) const {
  if (tokens.size() >= 2) {
    auto it = commands_.find(tokens[0] + " " + tokens[1]);
    if (it != commands_.end()) {
      *consumed = 2;
      return &it->second;
    }
  }
  *consumed = 1;
  auto it = commands_.find(tokens[0]);
  return it == commands_.end() ? nullptr : &it->second;
}

const AnswerMerge* CommandTable::MergeOf(std::string_view line) const {
  const std::vector<std::string> tokens = Tokenize(line);
  std::size_t consumed = 0;
  const CommandSpec* spec = tokens.empty() ? nullptr : Find(tokens, &consumed);
  return spec != nullptr && spec->merge ? &spec->merge : nullptr;
}

Result<std::string> CommandTable::Execute(std::string_view line) const {
  std::vector<std::string> tokens = Tokenize(line);
  if (tokens.empty()) return std::string();
  std::size_t consumed = 1;
  const CommandSpec* spec = Find(tokens, &consumed);
  if (spec == nullptr) {
    bool is_prefix = false;
    for (const auto& [name, unused] : commands_) {
      if (name.rfind(tokens[0] + " ", 0) == 0) is_prefix = true;
    }
    if (is_prefix && tokens.size() == 1) {
      return Status::Error(tokens[0] + ": missing subcommand (see help)");
    }
    std::string shown = is_prefix ? tokens[0] + " " + tokens[1] : tokens[0];
    return Status::Error("unknown command: " + shown);
  }
  CommandArgs args(tokens.data() + consumed, tokens.size() - consumed);
  if (args.size() < spec->min_args || args.size() > spec->max_args) {
    return Status::Error(spec->name + ": wrong number of arguments; usage: " + spec->name + " " +
                         spec->usage);
  }
  Result<std::string> result = spec->handler(args);
  if (!result.ok()) return Status::Error(spec->name + ": " + result.message());
  return result;
}

Status CommandTable::RunScript(const std::string& path, std::string* output) const {
  Result<std::string> text = ReadTextFile(path, "command script");
  if (!text.ok()) return text.status();
  return RunText(*text, path, output);
}

Status CommandTable::RunText(std::string_view text, const std::string& origin,
                             std::string* output) const {
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    Result<std::string> result = Execute(line);
    if (!result.ok()) {
      return Status::Error(origin + ":" + std::to_string(line_no) + ": " + result.message());
    }
    if (output != nullptr && !result->empty()) {
      *output += *result;
      if (result->back() != '\n') *output += '\n';
    }
  }
  return Status::Ok();
}

std::string CommandTable::Help() const {
  std::ostringstream out;
  for (const auto& [name, spec] : commands_) {
    out << name;
    if (!spec.usage.empty()) out << ' ' << spec.usage;
    out << "\n    " << spec.help << '\n';
  }
  return out.str();
}

std::vector<std::string> CommandTable::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, unused] : commands_) names.push_back(name);
  return names;
}

}  // namespace swemu
