#pragma once
// The text form of the job files the switch side publishes for the hosts (GOAT's goat.job,
// PLink's plink.job): a `[job]` line first, then `KEY = VALUE` lines; '#' starts a comment, blank
// lines are skipped. Every key appears once except the repeatable ones (a host per line).
#include <functional>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>

#include "pipeline/core/status.h"

namespace swemu {

// Calls apply(key, value) for every key line in order (value trimmed of surrounding blanks).
// Errors are "<what> line N: <problem>", the problem being the tokenizer's ("expected [job]
// first", "expected KEY = VALUE", "KEY given twice") or apply's message. `seen` (optional)
// receives every key given.
using JobKeyFn = std::function<Status(const std::string& key, const std::string& value)>;
Status ForEachJobKey(std::string_view text, const std::string& what,
                     std::initializer_list<std::string_view> repeatable, const JobKeyFn& apply,
                     std::set<std::string>* seen = nullptr);

}  // namespace swemu
