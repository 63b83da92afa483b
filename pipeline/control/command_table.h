#pragma once
// One command table serves every front end: startup scripts (configs/*.cli), the live control
// socket and the C++ API used by tests and hosts. Names follow BMv2's simple_switch_CLI.
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/control/answer_merge.h"
#include "pipeline/core/status.h"

namespace swemu {

using CommandArgs = std::span<const std::string>;
// A handler validates every argument before it changes anything, so a bad command changes nothing.
using CommandHandler = std::function<Result<std::string>(CommandArgs args)>;

struct CommandSpec {
  std::string name;   // one word ("table_add") or two ("show stats")
  std::string usage;  // argument synopsis, e.g. "<table> <action> <key...> => <param...>"
  std::string help;   // one line
  std::size_t min_args = 0;
  std::size_t max_args = 0;  // kUnbounded for variadic commands
  CommandHandler handler;
  // With several replicas of the switch, how their answers become one (answer_merge.h); none:
  // replica 0's answer (changes, configuration).
  AnswerMerge merge = {};
};

class CommandTable {
 public:
  static constexpr std::size_t kUnbounded = static_cast<std::size_t>(-1);

  Status Add(CommandSpec spec);
  bool Has(std::string_view name) const { return commands_.count(std::string(name)) != 0; }

  // Runs one command line; '#' starts a comment; blank lines give an empty result.
  Result<std::string> Execute(std::string_view line) const;
  // Runs every line of a script; stops at the first error, reported as "FILE:LINE: message".
  // Output of successful commands is appended to *output when given.
  Status RunScript(const std::string& path, std::string* output = nullptr) const;
  // The same over script text held in memory; errors read "ORIGIN:LINE: message".
  Status RunText(std::string_view text, const std::string& origin,
                 std::string* output = nullptr) const;

  // The merge rule the command of `line` declares; null for none or an unknown command.
  const AnswerMerge* MergeOf(std::string_view line) const;

  std::string Help() const;
  std::vector<std::string> Names() const;

  static std::vector<std::string> Tokenize(std::string_view line);

 private:
  // The command `tokens` name (two words before one); *consumed: how many words name it.
  const CommandSpec* Find(const std::vector<std::string>& tokens, std::size_t* consumed) const;

  std::map<std::string, CommandSpec, std::less<>> commands_;
};

}  // namespace swemu
