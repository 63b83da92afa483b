#pragma once
// The counters command every aggregating program offers (`atp_stats`, `pcn_stats`,
// `goat_stats`): the counters as one line of JSON, `{"name": value, ...}` in the given order, and
// `reset` to zero them. The program declares how several replicas' answers merge (usually
// SumNumbers(), pipeline/control/answer_merge.h), which the one-line form keeps simple.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>

#include "pipeline/control/command_table.h"

namespace swemu {

std::string CountersJson(std::initializer_list<std::pair<const char*, uint64_t>> fields);

// Adds "<name> [reset]": without an argument json(); `reset` calls reset(); anything else is an
// error naming it. `merge` is the command's rule over several replicas (CommandSpec::merge).
Status AddStatsCommand(CommandTable& commands, const std::string& name, const std::string& help,
                       std::function<std::string()> json, std::function<void()> reset,
                       AnswerMerge merge);

}  // namespace swemu
